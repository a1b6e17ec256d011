"""benchkill trust: A/A and A/B verdict counts from results with known samples."""

from __future__ import annotations

import pytest

from benchkill.errors import BenchkillError
from benchkill.hooks import SLOWDOWN_ENV
from benchkill.reporting.trust import evaluate, run_trials
from benchkill.results.store import save
from tests.conftest import BASE10, make_record, make_results

PARAMS = {"bindings": 1000, "family": "chain", "impl": "benchkill"}


def _run(cpu_scale: float, wall_scale: float):
    """A pass run whose benchkill CPU and wall times are BASE10 scaled."""
    return make_results(
        [
            make_record([v * cpu_scale for v in BASE10], "pass_cpu_time", params=PARAMS),
            make_record([v * wall_scale for v in BASE10], "pass_time", params=PARAMS),
        ]
    )


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
        calls.append((out.rsplit("/", 1)[-1], env.get(SLOWDOWN_ENV)))
        save(_run(1.0, 1.0), tmp_path / out.rsplit("/", 1)[-1])
        return 0

    save(_run(1.0, 1.0), tmp_path / "a-0.json")
    a_paths, b_paths = run_trials(2, 0.1, tmp_path, run=fake_run)
    assert calls == [("b-0.json", "0.1"), ("a-1.json", None), ("b-1.json", "0.1")]
    assert [p.name for p in a_paths] == ["a-0.json", "a-1.json"]
    assert [p.name for p in b_paths] == ["b-0.json", "b-1.json"]
    with pytest.raises(BenchkillError, match="trials"):
        run_trials(1, 0.1, tmp_path, run=fake_run)
