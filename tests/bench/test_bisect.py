"""``benchkill bisect``: the search, its bounds and skips, and a real bisect on a clone of
this project with a regression injected in the pass at a known commit."""

import math
import os
import subprocess
from pathlib import Path

import pytest

from benchkill.bench.bisect import BAD, SKIP, CommitFailed, bisect, measured_at_most
from benchkill.cli.main import main

PROJECT = Path(__file__).resolve().parents[2]
GIT_ENV = {
    "GIT_AUTHOR_NAME": "benchkill test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "benchkill test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
}


def search(n, first_bad, skip=()):
    """bisect over commits 0..n-1 whose values step from 0 to 1 at ``first_bad``."""
    measured = []

    def measure(commit):
        measured.append(commit)
        if commit in skip:
            raise CommitFailed("does not import")
        return {"case": [1.0 if first_bad is not None and commit >= first_bad else 0.0]}

    outcome = bisect(list(range(n)), measure, lambda good, new: new["case"] > good["case"])
    return outcome, measured


@pytest.mark.parametrize("n", [2, 3, 4, 7, 8, 16, 33])
def test_finds_every_position_within_ceil_log2_n_plus_one_measurements(n):
    for first_bad in [*range(1, n), None]:
        outcome, measured = search(n, first_bad)
        assert outcome.first_bad == first_bad
        assert len(measured) <= math.ceil(math.log2(n)) + 1 == measured_at_most(n)
        assert measured[0] == 0  # GOOD first
        assert len(set(measured)) == len(measured)


def test_a_skipped_commit_is_replaced_by_its_neighbour():
    outcome, measured = search(8, 5, skip={6})
    assert outcome.first_bad == 5
    assert 6 in measured and [t.verdict for t in outcome.tested if t.commit == 6] == [SKIP]
    # a skipped commit right before the bad one leaves both as candidates (git bisect too)
    assert search(8, 5, skip={4})[0].candidates == (4, 5)


def test_skips_next_to_the_answer_leave_candidates():
    outcome, _ = search(5, 2, skip={1, 2})
    assert outcome.first_bad is None
    assert outcome.candidates == (1, 2, 3)  # 3 measured bad, 1 and 2 unknown
    assert all(t.verdict != BAD or t.commit >= 2 for t in outcome.tested)


def git(repo, *args):
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **GIT_ENV},
    )
    return done.stdout.strip()


def clone_with_regression(tmp_path, before=1, after=0):
    """A clone of this project with ``before`` commits touching no pass code, one that
    makes the pass do more work (a real code change: the plan sorted again), ``after``
    more; returns (clone, shas oldest first with the clone's HEAD at start first,
    the regression's sha)."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--no-local", str(PROJECT), str(clone)], check=True)
    shas = [git(clone, "rev-parse", "HEAD")]

    def doc_commit(i):
        note = clone / "docs" / "bisect-note.txt"
        note.write_text(note.read_text() + f"note {i}\n" if note.exists() else f"note {i}\n")
        git(clone, "add", "-A")
        git(clone, "commit", "-q", "-m", f"note {i}")
        shas.append(git(clone, "rev-parse", "HEAD"))

    for i in range(before):
        doc_commit(i)
    rewrite = clone / "benchkill" / "passes" / "rewrite.py"
    text = rewrite.read_text()
    anchor = "    body = _rewrite_scope(sweep.root, plan, sweep.canonicalizer)\n"
    assert anchor in text
    rewrite.write_text(
        text.replace(anchor, "    plan = {k: v for k, v in sorted(plan.items())}\n" + anchor)
    )
    git(clone, "commit", "-q", "-am", "rewrite: the plan in position order")
    shas.append(git(clone, "rev-parse", "HEAD"))
    bad = shas[-1]
    for i in range(after):
        doc_commit(before + i)
    return clone, shas, bad


@pytest.mark.slow
def test_real_bisect_names_the_injected_commit_and_leaves_the_checkout(tmp_path, capsys):
    pytest.importorskip("pytest_codspeed")
    if not any(
        os.access(os.path.join(d, "valgrind"), os.X_OK)
        for d in os.environ.get("PATH", "").split(os.pathsep)
    ):
        if os.environ.get("CI") == "true":
            pytest.fail("valgrind is required in CI")
        pytest.skip("valgrind is not installed")
    clone, shas, bad = clone_with_regression(tmp_path, before=1)
    state = [git(clone, *a) for a in (["status", "--porcelain"], ["branch", "-a"])]
    head = git(clone, "rev-parse", "HEAD")
    code = main(["bisect", shas[0], shas[-1], "--repo", str(clone), "--case", "chain:50"])
    out = capsys.readouterr().out.splitlines()
    assert code == 0, out
    assert out[-1] == f"first bad commit: {bad}"
    tested = [line for line in out[1:-1]]
    assert len(tested) <= measured_at_most(len(shas))
    assert tested[0].startswith(f"{shas[0]} good ")
    # the user's checkout, branches and worktrees as they were
    assert [git(clone, *a) for a in (["status", "--porcelain"], ["branch", "-a"])] == state
    assert git(clone, "rev-parse", "HEAD") == head
    assert git(clone, "worktree", "list").count("\n") == 0


def test_bad_input(tmp_path, capsys):
    assert main(["bisect", "HEAD~1", "HEAD", "--repo", str(tmp_path)]) == 2
    assert "not inside a git repository" in capsys.readouterr().err
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    for i in range(2):
        git(repo, "commit", "-q", "--allow-empty", "-m", str(i))
    assert main(["bisect", "nosuch", "HEAD", "--repo", str(repo)]) == 2
    assert "unknown revision 'nosuch'" in capsys.readouterr().err
    assert main(["bisect", "HEAD", "HEAD~1", "--repo", str(repo)]) == 2
    assert "not an ancestor" in capsys.readouterr().err
    assert main(["bisect", "HEAD~1", "HEAD", "--repo", str(repo), "--case", "chain"]) == 2
    assert "BINDINGS" in capsys.readouterr().err


def test_bad_is_any_increase_of_counts_and_a_significant_slowdown_of_times():
    from benchkill.bench.bisect import is_bad

    good = {"chain:50": [1000.0]}
    assert is_bad(good, {"chain:50": [1001.0]}, "instructions", None, 0.01)
    assert not is_bad(good, {"chain:50": [999.0]}, "instructions", None, 0.01)
    assert not is_bad(good, {"chain:50": [1004.0]}, "instructions", 1.005, 0.01)
    base = [1.0 + 0.001 * i for i in range(15)]
    assert is_bad({"c": base}, {"c": [v * 1.3 for v in base]}, "time", None, 0.01)
    assert not is_bad({"c": base}, {"c": [v * 1.05 for v in base]}, "time", None, 0.01)
    # a large ratio without significance is not bad
    assert not is_bad({"c": [1.0, 2.0]}, {"c": [1.5, 2.5]}, "time", None, 0.01)
