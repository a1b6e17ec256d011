"""The lock of a results file: one holder at a time, across processes; a dead holder's
lock file is taken over; the lock file goes when the lock is released."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchkill.results.atomic import write_atomic
from benchkill.results.locking import Locked, exclusive, lock_path

PROJECT = Path(__file__).resolve().parents[2]

HOLD = """
import sys, time
from pathlib import Path
from benchkill.results.locking import exclusive
with exclusive(Path(sys.argv[1])):
    print("locked", flush=True)
    time.sleep(60)
"""


def test_a_second_holder_is_refused_naming_the_first(tmp_path):
    path = tmp_path / "r.json"
    with exclusive(path):
        assert lock_path(path).read_text().strip() == str(os.getpid())
        with pytest.raises(
            Locked, match=rf"r.json: another benchkill run is writing it \(pid {os.getpid()}\)"
        ):
            with exclusive(path):
                pass
    assert not lock_path(path).exists()  # released and removed
    with exclusive(path):  # free again
        pass
    assert os.listdir(tmp_path) == []


def test_the_lock_holds_across_processes_and_a_killed_holders_lock_is_taken_over(tmp_path):
    path = tmp_path / "r.json"
    env = dict(os.environ, PYTHONPATH=str(PROJECT))
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path)], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(Locked, match=f"pid {holder.pid}"):
            with exclusive(path):
                pass
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    assert lock_path(path).exists()  # a SIGKILL leaves the file, not the lock
    with exclusive(path):
        assert lock_path(path).read_text().strip() == str(os.getpid())
    assert not lock_path(path).exists()


def test_taking_the_lock_removes_a_killed_writers_temporary_files(tmp_path):
    path = tmp_path / "r.json"
    write_atomic(path, "{}")
    (tmp_path / ".r.json.x1y2z3.tmp").write_text("half a file")
    with exclusive(path):
        names = sorted(os.listdir(tmp_path))
    assert names == [".r.json.lock", "r.json"]


def test_a_lock_file_removed_under_a_waiting_opener_is_not_trusted(tmp_path, monkeypatch):
    """The previous owner removed the lock file after we opened it: we must lock the new
    file, or two runs would each hold "the" lock."""
    import benchkill.results.locking as locking

    path = tmp_path / "r.json"
    real_flock = locking.fcntl.flock
    calls = []

    def flock(fd, op):
        real_flock(fd, op)
        if not calls:  # the first file we locked is unlinked at once, as its owner would
            os.unlink(lock_path(path))
        calls.append(os.fstat(fd).st_ino)

    monkeypatch.setattr(locking.fcntl, "flock", flock)
    with exclusive(path):
        assert len(calls) == 2
        assert os.stat(lock_path(path)).st_ino == calls[1]
