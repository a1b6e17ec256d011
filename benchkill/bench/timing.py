"""Side-by-side timing in one process: interleaved runs, warm-up, an injectable clock.

Running implementations A, B, C as ``A B C A B C ...`` instead of ``A A A B B B ...``
spreads slow drifts of a shared machine (other jobs, thermal state) evenly over all of
them, so their ratio per round is meaningful.  The clock is a parameter so tests can
drive the loop with a fake one; nothing here asserts or interprets wall-clock times.
"""

from __future__ import annotations

import gc
import time
import tracemalloc
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from benchkill.errors import BenchkillError, check_int

Clock = Callable[[], float]


@dataclass(frozen=True)
class Interleaved:
    """Raw timings of several implementations measured round by round.

    ``samples[name][i]`` and ``samples[other][i]`` come from the same round ``i``;
    ``warmup[name]`` holds the untimed-for-statistics first runs; ``outputs[name]`` is
    the result of the last warm-up run (kept for correctness checks), or None.
    """

    samples: dict[str, tuple[float, ...]]
    warmup: dict[str, tuple[float, ...]]
    outputs: dict[str, Any]
    #: per timed round, the time by ``cpu_clock`` (CPU time of this process), if given
    cpu_samples: dict[str, tuple[float, ...]] | None = None


def _timed(fn: Callable[[], Any], clock: Clock) -> tuple[Any, float]:
    start = clock()
    result = fn()
    return result, clock() - start


def _timed_both(fn: Callable[[], Any], clock: Clock, cpu_clock: Clock) -> tuple[Any, float, float]:
    start, cpu_start = clock(), cpu_clock()
    result = fn()
    return result, clock() - start, cpu_clock() - cpu_start


def interleave(
    functions: Mapping[str, Callable[[], Any]],
    repeats: int | Callable[[dict[str, tuple[float, ...]]], int],
    warmup: int = 1,
    clock: Clock = time.perf_counter,
    keep_outputs: bool = True,
    cpu_clock: Clock | None = None,
) -> Interleaved:
    """Run every function ``warmup`` times, then ``repeats`` interleaved rounds.

    With ``cpu_clock`` (e.g. ``time.process_time``) each timed round is also measured
    in CPU time, which other jobs on a shared machine disturb far less than wall time.

    ``repeats`` may be a function of the warm-up timings (e.g. to fit a time budget).
    Results of timed rounds are dropped at once so two outputs of a large module never
    coexist; the last warm-up result of each function is kept when ``keep_outputs``.
    """
    if not functions:
        raise BenchkillError("interleave: no functions to time")
    if warmup < 1:
        raise BenchkillError("interleave: at least one warm-up run is needed")
    warm: dict[str, list[float]] = {name: [] for name in functions}
    timed: dict[str, list[float]] = {name: [] for name in functions}
    timed_cpu: dict[str, list[float]] = {name: [] for name in functions}
    outputs: dict[str, Any] = {}
    # Collect cyclic garbage before every round, so one round's garbage is not charged to
    # the next; freezing what exists now keeps those collections cheap (a full one costs
    # tens of milliseconds once TVM is loaded).
    gc.collect()
    gc.freeze()
    try:
        for _ in range(warmup):
            gc.collect()
            for name, fn in functions.items():
                result, seconds = _timed(fn, clock)
                warm[name].append(seconds)
                outputs[name] = result if keep_outputs else None
                del result
        warm_t = {name: tuple(values) for name, values in warm.items()}
        rounds = repeats(warm_t) if callable(repeats) else repeats
        check_int(rounds, "interleave: repeats")
        for _ in range(rounds):
            gc.collect()
            for name, fn in functions.items():
                if cpu_clock is None:
                    result, seconds = _timed(fn, clock)
                else:
                    result, seconds, cpu_seconds = _timed_both(fn, clock, cpu_clock)
                    timed_cpu[name].append(cpu_seconds)
                del result
                timed[name].append(seconds)
    finally:
        gc.unfreeze()
    return Interleaved(
        samples={name: tuple(values) for name, values in timed.items()},
        warmup=warm_t,
        outputs=outputs,
        cpu_samples=None
        if cpu_clock is None
        else {name: tuple(values) for name, values in timed_cpu.items()},
    )


def budget_repeats(
    budget_seconds: float, minimum: int, maximum: int
) -> Callable[[dict[str, tuple[float, ...]]], int]:
    """Repeats so that one round of all functions fits ``budget_seconds`` in total,
    clamped to [minimum, maximum]; the warm-up times predict a round's cost."""
    if minimum < 1 or maximum < minimum:
        raise BenchkillError(f"budget_repeats: bad bounds [{minimum}, {maximum}]")

    def rounds(warm: dict[str, tuple[float, ...]]) -> int:
        per_round = sum(min(values) for values in warm.values())
        if per_round <= 0:
            return maximum
        return max(minimum, min(maximum, int(budget_seconds / per_round)))

    return rounds


def peak_python_memory(fn: Callable[[], Any]) -> int:
    """Peak bytes allocated by Python (tracemalloc) while ``fn`` runs, result dropped.

    Memory held by TVM's C++ objects is invisible to tracemalloc: this is the Python-side
    overhead of a pass (wrappers, dicts, lists), which is what differs between ports.
    """
    was_tracing = tracemalloc.is_tracing()
    gc.collect()
    if not was_tracing:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        result = fn()
        _, peak = tracemalloc.get_traced_memory()
        del result
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return max(0, peak - base)
