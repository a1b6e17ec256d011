"""The pass leaves no cyclic garbage and reads its test hook once, not per call.

Everything the pass builds must be freed by reference counting: cyclic garbage would be
collected inside the timed call, at the first allocation after the pass re-enables the
collector (one such collection has been measured at about a fifth of the pass's time).
"""

from __future__ import annotations

import gc

import pytest

import benchkill
from benchkill.errors import BenchkillError
from benchkill.hooks import SLOWDOWN_ENV
from benchkill.inputs.families import generate

from .test_differential import MODULES

INPUTS = {
    **{family: (family, 60) for family in ("chain", "planned", "shape_heap", "control", "mixed")},
    "model": ("model", 2),
}
MODES = {
    "default": {},
    "beyond": {"tvm_compatible": False},
    "legacy": {"exclude_null_value": False},
}


def _module(name):
    if name in INPUTS:
        return generate(*INPUTS[name])
    return MODULES[name]  # dataflow, symbolic match_cast: TVM's canonicalization path


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("name", [*INPUTS, "dataflow", "symbolic_match_cast", "nested_if"])
def test_pass_leaves_no_cyclic_garbage(name, mode):
    mod = _module(name)
    kill = benchkill.KillAfterLastUse(**MODES[mode])
    kill(mod)  # warm caches (operator handles, kill makers)
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        out = kill(mod)
        assert out is not None
        del out
        assert gc.collect() == 0
    finally:
        if was_enabled:
            gc.enable()


def test_no_collection_inside_the_pass_finds_garbage():
    mod = generate("mixed", 300)
    kill = benchkill.KillAfterLastUse()
    kill(mod)
    collected = []

    def record(phase, info):
        if phase == "stop":
            collected.append(info["collected"])

    gc.collect()
    gc.callbacks.append(record)
    try:
        for _ in range(3):
            kill(mod)
    finally:
        gc.callbacks.remove(record)
    assert not any(collected), collected


def test_slowdown_hook_is_read_when_the_pass_is_made(monkeypatch):
    mod = generate("chain", 10)
    monkeypatch.delenv(SLOWDOWN_ENV, raising=False)
    kill = benchkill.KillAfterLastUse()
    monkeypatch.setenv(SLOWDOWN_ENV, "not a number")
    kill(mod)  # the environment is not read again
    with pytest.raises(BenchkillError, match=SLOWDOWN_ENV):
        benchkill.KillAfterLastUse()
    monkeypatch.setenv(SLOWDOWN_ENV, "0.5")
    slowed = benchkill.KillAfterLastUse()
    tvm_out = kill(mod)
    import tvm

    tvm.ir.assert_structural_equal(slowed(mod), tvm_out, map_free_vars=True)
