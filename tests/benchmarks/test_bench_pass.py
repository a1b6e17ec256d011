"""pytest-benchmark timings of KillAfterLastUse: benchkill's pass against TVM's C++ pass.

Not part of the default test run (pyproject's addopts ``--ignore`` this directory); a
path given on the command line is collected all the same, so run them with

    python -m pytest tests/benchmarks --benchmark-only --benchmark-autosave
    python -m pytest tests/benchmarks --benchmark-only --benchmark-compare
        --benchmark-compare-fail=median:10%     (one line: fails on a 10% slower median)

Each module is a group (``chain-3000`` ..., ``model-300`` for the real decoders of the
``model`` family, the IR TVM's default pipeline gives the kill pass), so the tables of a run
and of ``--benchmark-compare`` show the two implementations on the same module side by side.
Every timed output adds kills and is checked against the other implementation's output
on the same module (benchkill's against TVM's, TVM's against benchkill's).

``test_pass_beside_tvm`` times benchkill's pass with TVM's pass and the floor (the FFI
work no exact Python pass can skip: ``benchkill.bench.suites.pass_suite.floor_work``) run
once each before each round (in pytest-benchmark's untimed ``setup``, with the same clock)
and keeps their times in ``extra_info["tvm_seconds"]`` and ``extra_info["floor_seconds"]``:
``benchkill compare`` of two such files (saved with ``--benchmark-save-data``, so the rounds
are kept) judges TVM / benchkill (``speedup_vs_tvm``) and benchkill / floor
(``time_over_floor``, lower better) round by round, which the machine's changes of speed
move far less than a time (README "pytest-benchmark": on a noisy day either ratio
caught a 25% slowdown where the other missed some cases; neither gave a false alarm).

No test leaves a module alive for the next (:func:`_module`): while a module is alive TVM's
pass takes longer on the others.  When this file cached TVM's output of the last case, the
30,000-binding output of ``test_kill_after_last_use`` made TVM's pass twice as slow on the
first 3,000-binding case of ``test_pass_beside_tvm`` that followed it, and each case's
output slowed the next one (README "pytest-benchmark", "A module left alive slows TVM's
pass").  ``test_pass_beside_tvm`` still comes first.
"""

from __future__ import annotations

import time

import pytest
import tvm
from tvm import relax

import benchkill
from benchkill.bench.suites.pass_suite import floor_work
from benchkill.inputs.families import generate, ops_for_bindings
from benchkill.relax.counting import count_bindings

FAMILIES = ("chain", "mixed")
SIZES = (3_000, 30_000)
#: Sizes of the ``model`` family (:mod:`benchkill.inputs.models`: real decoders lowered by
#: TVM's default pipeline up to its kill step, 330 and 3,014 bindings), as the asv suite's.
MODEL_SIZES = (300, 3_000)
SEED = 0
#: (family, bindings) of every test, ids ``<bindings>-<family>`` (the ids of the files
#: saved before the model cases, so ``--benchmark-compare`` still pairs them).  The model
#: cases come last, so the generated cases run after what they ran after before.
CASES = [pytest.param(f, b, id=f"{b}-{f}") for b in SIZES for f in FAMILIES] + [
    pytest.param("model", b, id=f"{b}-model") for b in MODEL_SIZES
]
#: Timed calls per test after one warm-up call (a 30k-binding module takes seconds).
ROUNDS = 5
#: Rounds of the ratio: ``benchkill compare``'s rank test needs about 10 a side to reach
#: its default alpha (0.002) at all.
SPEEDUP_ROUNDS = 12

PASSES = {
    "benchkill": benchkill.KillAfterLastUse,
    "tvm": relax.transform.KillAfterLastUse,
}


def _module(family: str, bindings: int) -> tvm.IRModule:
    """The case's module, built anew and kept by no cache: what one test builds is freed
    when it ends.  A module left alive slows TVM's pass on the next ones: with the model
    cases run first and their two decoders kept (by the cache the family had until
    e2dc6fd), TVM's pass took 54-76 ms a round on chain 3k against 47-52 without them, and
    ``speedup_vs_tvm`` read 2.71-2.77 instead of 2.03 (README "pytest-benchmark")."""
    return generate(family, ops_for_bindings(family, bindings), SEED)


def _check(out: tvm.IRModule, mod: tvm.IRModule, impl: str = "benchkill") -> None:
    """``out``, ``impl``'s output on ``mod``, has kills ``mod`` lacks and equals the other
    implementation's output (TVM's output is checked against benchkill's: never against
    itself)."""
    from benchkill.cli.cmd_apply import count_kills

    added = sum(count_kills(out).values()) - sum(count_kills(mod).values())
    assert added > 0, f"{impl}'s output has no more kills than its input"
    other = "tvm" if impl == "benchkill" else "benchkill"
    expected = PASSES[other]()(mod)
    tvm.ir.assert_structural_equal(out, expected, map_free_vars=True)


@pytest.mark.benchmark
@pytest.mark.parametrize(("family", "bindings"), CASES)
def test_pass_beside_tvm(benchmark, family: str, bindings: int) -> None:
    mod = _module(family, bindings)
    ours, theirs = benchkill.KillAfterLastUse(), relax.transform.KillAfterLastUse()
    floor = floor_work(mod)
    assert floor is not None, "benchkill's sweep hands this module to the fallback"
    clock = time.perf_counter  # pytest-benchmark's default timer
    tvm_seconds: list[float] = []
    floor_seconds: list[float] = []

    def run_tvm_and_floor_then_time_benchkill():
        start = clock()
        theirs(mod)
        middle = clock()
        floor.run()
        tvm_seconds.append(middle - start)
        floor_seconds.append(clock() - middle)
        return (mod,), {}

    benchmark.group = f"beside-tvm-{family}-{bindings}"
    out = benchmark.pedantic(
        ours,
        setup=run_tvm_and_floor_then_time_benchkill,
        rounds=SPEEDUP_ROUNDS,
        iterations=1,
        warmup_rounds=1,
    )
    # the setup ran once before the warm-up round and once before each timed round
    benchmark.extra_info.update(
        family=family,
        bindings=count_bindings(mod),
        seed=SEED,
        tvm_seconds=tvm_seconds[1:],
        floor_seconds=floor_seconds[1:],
    )
    _check(out, mod)


@pytest.mark.benchmark
@pytest.mark.parametrize(("family", "bindings"), CASES)
@pytest.mark.parametrize("impl", sorted(PASSES))
def test_kill_after_last_use(benchmark, family: str, bindings: int, impl: str) -> None:
    mod = _module(family, bindings)
    kill = PASSES[impl]()
    benchmark.group = f"{family}-{bindings}"
    benchmark.extra_info.update(family=family, bindings=count_bindings(mod), seed=SEED)
    out = benchmark.pedantic(kill, args=(mod,), rounds=ROUNDS, iterations=1, warmup_rounds=1)
    _check(out, mod, impl)
