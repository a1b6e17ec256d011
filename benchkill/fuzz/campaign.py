"""Fuzzing campaigns (``benchkill fuzz``): N drawn lowered modules checked against the
properties (:func:`benchkill.fuzz.properties.check_example`), then optionally M buildable
programs run on the VM in child processes
(:func:`benchkill.fuzz.buildable.check_vm_equivalence_in_child`).

hypothesis is a test dependency of benchkill: the ``fuzz`` package needs it, the rest of
the package does not.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from hypothesis import HealthCheck, given, seed, settings
from hypothesis.configuration import set_hypothesis_home_dir

from benchkill.errors import check_int
from benchkill.execution.child import work_dir
from benchkill.fuzz.buildable import buildable_modules, check_vm_equivalence_in_child
from benchkill.fuzz.lowered import lowered_modules
from benchkill.fuzz.properties import FuzzMismatch, check_example


@dataclass(frozen=True)
class CampaignResult:
    """What ``benchkill fuzz`` ran and found."""

    examples: int  # structural examples run (shrinking included)
    buildable: int  # buildable examples built and run
    seed: int
    seconds: float
    failure: str | None  # the property's message for the minimal failing example
    reproducer: str | None  # TVMScript of the minimal failing module (and its inputs)

    @property
    def ok(self) -> bool:
        return self.failure is None


def run_campaign(
    examples: int,
    seed_value: int = 0,
    max_statements: int = 30,
    buildable: int = 0,
    check=None,
    **options: bool,
) -> CampaignResult:
    """Check :func:`check_example` on ``examples`` drawn lowered modules, then
    :func:`check_vm_equivalence_in_child` on ``buildable`` drawn high-level programs.

    hypothesis runs without a database and writes nothing into the working directory
    (:func:`_storage_outside_cwd`), seeded by ``seed_value``; on a failure it shrinks
    the example, and the result holds the minimal one as TVMScript.  ``check`` replaces
    :func:`check_example` (a property of your own that raises :class:`FuzzMismatch`);
    ``options`` are those of :func:`lowered_modules` (:data:`KNOWN_FAILURES`).
    """
    check = check_example if check is None else check
    check_int(examples, "examples")
    check_int(buildable, "buildable", low=0)
    check_int(max_statements, "max_statements")
    start = time.perf_counter()
    counts, failure, reproducer = [0, 0], None, None

    def structural(mod):
        counts[0] += 1
        check(mod)

    def vm(arg):
        counts[1] += 1
        mod, inputs = arg
        check_vm_equivalence_in_child(mod, inputs)

    with _storage_outside_cwd():
        failure, reproducer = _hypothesis_run(
            lowered_modules(max_statements=max_statements, **options),
            structural,
            examples,
            seed_value,
            lambda mod: mod.script(),
        )
        if failure is None and buildable:
            failure, reproducer = _hypothesis_run(
                buildable_modules(),
                vm,
                buildable,
                seed_value,
                lambda arg: f"{arg[0].script()}\n# inputs: {[a.tolist() for a in arg[1]]}",
            )
    return CampaignResult(
        counts[0], counts[1], seed_value, time.perf_counter() - start, failure, reproducer
    )


@contextmanager
def _storage_outside_cwd() -> Iterator[None]:
    """Even without a database, hypothesis caches what it reads of local modules in
    ``./.hypothesis``: send its storage to a temporary directory for the campaign, unless
    ``HYPOTHESIS_STORAGE_DIRECTORY`` says where it goes."""
    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        yield
        return
    with work_dir("benchkill-fuzzdb-") as storage:  # removed by the next run if killed
        set_hypothesis_home_dir(str(storage))
        try:
            yield
        finally:
            set_hypothesis_home_dir(None)


def _hypothesis_run(strategy, check, examples, seed_value, describe):
    """Run ``check`` on ``examples`` draws of ``strategy``; (message, reproducer) of the
    minimal failing example, or (None, None)."""
    last = {}

    @seed(seed_value)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
        report_multiple_bugs=False,
    )
    @given(strategy)
    def run(example):
        try:
            check(example)
        except FuzzMismatch as exc:
            last["message"], last["reproducer"] = str(exc), describe(example)
            raise

    try:
        run()
    except FuzzMismatch:
        return last["message"], last["reproducer"]
    return None, None
