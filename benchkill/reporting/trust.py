"""Can ``benchkill compare`` be trusted?  Repeated A/A and A/B runs, measured.

A/A: two runs of the same code; any regression reported is a false alarm.  A/B: the
second run has the pass slowed down by the test hook ``BENCHKILL_INJECT_SLOWDOWN``
(busy work of that fraction of the pass's own time); a regression must be reported.
Runs alternate A, B, A, B, ... so slow drifts of a shared machine hit both alike.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchkill.bench.model import label
from benchkill.errors import BenchkillError
from benchkill.hooks import SLOWDOWN_ENV
from benchkill.reporting.verdicts import compare
from benchkill.results.store import Results, load

#: What to judge: a name and the ``--only`` pattern that selects its records.
SELECTIONS = (
    ("benchkill CPU time (pass_cpu_time)", r"impl=benchkill.*\] pass_cpu_time$"),
    ("benchkill wall time (pass_time)", r"impl=benchkill.*\] pass_time$"),
    ("speedup TVM/benchkill (speedup_vs_tvm)", r"\] speedup_vs_tvm$"),
)


@dataclass(frozen=True)
class Trust:
    """How often a regression was reported, per selection of records."""

    selection: str
    false_alarms: int  # A/A comparisons that reported a regression
    aa_trials: int
    detections: int  # A/B comparisons that reported a regression
    ab_trials: int


def evaluate(
    a_runs: Sequence[Results],
    b_runs: Sequence[Results],
    factor: float,
    alpha: float,
    selections: Sequence[tuple[str, str]] = SELECTIONS,
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
        aa = [
            compare(a_runs[i], a_runs[i + 1], factor, alpha, only).exit_code == 1
            for i in range(len(a_runs) - 1)
        ]
        ab = [
            compare(a, b, factor, alpha, only).exit_code == 1
            for a, b in zip(a_runs, b_runs, strict=False)
        ]
        out.append(Trust(name, sum(aa), len(aa), sum(ab), len(ab)))
    return out


def run_trials(
    trials: int,
    slowdown: float,
    directory: Path,
    run: Callable[[list[str], dict[str, str]], int] | None = None,
) -> tuple[list[Path], list[Path]]:
    """Run ``trials`` quick pass-suite runs of each kind, alternating, into ``directory``.

    Files already there (``a-<i>.json``, ``b-<i>.json``) are kept, so an interrupted
    measurement can be completed.  ``run`` (argv, environment) -> exit code.
    """
    if trials < 2:
        raise BenchkillError("--trials must be at least 2")
    if not 0 < slowdown:
        raise BenchkillError("--slowdown must be a positive fraction, e.g. 0.10")
    directory.mkdir(parents=True, exist_ok=True)
    run = run or _subprocess
    a_paths, b_paths = [], []
    for i in range(trials):
        for kind, paths in (("a", a_paths), ("b", b_paths)):
            path = directory / f"{kind}-{i}.json"
            if not path.exists():
                env = dict(os.environ)
                env.pop(SLOWDOWN_ENV, None)
                if kind == "b":
                    env[SLOWDOWN_ENV] = str(slowdown)
                argv = [sys.executable, "-m", "benchkill", "run", "--suite", "pass", "--quick"]
                code = run([*argv, "--out", str(path)], env)
                if code not in (0, 1) or not path.exists():
                    raise BenchkillError(f"the run for {path} failed (exit code {code})")
            paths.append(path)
    return a_paths, b_paths


def _subprocess(argv: list[str], env: dict[str, str]) -> int:
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        sys.stderr.write(done.stderr[-2000:])
    return done.returncode


def measure(
    trials: int, slowdown: float, directory: Path, factor: float, alpha: float
) -> list[Trust]:
    """Run (or complete) the trials in ``directory`` and evaluate them."""
    a_paths, b_paths = run_trials(trials, slowdown, directory)
    return evaluate([load(p) for p in a_paths], [load(p) for p in b_paths], factor, alpha)
