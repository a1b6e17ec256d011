"""``benchkill``'s public names: stable objects, never shadowed by a submodule."""

from __future__ import annotations

import importlib
import subprocess
import sys
import types
from pathlib import Path

import pytest

import benchkill

PACKAGE = Path(benchkill.__file__).parent
EXPORTED = [name for name in benchkill.__all__ if name != "__version__"]


def _module_names() -> set[str]:
    return {p.stem for p in PACKAGE.rglob("*.py")} | {
        p.name for p in PACKAGE.rglob("*") if p.is_dir() and p.name != "__pycache__"
    }


def test_no_exported_name_equals_a_module_name():
    assert not set(EXPORTED) & _module_names()


@pytest.mark.parametrize("name", EXPORTED)
def test_name_gives_the_same_non_module_object_every_time(name):
    first = getattr(benchkill, name)
    module = importlib.import_module(benchkill._EXPORTS[name])
    assert not isinstance(first, types.ModuleType)
    assert getattr(benchkill, name) is first
    assert getattr(module, name) is first
    namespace: dict = {}
    exec(f"from benchkill import {name}", namespace)
    assert namespace[name] is first


def test_generate_is_callable_after_its_module_was_imported():
    """The bug of the flat layout: a lazily imported submodule shadowed the function."""
    code = (
        "import benchkill, benchkill.inputs.families\n"
        "from benchkill import generate\n"
        "print(type(benchkill.generate).__name__, benchkill.generate('chain', 3) is not None)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["function", "True"]


def test_import_benchkill_imports_no_tvm():
    code = "import sys, benchkill; print('tvm' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        benchkill.nope  # noqa: B018
