"""Creating files that never replace another one (foundation: every layer may use it).

Each function creates ``target`` only if nothing is there: an existing file, link or
directory makes it raise FileExistsError and is left as it was, even when another
process creates it at the same moment.  Where the file system has hard links the new
file appears whole (a hidden copy next to it is linked to its name); where it has none
the file is created with ``O_EXCL`` and then written, so a reader may see it partial,
but nothing is ever replaced.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from pathlib import Path

#: errno values of a file system without hard links (vfat, some FUSE and network ones)
_NO_HARD_LINKS = (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK)


def link_new(source: str | os.PathLike, target: str | os.PathLike) -> bool:
    """Create ``target`` as a hard link of ``source``: True; False where the file system
    has no hard links.  FileExistsError if ``target`` exists (it is never replaced)."""
    try:
        os.link(source, target)
        return True
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise
    return False


def copy_exclusive(source: str | os.PathLike, target: str | os.PathLike, mode: int = 0o644) -> None:
    """Create ``target`` with ``O_EXCL`` and copy ``source`` into it, synced; a reader may
    see it partial meanwhile (the fallback where there are no hard links)."""
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "wb") as out, open(source, "rb") as src:
            shutil.copyfileobj(src, out)
            out.flush()
            os.fsync(out.fileno())
    except BaseException:
        os.unlink(target)  # ours: O_EXCL created it
        raise


def place_new(staged: str | os.PathLike, target: str | os.PathLike) -> None:
    """Put the file ``staged`` (on ``target``'s file system) at ``target``: a hard link,
    or a copy where there are none; ``staged`` stays where it is."""
    if not link_new(staged, target):
        copy_exclusive(staged, target, os.stat(staged).st_mode & 0o777)


def copy_new(source: str | os.PathLike, target: str | os.PathLike) -> None:
    """Create ``target`` with the bytes of ``source``, from any file system: copied to a
    hidden file next to ``target`` first, then :func:`place_new`."""
    target = Path(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out, open(source, "rb") as src:
            shutil.copyfileobj(src, out)
        os.chmod(tmp, os.stat(source).st_mode & 0o777)
        place_new(tmp, target)
    finally:
        os.unlink(tmp)


def link_or_copy_new(source: str | os.PathLike, target: str | os.PathLike) -> None:
    """``target`` as a hard link of ``source`` (one file system), or a copy where the
    file system has no hard links."""
    if not link_new(source, target):
        copy_exclusive(source, target, os.stat(source).st_mode & 0o777)
