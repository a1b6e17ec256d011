"""Can ``benchkill compare`` be trusted?  Repeated A/A and A/B runs, measured.

A/A: two runs of the same code; any regression reported is a false alarm.  A/B: the
second run has a test hook (:mod:`benchkill.hooks`) set that makes benchkill worse by a
known amount; a regression must be reported.  One :class:`Plan` per metric kind:

* ``instructions``: ``benchkill run --suite pass --quick --instructions-only``, B with
  ``BENCHKILL_INJECT_SLOWDOWN`` (default 0.01: the pass does 1% more work);
* ``memory``: ``benchkill run --suite vm --quick``, B with
  ``BENCHKILL_INJECT_MISSED_KILLS`` (default 0.25: every 4th kill dropped);
* ``time``: ``benchkill run --suite pass --quick``, B with ``BENCHKILL_INJECT_SLOWDOWN``
  (default 0.10; several values may be given, e.g. 0.10 and 0.25).

Runs alternate A0 B0 A1 B1 ... A(n-1) B(n-1) An, so slow drifts of a shared machine hit
both alike: n A/A comparisons (each A run against the next) and n A/B comparisons
(each A run against the B run after it), per hook value.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchkill.bench.model import label
from benchkill.errors import BenchkillError, ExitCode, MeasurementError
from benchkill.hooks import HOOK_ENVS, MISSED_KILLS_ENV, SLOWDOWN_ENV
from benchkill.reporting.run_comparison import compare
from benchkill.results.store import Results, load

#: A selection: a name and the ``--only`` pattern of the records it judges.
Selection = tuple[str, str]

#: The time selections (the records of benchkill's pass timed in the pass suite).
TIME_SELECTIONS: tuple[Selection, ...] = (
    ("benchkill CPU time (pass_cpu_time)", r"impl=benchkill.*\] pass_cpu_time$"),
    ("benchkill wall time (pass_time)", r"impl=benchkill.*\] pass_time$"),
    ("speedup TVM/benchkill (speedup_vs_tvm)", r"\] speedup_vs_tvm$"),
    ("benchkill / floor (time_over_floor)", r"\] time_over_floor$"),
)


@dataclass(frozen=True)
class Plan:
    """The trust measurement of one metric kind: the run, the hook, what is judged."""

    metric: str
    run_args: tuple[str, ...]  # of ``benchkill run`` (before ``--out``)
    hook: str  # the environment variable set in B runs
    default: float  # its default value
    selections: tuple[Selection, ...]


PLANS = {
    "instructions": Plan(
        "instructions",
        ("--suite", "pass", "--quick", "--instructions-only"),
        SLOWDOWN_ENV,
        0.01,
        (
            (
                "benchkill instructions (pass_instructions)",
                r"impl=benchkill.*\] pass_instructions$",
            ),
            ("instructions TVM/benchkill (instructions_vs_tvm)", r"\] instructions_vs_tvm$"),
        ),
    ),
    "memory": Plan(
        "memory",
        ("--suite", "vm", "--quick"),
        MISSED_KILLS_ENV,
        0.25,
        (
            ("VM peak memory, every record (vm_peak_bytes)", r"\] vm_peak_bytes$"),
            (
                "VM peak memory, kill-sensitive: benchkill's kills on chain, if_chain",
                r"kill=(benchkill|beyond),.*workload=(chain|if_chain)(-[^,\]]*)?\] vm_peak_bytes$",
            ),
        ),
    ),
    "time": Plan("time", ("--suite", "pass", "--quick"), SLOWDOWN_ENV, 0.10, TIME_SELECTIONS),
}


@dataclass(frozen=True)
class Trust:
    """How often a regression was reported, per selection of records (and hook value)."""

    selection: str
    false_alarms: int  # A/A comparisons that reported a regression
    aa_trials: int
    detections: int  # A/B comparisons that reported a regression
    ab_trials: int
    value: float | None = None  # the hook's value in the B runs


def _judge(base: Results, new: Results, factor, alpha, only) -> bool:
    return compare(base, new, factor, alpha, only).exit_code == 1


def evaluate(
    a_runs: Sequence[Results],
    b_runs: Sequence[Results],
    factor: float | None,
    alpha: float,
    selections: Sequence[Selection] = TIME_SELECTIONS,
    value: float | None = None,
) -> list[Trust]:
    """A/A: each A run against the next A run; A/B: each A run against its B run."""
    if len(a_runs) < 2 or not b_runs:
        raise BenchkillError("trust needs at least two A runs and one B run")
    out = []
    for name, pattern in selections:
        only = re.compile(pattern)
        labels = [label(r.suite, r.name, r.params, r.metric) for r in a_runs[0].records]
        if not any(only.search(label) for label in labels):
            continue  # e.g. runs made before that metric existed
        aa = [_judge(a_runs[i], a_runs[i + 1], factor, alpha, only) for i in range(len(a_runs) - 1)]
        ab = [_judge(a, b, factor, alpha, only) for a, b in zip(a_runs, b_runs, strict=False)]
        out.append(Trust(name, sum(aa), len(aa), sum(ab), len(ab), value))
    return out


def b_name(plan: Plan, value: float, index: int) -> str:
    """``b-<hook>-<value>-<i>.json``: the hook is in the name, so reuse is safe."""
    short = plan.hook.removeprefix("BENCHKILL_INJECT_").lower()
    return f"b-{short}-{value:g}-{index}.json"


def run_trials(
    trials: int,
    values: float | Sequence[float],
    directory: Path,
    run: Callable[[list[str], dict[str, str]], int] | None = None,
    plan: Plan = PLANS["time"],
    progress: Callable[[str], None] | None = None,
) -> tuple[list[Path], dict[float, list[Path]]]:
    """Run ``trials + 1`` A runs and ``trials`` B runs per hook value, alternating, into
    ``directory``.  Finished runs already there are kept and unfinished ones resumed (an
    interrupted measurement completes).  ``run`` (argv, environment) -> exit code."""
    if trials < 1:
        raise BenchkillError("trials must be at least 1")
    values = [values] if isinstance(values, (int, float)) else list(values)
    if not values or not all(0 < v for v in values):
        raise BenchkillError(f"{plan.hook} values must be positive, not {values}")
    directory.mkdir(parents=True, exist_ok=True)
    run = run or _subprocess
    a_paths: list[Path] = []
    b_paths: dict[float, list[Path]] = {v: [] for v in values}
    order = []
    for i in range(trials + 1):
        order.append((directory / f"a-{i}.json", None, a_paths))
        if i < trials:
            order += [(directory / b_name(plan, v, i), v, b_paths[v]) for v in values]
    for path, value, paths in order:
        finished = path.exists() and _check_reused(path, plan)
        if not finished:
            env = {k: v for k, v in os.environ.items() if k not in HOOK_ENVS}
            if value is not None:
                env[plan.hook] = f"{value:g}"
            argv = [sys.executable, "-m", "benchkill", "run"]
            # an interrupted run (its process killed) is completed, not started again
            argv += (
                ["--resume", str(path)] if path.exists() else [*plan.run_args, "--out", str(path)]
            )
            t0 = time.monotonic()
            code = run(argv, env)
            if code not in _FINISHED or not path.exists():
                raise MeasurementError(f"the run for {path} failed (exit code {code})")
            if progress is not None:
                progress(f"{path.name}: {time.monotonic() - t0:.0f} s")
        paths.append(path)
    return a_paths, b_paths


def _check_reused(path: Path, plan: Plan) -> bool:
    """Whether the existing run ``path`` is finished; a BenchkillError when another kind
    of run made it."""
    settings = load(path).settings
    command = settings.command
    if not all(arg in command for arg in plan.run_args):
        raise BenchkillError(
            f"{path}: made by {' '.join(command)!r}, not by the {plan.metric} trust runs "
            f"(benchkill run {' '.join(plan.run_args)}); use another --out"
        )
    return settings.finished_at is not None


#: Exit codes of a ``benchkill run`` that finished: every case ran, or some failed (their
#: errors recorded in the file).
_FINISHED = (ExitCode.OK, ExitCode.NOT_MEASURED)


def _subprocess(argv: list[str], env: dict[str, str]) -> int:
    """Run ``benchkill run`` in a child; one that fails is an error of one line, the
    child's own error line (its last line on stderr): a BenchkillError when the child
    found its input bad, else a MeasurementError."""
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    if done.returncode not in _FINISHED:
        lines = done.stderr.strip().splitlines()
        last = lines[-1].removeprefix("benchkill: error: ") if lines else "no message"
        bad_input = done.returncode == ExitCode.BAD_INPUT
        raise (BenchkillError if bad_input else MeasurementError)(
            f"benchkill {' '.join(argv[3:])} failed (exit code {done.returncode}): {last}"
        )
    return done.returncode


def measure(
    trials: int,
    values: float | Sequence[float] | None,
    directory: Path,
    factor: float | None,
    alpha: float,
    plan: Plan = PLANS["time"],
    progress: Callable[[str], None] | None = None,
) -> list[Trust]:
    """Run (or complete) the trials in ``directory`` and evaluate them, per hook value."""
    values = plan.default if values is None else values
    a_paths, b_paths = run_trials(trials, values, directory, plan=plan, progress=progress)
    a_runs = [load(p) for p in a_paths]
    rows = []
    for value, paths in b_paths.items():
        b_runs = [load(p) for p in paths]
        rows += evaluate(a_runs, b_runs, factor, alpha, plan.selections, value)
    return rows
