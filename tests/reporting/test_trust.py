"""benchkill trust: A/A and A/B verdict counts from results with known samples."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from benchkill.errors import BenchkillError
from benchkill.hooks import SLOWDOWN_ENV
from benchkill.reporting.trust import PLANS, evaluate, run_trials
from benchkill.results.store import load, save
from tests.conftest import BASE10, make_record, make_results

PARAMS = {"bindings": 1000, "family": "chain", "impl": "benchkill"}


def _run(cpu_scale: float, wall_scale: float, command=("run",), finished="2026-01-01T00:00:00"):
    """A pass run whose benchkill CPU and wall times are BASE10 scaled."""
    results = make_results(
        [
            make_record([v * cpu_scale for v in BASE10], "pass_cpu_time", params=PARAMS),
            make_record([v * wall_scale for v in BASE10], "pass_time", params=PARAMS),
        ]
    )
    settings = replace(results.settings, command=tuple(command), finished_at=finished)
    return replace(results, settings=settings)


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
        if "--resume" in argv:
            path = Path(argv[argv.index("--resume") + 1])
            calls.append((path.name, env.get(SLOWDOWN_ENV), ["--resume"]))
            save(_run(1.0, 1.0, command=load(path).settings.command), path)
            return 0
        name = argv[argv.index("--out") + 1].rsplit("/", 1)[-1]
        calls.append((name, env.get(SLOWDOWN_ENV), argv[argv.index("run") + 1 :][:3]))
        save(_run(1.0, 1.0, command=argv[argv.index("run") :]), tmp_path / name)
        return 0

    save(_run(1.0, 1.0, command=("run", "--suite", "pass", "--quick")), tmp_path / "a-0.json")
    # a B run whose process was killed: unfinished, so it is resumed, not reused
    command = ("run", "--suite", "pass", "--quick")
    killed = _run(1.0, 1.0, command=command, finished=None)
    save(killed, tmp_path / "b-slowdown-0.1-0.json")
    a_paths, b_paths = run_trials(2, [0.1, 0.25], tmp_path, run=fake_run)
    assert calls[0] == ("b-slowdown-0.1-0.json", "0.1", ["--resume"])
    assert [(name, hook) for name, hook, _ in calls] == [
        ("b-slowdown-0.1-0.json", "0.1"),
        ("b-slowdown-0.25-0.json", "0.25"),
        ("a-1.json", None),
        ("b-slowdown-0.1-1.json", "0.1"),
        ("b-slowdown-0.25-1.json", "0.25"),
        ("a-2.json", None),
    ]
    assert calls[1][2] == ["--suite", "pass", "--quick"]
    assert [p.name for p in a_paths] == ["a-0.json", "a-1.json", "a-2.json"]
    assert [p.name for p in b_paths[0.25]] == ["b-slowdown-0.25-0.json", "b-slowdown-0.25-1.json"]
    with pytest.raises(BenchkillError, match="trials"):
        run_trials(0, 0.1, tmp_path, run=fake_run)


def test_runs_of_another_kind_are_not_reused(tmp_path):
    save(_run(1.0, 1.0, command=("run", "--suite", "vm", "--quick")), tmp_path / "a-0.json")
    with pytest.raises(BenchkillError, match="not by the instructions trust runs"):
        run_trials(1, 0.01, tmp_path, run=None, plan=PLANS["instructions"])


def test_memory_plan_judges_every_peak_for_false_alarms_and_kill_sensitive_ones_for_detection():
    def vm_run(extra_mib: float):
        records = []
        for workload in ("chain-8x4MiB", "mlp-1x32x256-seq2048"):  # as the vm suite names them
            for kill in ("tvm", "benchkill"):
                params = {"exec_mode": "bytecode", "kill": kill, "memory_cfg": "pooled"}
                grows = kill == "benchkill" and workload.startswith("chain")
                value = (16 + (extra_mib if grows else 0)) * 2**20
                records.append(
                    make_record(
                        [value] * 3,
                        "vm_peak_bytes",
                        "bytes",
                        suite="vm",
                        name=workload,
                        params={**params, "workload": workload},
                    )
                )
        return make_results(records, suites=("vm",))

    # A runs move by 64 KiB (within the tolerance); B holds 4 more MiB on chain
    a_runs = [vm_run(0), vm_run(1 / 16), vm_run(0)]
    b_runs = [vm_run(4), vm_run(4)]
    rows = evaluate(a_runs, b_runs, None, 0.002, PLANS["memory"].selections, 0.25)
    assert [(t.false_alarms, t.aa_trials, t.detections, t.ab_trials) for t in rows] == [
        (0, 2, 2, 2),
        (0, 2, 2, 2),
    ]


def test_instruction_plan_detects_one_percent():
    def counts(scale):
        return make_results(
            [
                make_record(
                    [c * scale for c in (118712873, 118703646, 118683825)],
                    "pass_instructions",
                    "instructions",
                    params=PARAMS,
                )
            ]
        )

    rows = evaluate(
        [counts(1.0)] * 3, [counts(1.01)] * 2, None, 0.002, PLANS["instructions"].selections
    )
    assert (rows[0].false_alarms, rows[0].detections) == (0, 2)
