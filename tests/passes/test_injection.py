"""The test hooks: a deterministically slower pass, a pass that misses kills."""

from __future__ import annotations

import pytest
import tvm
from tvm import relax

from benchkill.errors import BenchkillError
from benchkill.hooks import MISSED_KILLS_ENV, SLOWDOWN_ENV
from benchkill.inputs.families import FAMILIES, generate
from benchkill.passes import KillAfterLastUse, injection
from benchkill.passes.kill_after_last_use import kill_function
from benchkill.relax import ops
from tests.passes.test_differential import MODULES


def kills_of(mod: tvm.IRModule) -> list[str]:
    """Names of the variables killed, in program order (If branches included)."""
    names = []

    def visit(expr):
        if isinstance(expr, relax.Call) and isinstance(expr.op, tvm.ir.Op):
            if expr.op.name in ops.KILLS:
                names.append(expr.args[0].name)

    for func in mod.functions.values():
        if isinstance(func, relax.Function):
            relax.analysis.post_order_visit(func, visit)
    return names


@pytest.fixture
def no_hooks(monkeypatch):
    monkeypatch.delenv(SLOWDOWN_ENV, raising=False)
    monkeypatch.delenv(MISSED_KILLS_ENV, raising=False)
    return monkeypatch


def test_off_when_unset(no_hooks):
    assert injection.from_env() is None
    assert KillAfterLastUse().injection is None  # the pass then tests one None per function


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_missed_kills_drop_every_kth_kill_and_nothing_else(no_hooks, family):
    mod = generate(family, 60, 0)
    full = kills_of(KillAfterLastUse()(mod))
    no_hooks.setenv(MISSED_KILLS_ENV, "0.25")
    fewer = kills_of(KillAfterLastUse()(mod))
    # every 4th kill in program order is gone, the others stay in order
    assert fewer == [k for i, k in enumerate(full) if (i + 1) % 4 != 0]
    assert len(full) - len(fewer) == len(full) // 4 > 0
    assert kills_of(KillAfterLastUse()(mod)) == fewer  # deterministic
    no_hooks.setenv(MISSED_KILLS_ENV, "1")
    assert kills_of(KillAfterLastUse()(mod)) == []


def test_slowdown_runs_the_pass_on_a_proportional_part_of_the_function(no_hooks):
    mod = generate("mixed", 300, 0)  # dataflow blocks, match_cast, If, tuples
    func = mod["main"]
    n = injection.count_top_level(func)
    seen = []

    def run(f):
        seen.append(injection.count_top_level(f))
        return kill_function(f)

    injection.slow_down(func, 0.1, run)
    assert seen == [round(0.1 * n)]
    seen.clear()
    injection.slow_down(func, 2.25, run)
    assert seen == [n, n, round(0.25 * n)]
    # the output of a slowed pass is the pass's output
    reference = KillAfterLastUse()(mod)
    no_hooks.setenv(SLOWDOWN_ENV, "0.5")
    slowed = KillAfterLastUse()
    assert slowed.injection == injection.Injection(slowdown=0.5)
    tvm.ir.assert_structural_equal(slowed(mod), reference, map_free_vars=True)


def test_prefix_function_keeps_block_kinds_and_the_pass_runs_on_it():
    func = MODULES["dataflow"]["main"]  # a dataflow block of 3 bindings, then 1 binding
    whole = injection.prefix_function(func, 4)
    assert [type(b) for b in whole.body.blocks] == [type(b) for b in func.body.blocks]
    assert [len(b.bindings) for b in whole.body.blocks] == [3, 1]
    part = injection.prefix_function(func, 2)
    assert [(type(b), len(b.bindings)) for b in part.body.blocks] == [(relax.DataflowBlock, 2)]
    kill_function(part)
    assert injection.prefix_function(func, 0) is None


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        (SLOWDOWN_ENV, "fast", "is not a number"),
        (SLOWDOWN_ENV, "-1", "must be > 0"),
        (MISSED_KILLS_ENV, "1.5", r"must be in \(0, 1\]"),
        (MISSED_KILLS_ENV, "nan", "must be in"),
    ],
)
def test_bad_values_are_one_line_errors(no_hooks, name, value, message):
    no_hooks.setenv(name, value)
    with pytest.raises(BenchkillError, match=message):
        KillAfterLastUse()
