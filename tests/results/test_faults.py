"""SIGKILL at random moments (a fixed seed) in 20 real runs of a fake suite whose cases
take a little real time: every file left behind loads, ``--resume`` completes it, no
finished case is lost or measured twice, and no temporary file or directory is left."""

import os
import random
import signal
import time

from benchkill.results.store import load
from tests.results.real_runs import launch, prepare

CASES, SECONDS, RUNS, SEED = 5, 0.08, 20, 20261201


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
        time.sleep(rng.uniform(0.1, 0.7))  # start-up takes ~0.2-0.3 s, the cases 0.4 s
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        left_behind.append(len(os.listdir(tmp)))  # a work directory, if killed in a case
        path = cwd / "r.json"
        before = load(path) if path.exists() else None  # whatever is there loads
        done = len(before.cases) if before else -1
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
    # the kills landed before the file existed (-1), between cases and after the last
    assert min(finished_before_kill) <= 0 and any(0 < d < CASES for d in finished_before_kill)
    assert any(left_behind)  # and some inside a case, leaving its work directory
    print("cases finished before each kill:", finished_before_kill)
    print("work directories left by each kill:", left_behind)
