"""benchkill trust: A/A and A/B verdict counts from results with known samples."""

from __future__ import annotations

import pytest

from benchkill.bench.machine import Machine
from benchkill.errors import BenchkillError
from benchkill.reporting.trust import evaluate, run_trials
from benchkill.results.store import ResultRecord, Results, RunSettings, save
from benchkill.stats import summarize

BASE = [1.00, 1.01, 1.02, 0.99, 1.00, 1.03, 0.98, 1.01, 1.00, 1.02]


def _run(cpu_scale: float, wall_scale: float) -> Results:
    def rec(metric, samples):
        samples = tuple(samples)
        params = {"bindings": 1000, "family": "chain", "impl": "benchkill"}
        return ResultRecord(
            case="pass:chain",
            suite="pass",
            name="chain",
            params=params,
            metric=metric,
            unit="seconds",
            samples=samples,
            summary=summarize(samples),
            status="ok",
            error=None,
            extra={},
        )

    settings = RunSettings(("pass",), True, ("benchkill",), "2026-01-01T00:00:00+00:00")
    records = (
        rec("pass_cpu_time", [v * cpu_scale for v in BASE]),
        rec("pass_time", [v * wall_scale for v in BASE]),
    )
    return Results(Machine(name="box"), settings, (), records)


def test_cpu_time_alarms_only_on_the_slowdown_while_wall_time_drifts():
    # A runs: CPU time stable, wall time drifting with the machine's load between runs
    a_runs = [_run(1.0, 1.0), _run(1.0, 1.5), _run(1.0, 1.0)]
    b_runs = [_run(1.2, 1.2), _run(1.2, 1.8)]
    rows = {t.selection.split(" (")[0]: t for t in evaluate(a_runs, b_runs, 1.05, 0.002)}
    cpu = rows["benchkill CPU time"]
    assert (cpu.false_alarms, cpu.aa_trials, cpu.detections, cpu.ab_trials) == (0, 2, 2, 2)
    wall = rows["benchkill wall time"]
    assert wall.false_alarms == 1  # the 1.0 -> 1.5 drift looks like a regression


def test_run_trials_alternates_and_reuses_existing_runs(tmp_path):
    calls = []

    def fake_run(argv, env):
        out = argv[argv.index("--out") + 1]
        calls.append((out.rsplit("/", 1)[-1], env.get("BENCHKILL_INJECT_SLOWDOWN")))
        save(_run(1.0, 1.0), tmp_path / out.rsplit("/", 1)[-1])
        return 0

    save(_run(1.0, 1.0), tmp_path / "a-0.json")
    a_paths, b_paths = run_trials(2, 0.1, tmp_path, run=fake_run)
    assert calls == [("b-0.json", "0.1"), ("a-1.json", None), ("b-1.json", "0.1")]
    assert [p.name for p in a_paths] == ["a-0.json", "a-1.json"]
    with pytest.raises(BenchkillError, match="trials"):
        run_trials(1, 0.1, tmp_path, run=fake_run)
