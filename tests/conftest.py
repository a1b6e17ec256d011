"""Shared helpers for benchkill's tests."""

from __future__ import annotations

import pytest
import tvm
from tvm import relax

import benchkill


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
