"""One writer per results file: an exclusive ``flock`` on a lock file next to it.

``benchkill run`` holds :func:`exclusive` on its output (a new file or a resumed one) for
the whole run, so a second run on the same file, started at the same moment or later,
gets one line and exit code 2 instead of writing over the first run's cases.  The lock
file ``.NAME.lock`` holds the owner's pid (for the message) and is removed when the lock
is released; a killed owner leaves it behind, and since the kernel released its lock
the next run takes it.  Holding the lock, the stale temporary files of a killed writer
are removed too.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from benchkill.errors import BenchkillError
from benchkill.results.atomic import remove_stale_temps


class Locked(BenchkillError):
    """Another process holds the lock of the file."""


def lock_path(path: Path) -> Path:
    """The lock file of ``path``: ``.NAME.lock`` in the same directory."""
    path = Path(path)
    return path.parent / f".{path.name}.lock"


def _holder(fd: int) -> str:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return ""
    return f" (pid {text})" if text.isdigit() else ""


def _acquire(lock: Path, what: Path) -> int:
    """An open descriptor of ``lock`` holding its flock; :class:`Locked` when taken."""
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise Locked(
                f"{what}: another benchkill run is writing it{holder}; "
                "wait for it to finish, or choose another file"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        # The owner before us may have removed the lock file after we opened it: then we
        # hold the lock of a file nobody else can see, and must take the current one.
        try:
            same = os.stat(lock).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)


@contextmanager
def exclusive(path: Path, create_dir: bool = False) -> Iterator[None]:
    """Hold the lock of ``path`` (with ``create_dir``, its directory is created if
    needed); a BenchkillError (:class:`Locked`) at once when another process holds it."""
    path = Path(path)
    lock = lock_path(path)
    try:
        if create_dir:
            path.parent.mkdir(parents=True, exist_ok=True)
        fd = _acquire(lock, path)
    except OSError as exc:
        raise BenchkillError(f"{path}: cannot lock: {exc.strerror or exc}") from None
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        remove_stale_temps(path)
        yield
    finally:
        try:
            os.unlink(lock)  # still ours: nobody else takes it while we hold the flock
        except OSError:
            pass
        os.close(fd)
