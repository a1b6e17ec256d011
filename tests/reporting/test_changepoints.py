"""Change points over a history of runs: exact on instructions, asv's steps on times."""

import json
import subprocess

import pytest

from benchkill.cli.main import main
from benchkill.reporting.changepoints import find_changes, order_runs
from benchkill.reporting.plot_history import history as draw_history
from benchkill.reporting.policy import policy_from_table
from benchkill.reporting.verdicts import ACKNOWLEDGED, IMPROVEMENT, REGRESSION
from benchkill.results.store import save
from tests.conftest import make_record, make_results


def commit_of(i):
    return f"{i:07x}"


def history_runs(values, metric="pass_instructions", unit="instructions", spread=0.0):
    """One run per value, commit i started at minute i (spread: +-spread noise)."""
    runs = []
    for i, v in enumerate(values):
        samples = [v * (1 - spread), v, v * (1 + spread)]
        started = f"2026-01-01T00:{i:02d}:00+00:00"
        run = make_results(
            [make_record(samples, metric, unit, params={"bindings": 100, "impl": "benchkill"})],
            started,
            git_commit=commit_of(i),
        )
        runs.append((f"r{i}.json", run))
    return runs


def test_instruction_counts_change_exactly_where_they_change():
    values = [1000] * 5 + [1001] * 5 + [990] * 3
    h = find_changes(history_runs(values), None)
    assert [(c.commit, c.before, c.after, c.verdict) for c in h.changes] == [
        (commit_of(5), 1000, 1001, REGRESSION),
        (commit_of(10), 1001, 990, IMPROVEMENT),
    ]
    assert h.exit_code == 0  # the newest level is an improvement
    assert h.order == "start time"


def test_newest_regression_fails_unless_acknowledged():
    h = find_changes(history_runs([1000] * 4 + [1100] * 3), None)
    assert h.exit_code == 1
    assert h.changes[0].factor == pytest.approx(1.1)
    policy = policy_from_table(
        {
            "acknowledged": [
                {
                    "case": "pass:chain*",
                    "metric": "pass_instructions",
                    "commit": commit_of(4),
                    "reason": "r",
                }
            ]
        }
    )
    h = find_changes(history_runs([1000] * 4 + [1100] * 3), None, policy)
    assert h.changes[0].verdict == ACKNOWLEDGED
    assert h.exit_code == 0


def test_time_steps_found_by_asv_and_noise_is_not_a_change():
    import random

    rng = random.Random(3)
    values = [1.0 + rng.uniform(-0.03, 0.03) for _ in range(12)]
    values += [1.3 + rng.uniform(-0.03, 0.03) for _ in range(8)]
    h = find_changes(history_runs(values, "pass_time", "seconds"), None)
    assert [c.commit for c in h.changes] == [commit_of(12)]
    assert h.changes[0].verdict == REGRESSION
    flat = [1.0 + rng.uniform(-0.03, 0.03) for _ in range(20)]
    assert find_changes(history_runs(flat, "pass_time", "seconds"), None).changes == ()


def test_git_graph_orders_commits_not_start_times():
    runs = history_runs([1, 1, 2])
    # the graph says commit 2 came first: its run started last
    graph = [commit_of(2) + "0" * 33, commit_of(0) + "0" * 33, commit_of(1) + "0" * 33]
    ordered, how = order_runs(runs, graph)
    assert how == "git graph"
    assert [r.machine.git_commit for _, r in ordered] == [commit_of(i) for i in (2, 0, 1)]
    h = find_changes(runs, graph)
    assert [(c.commit, c.before, c.after) for c in h.changes] == [(commit_of(0), 2, 1)]


def test_figure_marks_the_change_points(tmp_path):
    runs = history_runs([1000] * 3 + [1100] * 3)
    h = find_changes(runs, None)
    [figure] = draw_history([r for _, r in runs], tmp_path, h.changes)
    marks = [s for s in figure.series if s.kind == "change"]
    assert [(m.x, m.label) for m in marks] == [((3,), f"change {commit_of(3)}")]
    assert all(p.exists() for p in figure.paths)


def test_cli_history_lines_exit_code_and_git_order(tmp_path, capsys):
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    shas = []
    for i in range(4):
        subprocess.run(
            ["git", "-C", str(repo), "commit", "-q", "--allow-empty", "-m", str(i)],
            check=True,
            env={**env, "PATH": "/usr/bin:/bin"},
        )
        shas.append(
            subprocess.run(
                ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True
            ).stdout.strip()
        )
    results = tmp_path / "results"
    results.mkdir()
    # started in reverse commit order: only the graph gives the right order
    for i, (sha, value) in enumerate(zip(shas, [500, 500, 600, 600], strict=True)):
        run = make_results(
            [make_record([value] * 3, "pass_instructions", "instructions")],
            f"2026-01-01T00:{9 - i:02d}:00+00:00",
            git_commit=sha[:7],
        )
        save(run, results / f"{i}.json")
    assert main(["history", str(results), "--repo", str(repo)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        f"pass:chain[bindings=100] pass_instructions {shas[2]} 500 -> 600 x1.2000 regression"
    )
    assert "ordered by git graph" in out[-1]
    assert main(["history", str(results), "--repo", str(repo), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["change_points"][0]["commit"] == shas[2]
    assert main(["history", str(tmp_path / "nothing")]) == 2
