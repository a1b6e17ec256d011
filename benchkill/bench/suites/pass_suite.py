"""Suite "pass": time KillAfterLastUse on generated modules, three implementations and a floor.

A case is one module: a generated family x size in bindings, a real decoder of the
``model`` family (:mod:`benchkill.inputs.models`, 300 to 3,000 bindings), or the kill
step's input of a PyTorch model of the ``real`` family (:mod:`benchkill.inputs.real_pass`:
torchvision CNNs dynamic and static, a transformer encoder and decoder; skipped with one
line without the ``[models]`` extra).  On it, in one
process, the suite times benchkill's pass, TVM's C++ pass and the floor interleaved round
by round, then the naive Python port.  Time budgets keep the whole sweep within minutes:

* benchkill's timed rounds are as many as fit :data:`CASE_BUDGET_SECONDS` (by the time
  of its first round), between :func:`min_repeats` (fewer for the largest sizes) and
  :data:`MAX_REPEATS`;
* TVM's pass runs in those rounds only while its own time stays within
  :data:`TVM_BUDGET_SECONDS` (it is superlinear: 35 s a run at 600,000 bindings, where
  its warm-up run is its one sample);
* the naive port runs up to :data:`NAIVE_MAX_BINDINGS` only, in rounds of its own after
  those, as many as fit :data:`NAIVE_BUDGET_SECONDS` (at least one): run in the same
  rounds it slowed benchkill's pass more than TVM's, so it changed a ratio it is not part
  of (benchkill / TVM on the ``model`` family's smallest decoder: 0.48 without it in the
  rounds, 0.49-0.52 with it, README "Pass time");
* the floor (:data:`FLOOR`: the FFI reads, re-inferences and kill bindings benchkill's
  pass cannot skip on the case, with none of its Python around them) runs in benchkill's
  and TVM's rounds, within :data:`FLOOR_BUDGET_SECONDS` (like TVM's pass: a warm-up over
  it is the one sample), so every run gives benchkill / floor: how much of the pass is its
  own Python, a ratio that carries across CPUs and Python builds better than benchkill /
  TVM does (README "Pass time"); in separate rounds it drifted with the machine, and in
  the same rounds it left benchkill / TVM as it was;
* peak Python memory is measured (tracemalloc, in the warm-up run, which it slows down
  by an order of magnitude) up to :data:`MEMORY_MAX_BINDINGS`.

Each case also

* checks every output: benchkill's must be structurally equal to TVM's (and so must the
  naive port's); a mismatch turns the records FAILED with the difference, never hidden;
* measures the peak Python memory (tracemalloc) of each pass, in its warm-up run, up to
  :data:`MEMORY_MAX_BINDINGS`;
* derives the speedup TVM / benchkill of every round, and benchkill / floor of every round
  the floor ran in (:data:`OVER_FLOOR`; none when its one sample is its warm-up).

The scaling exponent (slope of log time vs log bindings) is fitted across cases by
:func:`benchkill.reporting.targets.family_exponents` (the rule of
:func:`benchkill.stats.scaling_exponents`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import Any

import tvm
from tvm import relax

from benchkill.bench.model import FAILED, FLOOR, OK, CaseSpec, Record
from benchkill.bench.timing import Clock, Interleaved, RoundBudget, interleave
from benchkill.inputs.families import FAMILIES, ops_for_bindings
from benchkill.inputs.models import NAME as MODEL
from benchkill.inputs.real_pass import REAL, REAL_CASES, missing, pass_input, release
from benchkill.relax.counting import count_bindings
from benchkill.stats import round_ratios

NAME = "pass"

#: Sizes of the full sweep, in Relax bindings of ``main``, for the generated families.
SIZES = (1_000, 3_000, 10_000, 30_000, 100_000, 200_000, 600_000)
#: Sizes of the ``model`` family (real decoders: 5, 12, 24 and 49 layers).
MODEL_SIZES = (300, 750, 1_500, 3_000)
#: The generated families (every family but ``model``).
GENERATED = tuple(family for family in FAMILIES if family != MODEL)
#: ``--quick``: (family, bindings) pairs that finish in seconds.
QUICK = (
    ("chain", 1_000),
    ("chain", 3_000),
    ("mixed", 1_000),
    ("mixed", 3_000),
    (MODEL, 300),
)
SEED = 0
#: The implementations, in the order they run in each round.
IMPLS = ("benchkill", "tvm", "naive")
#: :data:`FLOOR` (not a pass: the FFI work benchkill's pass cannot skip on the case's
#: ``main``) is timed in benchkill's and TVM's rounds within FLOOR_BUDGET_SECONDS, as
#: TVM's pass is within its budget (a warm-up over it is the one sample: 3.3 s at 600,000
#: bindings), so that benchkill / floor (how far the pass's own Python is from the least
#: an exact Python pass does) is a figure of every run.
FLOOR_BUDGET_SECONDS = 1.5
#: Largest module the naive port is run on (about 30 us per binding, 2.5 times that in
#: its traced warm-up run, on a 2-core machine).
NAIVE_MAX_BINDINGS = 30_000
#: Seconds of timed rounds of the naive port and of TVM's pass per case (each stops
#: before going over).
NAIVE_BUDGET_SECONDS, TVM_BUDGET_SECONDS = 1.5, 10.0
#: Largest module whose peak Python memory is measured.
MEMORY_MAX_BINDINGS = 30_000
#: Timed rounds: as many as fit CASE_BUDGET_SECONDS, within [min_repeats(), MAX_REPEATS].
MIN_REPEATS, MAX_REPEATS, CASE_BUDGET_SECONDS = 3, 15, 5.0
#: From this size on, the minimum number of rounds is LARGE_MIN_REPEATS.
LARGE_BINDINGS, LARGE_MIN_REPEATS = 150_000, 2

TIME, MEMORY, SPEEDUP = "pass_time", "pass_peak_python_memory", "speedup_vs_tvm"
#: benchkill's time over the floor's, round by round (lower is better): how far the pass's
#: own Python is from the FFI work it cannot skip, measured in the same rounds, so a
#: machine that slows both moves it less than either time (README "trust").
OVER_FLOOR = "time_over_floor"
#: The same rounds timed in CPU time of the process (``time.process_time``).  Other
#: processes do not add to it, but on a virtual machine time the hypervisor takes from the
#: vCPU does (measured: it drifts between runs like wall time, see README "trust").
CPU_TIME = "pass_cpu_time"
#: ``benchkill run --instructions``: the implementations counted under callgrind, the
#: largest case counted (30,000 bindings cost 1-2 minutes per implementation there) and
#: the counted applications per case (after a warm-up one).
COUNTED_IMPLS, COUNTED_MAX_BINDINGS, COUNTED_REPEATS = ("benchkill", "tvm"), 30_000, 3


def min_repeats(bindings: int) -> int:
    """The fewest timed rounds of a case of ``bindings`` bindings."""
    return LARGE_MIN_REPEATS if bindings >= LARGE_BINDINGS else MIN_REPEATS


def round_budget(bindings: int) -> RoundBudget:
    """The timed rounds of a case of ``bindings`` bindings (see the module docstring)."""
    return RoundBudget(CASE_BUDGET_SECONDS, min_repeats(bindings), MAX_REPEATS)


def implementations(include_naive: bool = True) -> dict[str, tvm.ir.transform.Pass]:
    """The passes to compare, by implementation name (see :data:`IMPLS`)."""
    from benchkill.passes import KillAfterLastUse
    from benchkill.passes.naive import NaiveKillAfterLastUse

    passes = {
        "benchkill": KillAfterLastUse(),
        "tvm": relax.transform.KillAfterLastUse(),
        "naive": NaiveKillAfterLastUse(),
    }
    if not include_naive:
        del passes["naive"]
    return passes


def case(family: str, bindings: int, seed: int = SEED) -> CaseSpec:
    """The case of ``family`` at about ``bindings`` bindings."""
    params = {
        "family": family,
        "bindings": bindings,
        "n_ops": ops_for_bindings(family, bindings),
        "seed": seed,
    }
    return CaseSpec(NAME, family, params)


def real_case(name: str) -> CaseSpec:
    """The case of the real-model case ``name`` (:data:`REAL_CASES`); its ``bindings``
    and ``n_ops`` are the nominal bindings, the actual count is recorded."""
    bindings = REAL_CASES[name][2]
    params = {"family": REAL, "model": name, "bindings": bindings, "n_ops": bindings, "seed": SEED}
    return CaseSpec(NAME, REAL, params)


def real_cases() -> list[CaseSpec]:
    """The ``real`` family's cases, or none (and one line on stderr) without the
    ``[models]`` extra."""
    reason = missing()
    if reason is not None:
        print(f"pass suite: {reason}", file=sys.stderr)
        return []
    return [real_case(name) for name in REAL_CASES]


def cases(quick: bool) -> list[CaseSpec]:
    """Every family at every size, smallest sizes first, then the ``real`` family;
    ``quick``: :data:`QUICK`."""
    if quick:
        return [case(family, bindings) for family, bindings in QUICK]
    pairs = [(bindings, family) for bindings in SIZES for family in GENERATED]
    pairs += [(bindings, MODEL) for bindings in MODEL_SIZES]
    ordered = [case(family, bindings) for bindings, family in sorted(pairs, key=lambda p: p[0])]
    return ordered + real_cases()


def instruction_records(specs: list[CaseSpec]) -> list[list[Record]]:
    """Per case, ``pass_instructions`` per counted implementation and
    ``instructions_vs_tvm`` (:mod:`benchkill.bench.instruction_records`, all the cases in
    one child per implementation); none above :data:`COUNTED_MAX_BINDINGS`."""
    counted = [s for s in specs if s.params["bindings"] <= COUNTED_MAX_BINDINGS]
    if not counted:
        return [[] for _ in specs]
    from benchkill.bench.instruction_records import case_records

    by_key = dict(
        zip(
            (s.key for s in counted),
            case_records(NAME, counted, COUNTED_IMPLS, COUNTED_REPEATS),
            strict=True,
        )
    )
    return [by_key.get(s.key, []) for s in specs]


def structural_mismatch(actual: tvm.IRModule, expected: tvm.IRModule) -> str | None:
    """None when the modules are structurally equal, else the first difference (one line)."""
    try:
        tvm.ir.assert_structural_equal(actual, expected, map_free_vars=True)
    except ValueError as exc:
        text = " ".join(str(exc).split())
        return text[:600]
    return None


def output_errors(outputs: dict[str, tvm.IRModule]) -> dict[str, str]:
    """implementation -> how its output differs from TVM's (only those that differ)."""
    errors = {}
    reference = outputs["tvm"]
    for name, output in outputs.items():
        if name not in ("tvm", FLOOR):  # the floor's output is not a pass's
            diff = structural_mismatch(output, reference)
            if diff is not None:
                errors[name] = f"{name} output differs from TVM's: {diff}"
    return errors


def merged(first: Interleaved, second: Interleaved) -> Interleaved:
    """The timings of two :func:`interleave` runs of different functions, as one."""

    def both(a: dict | None, b: dict | None) -> dict | None:
        return None if a is None and b is None else {**(a or {}), **(b or {})}

    return Interleaved(
        samples={**first.samples, **second.samples},
        warmup={**first.warmup, **second.warmup},
        outputs={**first.outputs, **second.outputs},
        cpu_samples=both(first.cpu_samples, second.cpu_samples),
        peak_memory=both(first.peak_memory, second.peak_memory),
        from_warmup=first.from_warmup | second.from_warmup,
        checked=both(first.checked, second.checked),
    )


def run_case(
    spec: CaseSpec,
    clock: Clock = time.perf_counter,
    naive_max_bindings: int = NAIVE_MAX_BINDINGS,
    passes: dict[str, tvm.ir.transform.Pass] | None = None,
    cpu_clock: Clock = time.process_time,
    floor: bool = True,
) -> list[Record]:
    """Generate the case's module, time the passes interleaved, check, and report.

    ``passes`` replaces :func:`implementations` (tests use it to inject a wrong pass);
    ``floor``: also time :data:`FLOOR` (when benchkill's pass is timed and its sweep takes
    the function, not the fallback to TVM's pass).
    """
    p = spec.params
    family, bindings, n_ops, seed = p["family"], p["bindings"], p["n_ops"], p["seed"]
    t0 = clock()
    mod = pass_input(family, p.get("model", n_ops), seed)
    if family == REAL:
        release()  # the registry's cache: nothing of the case outlives it
    generate_seconds = clock() - t0
    actual_bindings = count_bindings(mod)
    if passes is None:
        passes = implementations(include_naive=bindings <= naive_max_bindings)

    # 1. warm-up (its outputs are checked, its peak Python memory measured), then
    # interleaved timed rounds within the budgets
    # 2. correctness, before the timed rounds (which run without the outputs): every
    # output against TVM's
    # The naive port gets rounds of its own, after benchkill's and TVM's: in their rounds
    # it slowed benchkill's pass more than TVM's (module docstring); the floor is timed in
    # theirs, so benchkill / floor is a ratio of the same rounds too
    functions = {
        name: (lambda pass_=pass_: pass_(mod)) for name, pass_ in passes.items() if name != "naive"
    }
    budgets = {"tvm": TVM_BUDGET_SECONDS} if "tvm" in passes else {}
    work = floor_work(mod) if floor and "benchkill" in passes else None
    if work is not None:
        functions[FLOOR] = work.run
        budgets[FLOOR] = FLOOR_BUDGET_SECONDS
    traced = bindings <= MEMORY_MAX_BINDINGS
    timing = interleave(
        functions,
        repeats=round_budget(bindings),
        warmup=1,
        clock=clock,
        keep_outputs=False,
        cpu_clock=cpu_clock,
        trace_memory=traced,
        budgets=budgets,
        check=output_errors,
    )
    if "naive" in passes:
        naive, reference = passes["naive"], passes["tvm"]
        alone = interleave(
            {"naive": lambda: naive(mod)},
            repeats=RoundBudget(NAIVE_BUDGET_SECONDS, 1, MAX_REPEATS),
            warmup=1,
            clock=clock,
            keep_outputs=False,
            cpu_clock=cpu_clock,
            trace_memory=traced,
            check=lambda outputs: output_errors({"tvm": reference(mod), **outputs}),
        )
        timing = merged(timing, alone)
    errors: dict[str, str] = timing.checked
    case_error = errors.get("benchkill")

    memory = timing.peak_memory or {}

    def record(impl: str, metric: str, unit: str, samples: Sequence[float], **extra: Any) -> Record:
        error = case_error or errors.get(impl)
        return Record(
            suite=NAME,
            name=spec.name,
            params={
                "family": family,
                **({"model": p["model"]} if "model" in p else {}),
                "bindings": bindings,
                "n_ops": n_ops,
                "impl": impl,
                "seed": seed,
            },
            metric=metric,
            unit=unit,
            samples=tuple(float(s) for s in samples),
            status=FAILED if error else OK,
            error=error,
            extra={"bindings_actual": actual_bindings, **extra},
        )

    records = []
    for name in timing.samples:
        # a sample that is the warm-up run says so
        warm = {"sample_is_warmup": True} if name in timing.from_warmup else {}
        records.append(
            record(
                name,
                TIME,
                "seconds",
                timing.samples[name],
                warmup_seconds=list(timing.warmup[name]),
                generate_seconds=generate_seconds,
                **warm,
            )
        )
        if timing.cpu_samples is not None:
            records.append(record(name, CPU_TIME, "seconds", timing.cpu_samples[name], **warm))
        if name in memory and name != FLOOR:  # the floor is not a pass
            records.append(record(name, MEMORY, "bytes", [memory[name]]))
    if "benchkill" in passes:
        # Round by round while both ran (TVM's pass may stop at its budget), in CPU time:
        # under load the scheduler preempts a 10 ms TVM call far more often than a 3 ms
        # benchkill call, so the wall-time ratio of one case moved 0.33-2.66x between two
        # runs of the same code (README, "trust") while the CPU times moved within 10%.
        cpu = timing.cpu_samples is not None
        times = timing.cpu_samples if cpu else timing.samples
        ratios = round_ratios(times["tvm"], times["benchkill"])
        clock = "process_time" if cpu else "perf_counter"
        records.append(record("benchkill", SPEEDUP, "ratio", ratios, numerator="tvm", clock=clock))
        if FLOOR in times and FLOOR not in timing.from_warmup:  # a sample of its own round
            over = round_ratios(times["benchkill"], times[FLOOR])
            records.append(
                record("benchkill", OVER_FLOOR, "ratio", over, denominator=FLOOR, clock=clock)
            )
    return records


def floor_work(mod: tvm.IRModule):
    """The floor work of ``mod``'s ``main`` (:func:`benchkill.passes.profile.floor_work`),
    or None when benchkill's sweep hands it to the fallback (there is no floor then)."""
    from benchkill.passes.canonicalize import Unsupported
    from benchkill.passes.last_use import NeedsTVMCanonicalization
    from benchkill.passes.profile import floor_work as work_of

    try:
        return work_of(mod["main"])
    except (NeedsTVMCanonicalization, Unsupported):
        return None


def time_floor(mod, work, rounds: int, clock=time.process_time) -> dict[str, float]:
    """Minimum ``clock`` seconds of TVM's pass, benchkill's pass (both on ``mod``), the
    floor ``work`` (:func:`benchkill.passes.profile.floor_work`) and ``visit``: TVM's C++
    free-variable analysis of ``main`` (``relax.analysis.free_vars``: one visit of every
    binding and use with a hash set, a last-use analysis's shape with no Python in it);
    timed as the suite times passes: :func:`~benchkill.bench.timing.interleave`, one
    warm-up, ``rounds`` rounds."""
    passes = implementations(include_naive=False)
    main = mod["main"]
    free_vars = relax.analysis.free_vars
    functions = {
        "tvm": lambda: passes["tvm"](mod),
        "benchkill": lambda: passes["benchkill"](mod),
        "floor": work.run,
        "visit": lambda: free_vars(main),
    }
    timing = interleave(functions, rounds, keep_outputs=False, cpu_clock=clock)
    return {name: min(samples) for name, samples in timing.cpu_samples.items()}
