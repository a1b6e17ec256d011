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


@pytest.mark.parametrize("how", ["SIGTERM", "SIGINT"])
def test_interrupted_bisect_removes_its_worktree(tmp_path, how):
    """A commit whose code hangs; the bisect is stopped while it measures GOOD."""
    import signal
    import sys
    import time

    if not any(
        os.access(os.path.join(d, "valgrind"), os.X_OK)
        for d in os.environ.get("PATH", "").split(os.pathsep)
    ):
        pytest.skip("valgrind is not installed (bisect checks it before any checkout)")
    repo = tmp_path / "repo"
    code = repo / "benchkill" / "bench"
    code.mkdir(parents=True)
    (repo / "benchkill" / "__init__.py").write_text("")
    (code / "__init__.py").write_text("")
    (code / "instructions.py").write_text(
        "import time\n\ndef count_cases(*args, **kwargs):\n    time.sleep(300)\n"
    )
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "hangs")
    git(repo, "commit", "-q", "--allow-empty", "-m", "still hangs")
    elsewhere, temporary = tmp_path / "cwd", tmp_path / "tmp"
    elsewhere.mkdir()
    temporary.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchkill", "bisect", "HEAD~1", "HEAD", "--repo", str(repo)],
        cwd=elsewhere,
        env={**os.environ, "PYTHONPATH": str(PROJECT), "TMPDIR": str(temporary)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        for _ in range(600):  # the GOOD commit's worktree appears
            if git(repo, "worktree", "list").count("\n") == 1:
                break
            time.sleep(0.1)
        else:
            pytest.fail("no worktree was made")
        time.sleep(1.0)  # the child is measuring
        proc.send_signal(getattr(signal, how))
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert git(repo, "worktree", "list").count("\n") == 0
    assert git(repo, "status", "--porcelain") == ""
    assert list(temporary.iterdir()) == []  # the worktree's folder is gone too


COUNTING_CODE = """import pathlib
from types import SimpleNamespace

def count_cases(cases, impl, repeats):
    value = int((pathlib.Path(__file__).parents[2] / "value.txt").read_text())
    return [SimpleNamespace(counts=[value]) for _ in cases]
"""


def counting_repo(tmp_path, values, broken=()):
    """A repository whose code counts ``values[i]`` at commit i (a SyntaxError at the
    commits in ``broken``); returns the shas, oldest first."""
    repo = tmp_path / "repo"
    code = repo / "benchkill" / "bench"
    code.mkdir(parents=True)
    (repo / "benchkill" / "__init__.py").write_text("")
    (code / "__init__.py").write_text("")
    git(repo, "init", "-q")
    shas = []
    for i, value in enumerate(values):
        (repo / "value.txt").write_text(str(value))
        text = COUNTING_CODE + ("\nthis is not Python\n" if i in broken else "")
        (code / "instructions.py").write_text(text)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "--allow-empty", "-m", f"commit {i}")
        shas.append(git(repo, "rev-parse", "HEAD"))
    return repo, shas


def bisect_cli(repo, shas, tmp_path):
    import sys

    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "benchkill", "bisect", shas[0], shas[-1], "--repo", str(repo)],
        cwd=elsewhere,
        env={**os.environ, "PYTHONPATH": str(PROJECT)},
        capture_output=True,
        text=True,
        timeout=300,
    )


needs_valgrind = pytest.mark.skipif(
    not any(
        os.access(os.path.join(d, "valgrind"), os.X_OK)
        for d in os.environ.get("PATH", "").split(os.pathsep)
    ),
    reason="valgrind is not installed (bisect checks it before any checkout)",
)


@needs_valgrind
def test_a_commit_that_fails_is_skipped_end_to_end(tmp_path):
    values = [100, 100, 100, 100, 100, 120, 120, 120]
    repo, shas = counting_repo(tmp_path, values, broken={6})
    done = bisect_cli(repo, shas, tmp_path)
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stderr
    assert lines[-1] == f"first bad commit: {shas[5]}"
    assert any(line.startswith(f"{shas[6]} skip (") for line in lines)  # measured, skipped
    assert len(lines) - 2 <= measured_at_most(len(shas)) + 1  # one skip costs one more
    assert git(repo, "worktree", "list").count("\n") == 0


@needs_valgrind
def test_a_skip_next_to_the_first_bad_commit_leaves_two_candidates(tmp_path):
    values = [100, 100, 100, 100, 100, 120, 120, 120]
    repo, shas = counting_repo(tmp_path, values, broken={4})
    done = bisect_cli(repo, shas, tmp_path)
    assert done.returncode == 3, done.stderr
    assert done.stdout.splitlines()[-2:] == [f"  {shas[4]}", f"  {shas[5]}"]


@needs_valgrind
def test_no_regression_in_the_range_exits_1(tmp_path):
    repo, shas = counting_repo(tmp_path, [100, 100, 99, 100])
    done = bisect_cli(repo, shas, tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[-1].startswith("no regression")
