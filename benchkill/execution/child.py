"""The one protocol of benchkill's child processes: a task run in a fresh interpreter.

Every isolated task (a VM measurement, the allocation calibration, fuzzing's VM
equivalence) runs as ``python -m benchkill.execution.child WORKDIR``, so a crash, even a
segfault, is reported instead of taking the parent down, and one measurement cannot
disturb another.  The work directory holds:

``request.json``
    written by the parent (:func:`run_task`): ``{"task": NAME, ...}``, the task's options;
    the task's input files sit next to it (e.g. ``module.py``, ``inputs.npz``).
``stage``
    written by the child (:func:`set_stage`) before each stage of its work, so that a crash
    can be placed (:attr:`ChildOutcome.stage`).
``result.json``
    written by the child when the task returns (a Python exception is a result too:
    ``{"error": "...", "stage": ...}``); a crash leaves none, and the parent describes how
    the process ended, with the signal's name (:meth:`ChildOutcome.describe`).

A task is named by its entry point, ``"module:function"``, given by the caller and imported
in the child only, so that the protocol depends on no layer of its callers (fuzzing's VM
equivalence runs through it without execution importing fuzz):
``entry(request, work) -> dict`` returns the result.

The child runs with :data:`CHILD_ENV` added to the environment: a fixed
``MALLOC_MMAP_THRESHOLD_`` turns off glibc's dynamic threshold, so every large buffer is its
own mmap and ``free`` returns it to the system at once (see :mod:`benchkill.execution.peak`).

A child cannot import PyTorch unless its caller asks for it (``run_task(..., torch=True)``):
``tvm_ffi`` imports torch whenever it is installed (a work-around for a symbol clash on
Windows), which cost each child 1.3 s and torch's memory here.  A measuring child needs
none (the parent exports a model and keeps the framework's outputs); the two tasks that
may are the corpus check (its files may import torch themselves) and the parallel vm
pairs (:mod:`benchkill.bench.suites.vm_parallel`, which make real models in the child).
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchkill.errors import BenchkillError, one_line

REQUEST, STAGE, RESULT = "request.json", "stage", "result.json"
_ENTRY = "benchkill.execution.child"  # this module, as ``python -m`` runs it
_TORCH = "child_may_import_torch"  # the request's key for ``run_task``'s ``torch``

#: The form of a task's entry point: a benchkill module and a function in it.
_ENTRY_POINT = re.compile(r"benchkill(\.\w+)+:\w+")

#: Environment added to a child: a fixed mmap threshold (bytes) disables glibc's dynamic
#: threshold, so that freed large buffers go back to the system.
CHILD_ENV = {"MALLOC_MMAP_THRESHOLD_": "65536"}


@dataclass(frozen=True)
class ChildOutcome:
    """How a child process ended: exit code (negative: killed by that signal), whether it
    timed out (after ``timeout`` seconds), its stderr, the task's result (None: the child
    wrote none) and the last stage it entered (None: it wrote none)."""

    returncode: int | None
    timed_out: bool
    stderr: str
    result: dict[str, Any] | None = None
    stage: str | None = None
    timeout: float | None = None

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    @property
    def signal_name(self) -> str | None:
        """The name of the signal that killed the child (``"SIGSEGV"``), if one did."""
        if self.returncode is None or self.returncode >= 0:
            return None
        try:
            return signal.Signals(-self.returncode).name
        except ValueError:
            return f"signal {-self.returncode}"

    def describe(self) -> str:
        """One line saying why the child failed (empty if it did not)."""
        if self.timed_out:
            after = f" after {self.timeout:g} s" if self.timeout is not None else ""
            return f"child process timed out{after}"
        if self.signal_name is not None:
            # (the stderr of a crash is a native backtrace: no one line says more)
            return f"child process killed by {self.signal_name}"
        if self.returncode is None or self.returncode == 0:
            return ""
        what = f"child process exited with code {self.returncode}"
        return f"{what}: {one_line(self.stderr)}" if self.stderr.strip() else what

    def failure(self) -> str:
        """Why the child left no result, and in which stage."""
        what = self.describe() or "child process left no result"
        return f"{what} (during {self.stage or 'start'})"


#: A work directory's name: ``[.]benchkill-<kind>-pid<owner pid>-<random>`` (:func:`new_work_dir`).
_WORK_DIR = re.compile(r"\.?benchkill-[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)*?-pid(\d+)-[a-z0-9_]{8}")
_PREFIX = re.compile(r"benchkill-[A-Za-z0-9_]+(-[A-Za-z0-9_]+)*-")
_swept = False


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (a zombie counts; so does another user's)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_work_dirs(parent: Path | None = None, prefix: str = "") -> list[Path]:
    """Remove the work directories in ``parent`` (default: the temporary directory; only
    those whose name starts with ``prefix``) that this user's dead processes left (a
    SIGKILL runs no clean-up); returns them.

    A directory is its owner's by name (:func:`new_work_dir`); one of a live process, or
    of another user, is left alone.
    """
    parent = Path(parent) if parent is not None else Path(tempfile.gettempdir())
    removed = []
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return removed
    uid = os.getuid()
    for entry in entries:
        match = _WORK_DIR.fullmatch(entry.name) if entry.name.startswith(prefix) else None
        if match is None or int(match.group(1)) == os.getpid():
            continue
        try:
            if not entry.is_dir(follow_symlinks=False) or entry.stat().st_uid != uid:
                continue
        except OSError:
            continue
        if not pid_alive(int(match.group(1))):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(Path(entry.path))
    return removed


def new_work_dir(prefix: str, parent: Path | None = None, hidden: bool = False) -> Path:
    """Create the directory ``[.]<prefix>pid<pid>-<random>`` in ``parent`` (default: the
    temporary directory), the name :func:`remove_stale_work_dirs` knows its owner by."""
    if not _PREFIX.fullmatch(prefix):
        raise BenchkillError(f"a work directory prefix is 'benchkill-<kind>-', not {prefix!r}")
    name = f"{'.' if hidden else ''}{prefix}pid{os.getpid()}-"
    return Path(tempfile.mkdtemp(prefix=name, dir=parent))


@contextmanager
def work_dir(prefix: str) -> Iterator[Path]:
    """A fresh temporary work directory ``<prefix>pid<pid>-<random>``, removed afterwards.

    ``prefix`` is ``benchkill-<kind>-``.  The first call of a process removes the
    directories of dead processes first (:func:`remove_stale_work_dirs`), so a killed run
    leaves its (possibly large) work directory only until the next one starts.
    """
    global _swept
    if not _swept and _PREFIX.fullmatch(prefix):
        _swept = True
        remove_stale_work_dirs()
    path = new_work_dir(prefix)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


#: the children :func:`run_task` is waiting for (it may run in several threads at once)
_running: set[subprocess.Popen] = set()
_running_lock = threading.Lock()


def kill_running_children() -> None:
    """Kill every child a :func:`run_task` of this process is waiting for (a caller whose
    worker threads wait in :func:`run_task` calls it when interrupted); each of those
    :func:`run_task` calls then returns, its child killed by SIGKILL."""
    with _running_lock:
        running = list(_running)
    for proc in running:
        proc.kill()


def run_task(
    task: str, request: Mapping[str, Any], work: Path, timeout: float, torch: bool = False
) -> ChildOutcome:
    """Run the task whose entry point is ``task`` (``"benchkill.module:function"``) with the
    options ``request`` in a fresh child process working in ``work`` (which holds the
    task's input files), killed after ``timeout`` seconds; ``torch``: the child may import
    PyTorch (module docstring)."""
    if not isinstance(task, str) or not _ENTRY_POINT.fullmatch(task):
        raise BenchkillError(f"a child task is 'benchkill.module:function', not {task!r}")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise BenchkillError(f"timeout must be a positive number of seconds, not {timeout!r}")
    (work / REQUEST).write_text(json.dumps({**request, "task": task, _TORCH: bool(torch)}))
    env = dict(os.environ)
    for key, value in CHILD_ENV.items():
        env.setdefault(key, value)
    proc = subprocess.Popen(
        [sys.executable, "-m", _ENTRY, str(work)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
    )
    with _running_lock:
        _running.add(proc)
    try:
        stderr = proc.communicate(timeout=timeout)[1]
        returncode, timed_out = proc.returncode, False
    except subprocess.TimeoutExpired:
        proc.kill()
        stderr = proc.communicate()[1]
        returncode, timed_out = None, True
    except BaseException:  # interrupted: no orphan left running
        proc.kill()
        proc.wait()
        raise
    finally:
        with _running_lock:
            _running.discard(proc)
    result, stage = read_result(work)
    return ChildOutcome(returncode, timed_out, stderr or "", result, stage, timeout)


def read_result(work: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The result a child wrote in ``work`` (None: none) and the last stage it entered
    there (None: none)."""
    result_file, stage_file = work / RESULT, work / STAGE
    result = json.loads(result_file.read_text()) if result_file.exists() else None
    stage = stage_file.read_text() if stage_file.exists() else None
    return result, stage


# --- the child's side ------------------------------------------------------------------------


def set_stage(work: Path, name: str) -> None:
    """Record that the child enters stage ``name`` (read by the parent after a crash)."""
    (work / STAGE).write_text(name)


def error_text(exc: BaseException) -> str:
    """An exception of a task as a one-line result: ``ValueError: the line that says why``."""
    return f"{type(exc).__name__}: {one_line(str(exc), limit=1000)}"[:1000]


def main(argv: list[str]) -> int:
    """Entry point of a child: run the task of ``WORKDIR/request.json``, write the result."""
    work = Path(argv[1])
    try:
        request = json.loads((work / REQUEST).read_text())
        if not request.get(_TORCH):
            sys.modules.setdefault("torch", None)  # ``import torch`` raises ImportError
        module, _, function = request["task"].partition(":")
        result = getattr(importlib.import_module(module), function)(request, work)
    except Exception as exc:  # noqa: BLE001 - report, the parent decides
        traceback.print_exc()
        result = {"error": error_text(exc), "stage": "child"}
    write_result(work, result)
    return 0


def write_result(work: Path, result: dict[str, Any]) -> None:
    """Write ``result`` as ``work/result.json``, whole or not at all (a crash meanwhile
    leaves none)."""
    tmp = work / (RESULT + ".tmp")
    tmp.write_text(json.dumps(result))
    tmp.replace(work / RESULT)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
