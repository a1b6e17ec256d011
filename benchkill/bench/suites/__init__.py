"""Benchmark suites that ``benchkill run`` drives.

A suite is a module with ``NAME``, ``cases(quick: bool) -> list[CaseSpec]`` and
``run_case(spec: CaseSpec) -> list[Record]`` (:mod:`benchkill.bench.model`).  This
module imports only :mod:`benchkill.errors` and :mod:`benchkill.vocabulary`; a suite is
imported when it runs.
"""

from __future__ import annotations

from importlib import import_module
from types import ModuleType

from benchkill.errors import BenchkillError
from benchkill.vocabulary import SUITES as NAMES

#: suite name (:data:`benchkill.vocabulary.SUITES`) -> module that implements it
SUITES = {name: f"benchkill.bench.suites.{name}_suite" for name in NAMES}


def load_suite(name: str) -> ModuleType:
    """The module of suite ``name``; a BenchkillError for an unknown name."""
    if name not in SUITES:
        raise BenchkillError(f"unknown suite {name!r}; expected one of {', '.join(SUITES)}")
    return import_module(SUITES[name])
