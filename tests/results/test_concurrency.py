"""Two ``benchkill run`` processes on one output file, started together, ten times: each
time exactly one proceeds, the other gets one line and exit code 2, and the file holds
all the first run's cases, measured by it alone."""

import os

from benchkill.results.store import load
from tests.results.real_runs import launch, prepare

CASES, SECONDS, TRIALS = 3, 0.05, 10


def test_two_runs_on_one_file_exactly_one_proceeds(tmp_path):
    prepare(tmp_path)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    refusals = []
    for trial in range(TRIALS):
        cwd = tmp_path / f"trial-{trial}"
        cwd.mkdir()
        (tmp_path / "go").unlink(missing_ok=True)
        procs = [launch(tmp_path, ["run", "--out", "same.json"], CASES, SECONDS, tmp, cwd)]
        procs.append(launch(tmp_path, ["run", "--out", "same.json"], CASES, SECONDS, tmp, cwd))
        (tmp_path / "go").touch()  # both start now
        outputs = [p.communicate(timeout=120) for p in procs]
        codes = [p.returncode for p in procs]
        assert sorted(codes) == [0, 2], (trial, codes, outputs)
        winner, loser = (0, 1) if codes[0] == 0 else (1, 0)
        assert outputs[winner][0].startswith("wrote same.json (3 cases, 6 records)")
        err = outputs[loser][1]
        assert "Traceback" not in err and len(err.splitlines()) == 1, err
        assert err.startswith("benchkill: error: same.json: ")
        assert "another benchkill run is writing it" in err or "already exists" in err, err
        refusals.append("locked" if "another" in err else "exists")
        results = load(cwd / "same.json")
        assert [c.key for c in results.cases] == [f"fake:case[i={i}]" for i in range(CASES)]
        assert {r.extra["pid"] for r in results.records} == {procs[winner].pid}
        assert results.settings.finished_at is not None
        assert os.listdir(cwd) == ["same.json"]  # no lock file, no temporary file
    assert os.listdir(tmp) == []  # every work directory removed
    print("refusals:", refusals)
