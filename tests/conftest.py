"""Shared helpers for benchkill's tests."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

import pytest
import tvm
from hypothesis import settings
from tvm import relax

import benchkill

# hypothesis writes nothing into the checkout: no example database, and its other storage
# (a cache of the constants in local modules, written even without a database) goes to a
# temporary directory unless HYPOTHESIS_STORAGE_DIRECTORY says where.
if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
    _storage = tempfile.mkdtemp(prefix="benchkill-tests-hypothesis-")
    atexit.register(shutil.rmtree, _storage, ignore_errors=True)
    os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = _storage
settings.register_profile("benchkill", database=None, deadline=None)
settings.load_profile("benchkill")


def run_both(mod: tvm.IRModule, **options) -> tuple[tvm.IRModule, tvm.IRModule]:
    """The output of TVM's C++ pass and of benchkill's pass (with ``options``) on ``mod``."""
    return relax.transform.KillAfterLastUse()(mod), benchkill.KillAfterLastUse(**options)(mod)


def _assert_same_as_tvm(mod: tvm.IRModule) -> tvm.IRModule:
    """benchkill's default output on ``mod`` is structurally equal to TVM's; returns it."""
    expected, actual = run_both(mod)
    tvm.ir.assert_structural_equal(actual, expected, map_free_vars=True)
    return actual


@pytest.fixture(scope="session")
def llvm_target() -> tvm.target.Target:
    return tvm.target.Target("llvm")


@pytest.fixture
def same_as_tvm():
    """Check that benchkill's default output on a module equals TVM's; returns the output."""
    return _assert_same_as_tvm
