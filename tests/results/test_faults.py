"""SIGKILL at random moments (a fixed seed) in 20 real runs of a fake suite whose cases
take a little real time: every file left behind loads, ``--resume`` completes it, no
finished case is lost or measured twice, and no temporary file or directory is left.

The moments are chosen by what the run has done, not by the clock (the machine may be
slow or busy): right after the start, while a case runs (its work directory exists), or
at a random moment after the k-th case is saved."""

import os
import random
import signal
import time

from benchkill.results.store import load
from tests.results.real_runs import launch, prepare

CASES, SECONDS, RUNS, SEED = 5, 0.08, 20, 20261201


def _wait(proc, done, *args, deadline: float = 60.0) -> bool:
    """Poll until ``done(*args)`` (or the process ends, or the deadline passes)."""
    end = time.monotonic() + deadline
    while proc.poll() is None and time.monotonic() < end:
        if done(*args):
            return True
        time.sleep(0.005)
    return False


def _in_a_case(tmp) -> bool:
    return any(n.startswith("benchkill-fake-") for n in os.listdir(tmp))


def _saved_cases(path) -> int:
    try:
        return len(load(path).cases) if path.exists() else -1
    except Exception:  # noqa: BLE001 (never torn: saved by rename; only not there yet)
        return -1


def _tokens(results):
    return {(r.case, r.metric): (r.extra["pid"], r.extra["token"]) for r in results.records}


def test_sigkill_at_random_moments_loses_nothing_and_resume_completes(tmp_path):
    prepare(tmp_path)
    (tmp_path / "go").touch()
    rng = random.Random(SEED)
    keys = [f"fake:case[i={i}]" for i in range(CASES)]
    finished_before_kill, left_behind = [], []
    for run in range(RUNS):
        cwd, tmp = tmp_path / f"run-{run}", tmp_path / f"tmp-{run}"
        cwd.mkdir()
        tmp.mkdir()
        proc = launch(tmp_path, ["run", "--out", "r.json"], CASES, SECONDS, tmp, cwd)
        kind, at_least = run % 3, -1
        if kind == 0:  # during start-up
            time.sleep(rng.uniform(0.0, 0.05))
        elif kind == 1:  # inside a case
            assert _wait(proc, _in_a_case, tmp)
        else:  # some time after the k-th case was saved
            at_least = rng.randint(1, CASES - 1)
            assert _wait(proc, lambda path, k: _saved_cases(path) >= k, cwd / "r.json", at_least)
            time.sleep(rng.uniform(0.0, SECONDS))
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        left_behind.append(len(os.listdir(tmp)))  # a work directory, if killed in a case
        path = cwd / "r.json"
        before = load(path) if path.exists() else None  # whatever is there loads
        done = len(before.cases) if before else -1
        assert done >= at_least  # a saved case is never lost
        finished_before_kill.append(done)
        argv = ["run", "--resume", "r.json"] if before else ["run", "--out", "r.json"]
        again = launch(tmp_path, argv, CASES, SECONDS, tmp, cwd)
        out, err = again.communicate(timeout=120)
        assert again.returncode == 0, (run, done, out, err)
        after = load(path)
        assert [c.key for c in after.cases] == keys  # complete, each case once
        assert len(after.records) == 2 * CASES == len(_tokens(after))
        if before:
            # the cases finished before the kill are kept as they were measured ...
            kept = _tokens(before)
            assert {k: v for k, v in _tokens(after).items() if k in kept} == kept
            assert after.settings.started_at == before.settings.started_at
            # ... and only the others were measured by the resumed run
            by_resume = {k for k, (pid, _) in _tokens(after).items() if pid == again.pid}
            assert by_resume == set(_tokens(after)) - set(kept)
        assert sorted(os.listdir(cwd)) == ["r.json"], (run, done)  # no lock, no .tmp
        assert os.listdir(tmp) == [], (run, done)  # the killed run's work directory is gone
    # kills before the file existed (or held a case) and inside cases, which leave their
    # work directory behind for the next run to remove
    assert min(finished_before_kill) <= 0
    assert any(left_behind[1::3])
    print("cases finished before each kill:", finished_before_kill)
    print("work directories left by each kill:", left_behind)
