"""One options object for measure_vm and measure_vm_variants; the old keywords still work
for one release, with a DeprecationWarning."""

from __future__ import annotations

import dataclasses

import pytest

import benchkill
from benchkill.errors import BenchkillError
from benchkill.execution.vm_measure import measure_vm, measure_vm_variants
from benchkill.execution.vm_options import OPTION_NAMES, VMOptions, merge_options


def test_the_options_are_the_eight_old_keywords():
    assert OPTION_NAMES == (
        "exec_mode", "memory_cfg", "repeat", "peak_repeat", "func", "timeline", "rekill",
        "timeout",
    )  # fmt: skip
    assert benchkill.VMOptions is VMOptions


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"exec_mode": "jit"}, "exec_mode must be one of bytecode, compiled"),
        ({"memory_cfg": "arena"}, "memory_cfg must be one of pooled, naive"),
        ({"repeat": -1}, "repeat must be an integer >= 0"),
        ({"peak_repeat": 0}, "peak_repeat must be a positive integer"),
        ({"repeat": True}, "repeat must be"),
        ({"func": ""}, "func must be a function name"),
        ({"timeout": 0}, "timeout must be a positive number"),
        ({"timeout": float("nan")}, "timeout must be a positive number"),
    ],
)
def test_bad_options_are_refused_when_made(change, message):
    with pytest.raises(BenchkillError, match=message):
        VMOptions(**change)


def test_old_keywords_warn_and_override_the_options():
    base = VMOptions(memory_cfg="naive", repeat=2)
    with pytest.warns(DeprecationWarning, match=r"measure_vm\(exec_mode=\.\.\.\) is deprecated"):
        merged = merge_options(base, {"exec_mode": "compiled"}, "measure_vm")
    assert merged == dataclasses.replace(base, exec_mode="compiled")
    assert merge_options(None, {}, "measure_vm") == VMOptions()
    with pytest.raises(TypeError, match="unexpected keyword argument 'peak'"):
        merge_options(None, {"peak": 3}, "measure_vm")


def test_measure_vm_and_its_variants_take_the_old_keywords_for_one_release():
    from tvm import relax

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((4,), "float32"))
    with bb.function("main", [x]):
        bb.emit_func_output(x)
    mod = bb.get()
    with pytest.warns(DeprecationWarning), pytest.raises(BenchkillError, match="'jit'"):
        measure_vm(mod, [], exec_mode="jit")
    with pytest.warns(DeprecationWarning), pytest.raises(BenchkillError, match="'x'"):
        measure_vm_variants(mod, [], [None], memory_cfg="x")
    with pytest.raises(TypeError, match="unexpected keyword argument 'repeats'"):
        measure_vm(mod, [], repeats=3)
