"""The child-process protocol: how an outcome is described, the request, stage and result
files, and the task registry."""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys

import pytest

from benchkill.errors import BenchkillError
from benchkill.execution import child
from benchkill.execution.child import ChildOutcome, run_task, work_dir
from benchkill.execution.peak import peak_supported


@pytest.mark.parametrize(
    "outcome, text",
    [
        (ChildOutcome(-11, False, "Segmentation fault\n"), "killed by SIGSEGV"),
        (
            ChildOutcome(3, False, "Traceback\nValueError: boom\n"),
            "exited with code 3: ValueError: boom",
        ),
        (ChildOutcome(3, False, ""), "exited with code 3"),
        (ChildOutcome(None, True, ""), "timed out"),
        (ChildOutcome(None, True, "", timeout=0.5), "timed out after 0.5 s"),
        (ChildOutcome(-9, False, ""), "killed by SIGKILL"),
        (ChildOutcome(0, False, "noise"), ""),
    ],
)
def test_child_outcome_describes_how_it_ended(outcome, text):
    assert outcome.describe() == (f"child process {text}" if text else "")
    assert outcome.ok is (text == "")


def test_a_failure_names_the_stage():
    crashed = ChildOutcome(-11, False, "", stage="run")
    assert crashed.signal_name == "SIGSEGV"
    assert crashed.failure() == "child process killed by SIGSEGV (during run)"
    assert ChildOutcome(0, False, "").failure() == "child process left no result (during start)"


ALLOCATE = "benchkill.execution.peak:allocation_task"


@pytest.mark.parametrize(
    "entry",
    [
        ALLOCATE,
        "benchkill.execution.vm_task:vm_task",
        "benchkill.fuzz.buildable:vm_equivalence_task",
    ],
)
def test_the_callers_task_entries_exist(entry):
    module, _, function = entry.partition(":")
    assert callable(getattr(importlib.import_module(module), function))


@pytest.mark.skipif(not peak_supported(), reason="needs Linux /proc/self/clear_refs")
def test_an_allocation_task_round_trip():
    with work_dir("benchkill-test-") as work:
        outcome = run_task(ALLOCATE, {"nbytes": 1 << 20}, work, timeout=120)
        request = json.loads((work / child.REQUEST).read_text())
    assert request == {"nbytes": 1 << 20, "task": ALLOCATE, child._TORCH: False}
    assert outcome.ok and outcome.stage is None
    assert set(outcome.result) == {"peak_bytes", "floor_bytes"}
    assert not work.exists()


@pytest.mark.parametrize("torch", [False, True])
def test_a_child_imports_torch_only_when_asked(tmp_path, torch):
    """tvm_ffi imports torch whenever it can (1.3 s a child here): a child blocks it unless
    its caller allows it, and tvm_ffi still imports without it."""
    (tmp_path / child.REQUEST).write_text(
        json.dumps({"nbytes": 4096, "task": ALLOCATE, child._TORCH: torch})
    )
    program = (
        "import sys\n"
        "from benchkill.execution.child import main, read_result\n"
        f"main(['child', {str(tmp_path)!r}])\n"
        "import tvm_ffi\n"
        "from pathlib import Path\n"
        f"assert 'peak_bytes' in read_result(Path({str(tmp_path)!r}))[0]\n"
        "print('blocked' if sys.modules.get('torch', 0) is None else 'allowed')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["allowed" if torch else "blocked"]


def test_an_exception_in_the_child_is_a_result():
    """A Python error of the task is reported in result.json, with its one line."""
    with work_dir("benchkill-test-") as work:
        outcome = run_task(ALLOCATE, {"nbytes": "many"}, work, timeout=120)
    assert outcome.ok
    assert outcome.result["stage"] == "child"
    assert outcome.result["error"].startswith("ValueError: invalid literal for int()")


def test_bad_requests_raise_before_any_child(tmp_path):
    with pytest.raises(BenchkillError, match="a child task is 'benchkill.module:function'"):
        run_task("nope", {}, tmp_path, timeout=1)
    with pytest.raises(BenchkillError, match="a child task is"):
        run_task("os:system", {}, tmp_path, timeout=1)
    with pytest.raises(BenchkillError, match="timeout must be a positive number"):
        run_task(ALLOCATE, {"nbytes": 1}, tmp_path, timeout=0)
    assert list(tmp_path.iterdir()) == []


# --- work directories and what dead processes left ---------------------------------------


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_work_dirs_are_named_after_their_owner_and_removed(tmp_path, monkeypatch):
    monkeypatch.setattr(child.tempfile, "tempdir", str(tmp_path))
    with work_dir("benchkill-vm-") as work:
        assert work.parent == tmp_path
        assert re.fullmatch(rf"benchkill-vm-pid{os.getpid()}-[a-z0-9_]{{8}}", work.name)
        (work / "big").write_bytes(b"x" * 1000)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(BenchkillError, match="benchkill-<kind>-"):
        with work_dir("vm"):
            pass


def test_directories_of_dead_processes_are_removed_at_the_next_start(tmp_path, monkeypatch):
    dead, alive = _dead_pid(), os.getppid()
    stale = tmp_path / f"benchkill-vm-pid{dead}-abcd1234"
    stale_hidden = tmp_path / f".benchkill-stage-pid{dead}-abcd1234"
    live = tmp_path / f"benchkill-vm-pid{alive}-abcd1234"
    mine = tmp_path / f"benchkill-alloc-pid{os.getpid()}-abcd1234"
    unrelated = [tmp_path / "benchkill-vm-1234-abcd1234", tmp_path / f"other-pid{dead}-abcd1234"]
    for d in (stale, stale_hidden, live, mine, *unrelated):
        d.mkdir()
        (d / "module.py").write_text("x")
    (tmp_path / f"benchkill-vm-pid{dead}-file0000").write_text("a file, not a directory")
    removed = child.remove_stale_work_dirs(tmp_path)
    assert sorted(removed) == sorted([stale, stale_hidden])
    assert not stale.exists() and live.exists() and mine.exists()
    assert all(d.exists() for d in unrelated)
    # the first work_dir of a process sweeps the temporary directory
    again = tmp_path / f"benchkill-fuzz-pid{dead}-zzzz9999"
    again.mkdir()
    monkeypatch.setattr(child.tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(child, "_swept", False)
    with work_dir("benchkill-test-"):
        assert not again.exists()
    assert child.remove_stale_work_dirs(tmp_path, prefix=".benchkill-stage-") == []
