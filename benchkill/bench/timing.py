"""Side-by-side timing in one process: interleaved runs, warm-up, time budgets, an
injectable clock.

Running implementations A, B, C as ``A B C B C A C A B C B A ...`` instead of ``A A A B
B B ...`` spreads slow drifts of a shared machine (other jobs, thermal state) evenly over all
of them, so their ratio per round is meaningful.  The order rotates from round to round
so no implementation always runs first, or always right after the same other one (a
short function run right after TVM's pass was measured a few percent slower).  The clock
is a parameter so tests can drive the loop with a fake one; nothing here asserts or
interprets wall-clock times.
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

    ``samples[name][i]`` and ``samples[other][i]`` come from the same round ``i`` (a
    function with a budget of its own may stop early: its samples are the first rounds);
    ``warmup[name]`` holds the untimed-for-statistics first runs; ``outputs[name]`` is
    the result of the last warm-up run (kept for correctness checks), or None;
    ``peak_memory[name]`` the peak Python memory of the first warm-up run when traced.
    """

    samples: dict[str, tuple[float, ...]]
    warmup: dict[str, tuple[float, ...]]
    outputs: dict[str, Any]
    #: per timed round, the time by ``cpu_clock`` (CPU time of this process), if given
    cpu_samples: dict[str, tuple[float, ...]] | None = None
    peak_memory: dict[str, int] | None = None
    #: functions whose one sample is their (untraced) warm-up run (see ``budgets``)
    from_warmup: frozenset[str] = frozenset()
    #: what ``check`` returned on the warm-up outputs (then not kept), if given
    checked: Any = None


@dataclass(frozen=True)
class RoundBudget:
    """Timed rounds as many as fit ``seconds``, clamped to [minimum, maximum].

    :func:`interleave` runs one timed round, then as many more as the time of that
    round predicts fit the budget (functions with a budget of their own not counted).
    """

    seconds: float
    minimum: int
    maximum: int

    def __post_init__(self) -> None:
        if self.minimum < 1 or self.maximum < self.minimum:
            raise BenchkillError(f"budget_repeats: bad bounds [{self.minimum}, {self.maximum}]")

    def rounds(self, round_seconds: float) -> int:
        """Rounds of ``round_seconds`` each that fit the budget, within the bounds."""
        if round_seconds <= 0:
            return self.maximum
        return max(self.minimum, min(self.maximum, int(self.seconds / round_seconds)))


def _timed(fn: Callable[[], Any], clock: Clock) -> tuple[Any, float]:
    start = clock()
    result = fn()
    return result, clock() - start


def _timed_both(fn: Callable[[], Any], clock: Clock, cpu_clock: Clock) -> tuple[Any, float, float]:
    start, cpu_start = clock(), cpu_clock()
    result = fn()
    return result, clock() - start, cpu_clock() - cpu_start


def _traced(fn: Callable[[], Any], clock: Clock) -> tuple[Any, float, int]:
    """``fn()``, its time and its peak Python memory (tracemalloc) above the start."""
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        result, seconds = _timed(fn, clock)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return result, seconds, max(0, peak - base)


def interleave(
    functions: Mapping[str, Callable[[], Any]],
    repeats: int | RoundBudget | Callable[[dict[str, tuple[float, ...]]], int],
    warmup: int = 1,
    clock: Clock = time.perf_counter,
    keep_outputs: bool = True,
    cpu_clock: Clock | None = None,
    *,
    trace_memory: bool = False,
    budgets: Mapping[str, float] | None = None,
    check: Callable[[dict[str, Any]], Any] | None = None,
) -> Interleaved:
    """Run every function ``warmup`` times, then interleaved timed rounds.

    Warm-up runs go in the order of ``functions``; timed round ``i`` runs them in the
    order :func:`round_order` gives, so none always runs first or after the same one.

    ``repeats``: the number of timed rounds, a :class:`RoundBudget`, or a function of
    the warm-up timings.  With ``cpu_clock`` (e.g. ``time.process_time``) each timed
    round is also measured in CPU time, which other jobs on a shared machine disturb far
    less than wall time.  With ``trace_memory`` the first warm-up run of each function
    also measures its peak Python memory (tracemalloc slows Python code down, which is
    why it is the warm-up run that is traced).

    ``budgets[name]`` caps the seconds of the timed rounds of ``name``: it runs in a
    round only while its timed seconds so far plus its last time (of the warm-up, before
    its first round) stay within the cap, so its samples are the first rounds.  One that
    gets no round (its untraced warm-up alone is over the cap) has its warm-up run as its
    one sample, listed in ``from_warmup`` (a traced warm-up is never a sample: a function
    whose warm-up was traced gets at least one round).

    Results of timed rounds are dropped at once so two outputs of a large module never
    coexist; the last warm-up result of each function is kept when ``keep_outputs``.
    ``check``, if given, is called with the warm-up results before the timed rounds (its
    return value is ``checked``), which then run without them: a kept output shares
    nodes with the input, which makes TVM's copy-on-write mutator copy them (measured:
    TVM's pass 1.6 to 1.9 times slower on 100k bindings while the outputs were kept).
    """
    if not functions:
        raise BenchkillError("interleave: no functions to time")
    if warmup < 1:
        raise BenchkillError("interleave: at least one warm-up run is needed")
    budgets = dict(budgets or {})
    ordered = list(functions.items())
    warm: dict[str, list[float]] = {name: [] for name in functions}
    warm_cpu: dict[str, float] = {}
    timed: dict[str, list[float]] = {name: [] for name in functions}
    timed_cpu: dict[str, list[float]] = {name: [] for name in functions}
    outputs: dict[str, Any] = {}
    peaks: dict[str, int] = {}
    # Collect cyclic garbage before every round, so one round's garbage is not charged to
    # the next; freezing what exists now keeps those collections cheap (a full one costs
    # tens of milliseconds once TVM is loaded).
    gc.collect()
    gc.freeze()
    try:
        for index in range(warmup):
            gc.collect()
            for name, fn in functions.items():
                if trace_memory and index == 0:
                    result, seconds, peaks[name] = _traced(fn, clock)
                elif cpu_clock is None:
                    result, seconds = _timed(fn, clock)
                else:
                    result, seconds, warm_cpu[name] = _timed_both(fn, clock, cpu_clock)
                warm[name].append(seconds)
                outputs[name] = result if keep_outputs or check is not None else None
                del result
        warm_t = {name: tuple(values) for name, values in warm.items()}
        checked = None
        if check is not None:
            checked = check(outputs)
            outputs = {name: None for name in outputs}
        if isinstance(repeats, RoundBudget):
            rounds = None  # decided after the first timed round
        else:
            rounds = repeats(warm_t) if callable(repeats) else repeats
            check_int(rounds, "interleave: repeats")
        done = 0
        while rounds is None or done < rounds:
            gc.collect()
            unbudgeted = 0.0
            for name, fn in round_order(ordered, done):
                samples = timed[name]
                if name in budgets:
                    last = samples[-1] if samples else warm[name][-1]
                    traced_first = trace_memory and warmup == 1 and not samples
                    if not traced_first and sum(samples) + last > budgets[name]:
                        continue
                if cpu_clock is None:
                    result, seconds = _timed(fn, clock)
                else:
                    result, seconds, cpu_seconds = _timed_both(fn, clock, cpu_clock)
                    timed_cpu[name].append(cpu_seconds)
                del result
                samples.append(seconds)
                if name not in budgets:
                    unbudgeted += seconds
            done += 1
            if rounds is None:
                rounds = repeats.rounds(unbudgeted)  # type: ignore[union-attr]
    finally:
        gc.unfreeze()
    from_warmup = set()
    for name in budgets:
        if name in timed and not timed[name]:  # its untraced warm-up is its sample
            from_warmup.add(name)
            timed[name].append(warm[name][-1])
            if cpu_clock is not None:
                timed_cpu[name].append(warm_cpu[name])
    return Interleaved(
        samples={name: tuple(values) for name, values in timed.items()},
        warmup=warm_t,
        outputs=outputs,
        cpu_samples=None
        if cpu_clock is None
        else {name: tuple(values) for name, values in timed_cpu.items()},
        peak_memory=peaks if trace_memory else None,
        from_warmup=frozenset(from_warmup),
        checked=checked,
    )


def round_order(items: list[Any], index: int) -> list[Any]:
    """The order of timed round ``index``: ``items`` rotated left by ``index``, and
    reversed in every other cycle of ``len(items)`` rounds.

    Rotation alone keeps the cyclic order (with A B C, A always follows C unless it runs
    first); reversing every other cycle makes each item follow every other one too.
    """
    count = len(items)
    shift = index % count
    order = items[shift:] + items[:shift]
    if (index // count) % 2:
        order.reverse()
    return order


def budget_repeats(budget_seconds: float, minimum: int, maximum: int) -> RoundBudget:
    """As many timed rounds as fit ``budget_seconds``, clamped to [minimum, maximum]."""
    return RoundBudget(budget_seconds, minimum, maximum)


def peak_python_memory(fn: Callable[[], Any]) -> int:
    """Peak bytes allocated by Python (tracemalloc) while ``fn`` runs, result dropped.

    Memory held by TVM's C++ objects is invisible to tracemalloc: this is the Python-side
    overhead of a pass (wrappers, dicts, lists), which is what differs between ports.
    """
    gc.collect()
    result, _, peak = _traced(fn, time.perf_counter)
    del result
    return peak
