"""Files written whole or not at all: atomic replacement and exclusive creation.

:func:`write_atomic` writes a temporary file next to the target, syncs it and renames it
over the target, so a reader (or a killed writer) leaves the old file or the new one,
never half of one.  New files get the user's umask (0644 typically), replaced files keep
their mode.  Temporary files are hidden (``.NAME.XXXX.tmp``); a writer killed between
creating and renaming one leaves it behind, and :func:`remove_stale_temps` removes them
(``benchkill run`` does, holding the file's lock).
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from benchkill.files import link_new


def new_file_mode() -> int:
    """The mode a new file gets under the process's umask (0644 with the usual 022)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def temp_name_prefix(path: Path) -> str:
    """The prefix of :func:`write_atomic`'s temporary files for ``path`` (hidden, next to it)."""
    return f".{Path(path).name}."


def remove_stale_temps(path: Path) -> None:
    """Remove temporary files a killed writer of ``path`` left (call with ``path`` locked)."""
    path = Path(path)
    prefix = temp_name_prefix(path)
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith(prefix) and entry.name.endswith(".tmp"):
            try:
                os.unlink(entry.path)
            except OSError:
                pass


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_atomic(path: Path, text: str, *, exclusive: bool = False) -> None:
    """Replace ``path`` by ``text`` at once: readers see the old file or the new one.

    A new file gets the mode of the user's umask, a replaced one keeps its mode.  With
    ``exclusive`` the file must not exist yet (FileExistsError otherwise, and nothing is
    written): it is created with its full content by a hard link, so no reader, and no
    second writer, ever sees it empty.  Names that are not UTF-8 (surrogate escapes of
    the file system's bytes) are written back as those bytes.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = new_file_mode()
    if not exclusive:
        try:
            mode = stat.S_IMODE(os.stat(path).st_mode)
        except FileNotFoundError:
            pass
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=temp_name_prefix(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(text)
            f.flush()
            os.fchmod(f.fileno(), mode)
            os.fsync(f.fileno())
        if exclusive:
            _link_exclusive(tmp, path, text, mode)
            os.unlink(tmp)
        else:
            os.replace(tmp, path)
        _fsync_dir(path.parent)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _link_exclusive(tmp: str, path: Path, text: str, mode: int) -> None:
    """Create ``path`` as a hard link of the written ``tmp``; where the file system has
    no hard links, create it with O_EXCL and write it (readers may then see it partial)."""
    if link_new(tmp, path):
        return
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
