"""The commands' output files: checked before anything is written, written atomically.

No command writes over a file that exists, whatever ``--out`` says (an input, a results
file, a report or figure of an earlier run, anything): :func:`refuse_overwrite` turns that
into one line and exit code 2 before any work is done, and the file is then created by a
hard link that fails if another process created it in the meantime, so two commands run at
once never replace each other's file either.  Files are written whole or not at all
(:func:`benchkill.results.atomic.write_atomic`, with the user's umask), figures are drawn
into a hidden staging directory and linked into place (:func:`staged_directory`), and
every OS error while writing becomes one line naming the file: exit code 3 when the
machine ran out of room or failed (a full disk, an I/O error), else 2 (a place the user
cannot write to).  :func:`shown` is a path as stdout can print it (a file name need not
be UTF-8).
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from benchkill.errors import BenchkillError, MeasurementError
from benchkill.execution.child import new_work_dir, remove_stale_work_dirs
from benchkill.files import place_new
from benchkill.results.atomic import write_atomic

#: How a file benchkill wrote starts (``{"schema_version": N, ...``, also when truncated).
_BENCHKILL_HEAD = re.compile(rb'\s*\{\s*"schema_version"\s*:')
#: asv results files are small; larger JSON files are not parsed to find out.
_SNIFF_LIMIT = 64 << 20
#: errno values of a write the machine could not make (not the place the user chose).
_NOT_WRITTEN = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG})


def shown(path: object) -> str:
    """``path`` as text any stdout can print: bytes that are not UTF-8 become U+FFFD."""
    return str(path).encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def is_results_file(path: Path) -> bool:
    """Whether ``path`` is a benchkill results file (even a truncated one) or an asv one."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            return False
        with open(path, "rb") as f:
            head = f.read(4096)
            if _BENCHKILL_HEAD.match(head):
                return True
            if not head.lstrip().startswith(b"{") or info.st_size > _SNIFF_LIMIT:
                return False
            f.seek(0)
            data = json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(data, dict) and "result_columns" in data and "results" in data


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return Path(os.path.abspath(a)) == Path(os.path.abspath(b))


def _check_parents(path: Path) -> None:
    """The nearest existing ancestor of ``path`` must be a directory."""
    parent = Path(os.path.abspath(path)).parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise BenchkillError(f"{path}: cannot create it, {parent} is not a directory")


def refuse_overwrite(out: Path, inputs: Iterable[Path] = (), what: str = "the output") -> None:
    """One line and exit 2 when ``out`` (a file to create) exists (the message says when it
    is one of ``inputs`` or a results file), is a directory, or cannot be created."""
    out = Path(out)
    for source in inputs:
        if _same_file(out, Path(source)):
            raise BenchkillError(f"{out}: is an input of this command; {what} would overwrite it")
    if out.is_dir():
        raise BenchkillError(f"{out}: is a directory; {what} must be a file")
    if is_results_file(out):
        raise BenchkillError(f"{out}: is a benchkill results file; {what} would overwrite it")
    if os.path.lexists(out):
        raise _exists(out)
    _check_parents(out)


def _exists(path: Path) -> BenchkillError:
    return BenchkillError(f"{path}: already exists; choose another --out or remove it")


def check_new_file(path: Path, what: str = "results file") -> None:
    """One line and exit 2 unless ``path`` can be a new file (``benchkill run --out``)."""
    path = Path(path)
    if path.is_dir():
        raise BenchkillError(f"{path}: is a directory; the {what} must be a file")
    if os.path.lexists(path):
        raise BenchkillError(f"{path}: already exists; choose another --out or use --resume")
    _check_parents(path)


def check_directory(path: Path, inputs: Iterable[Path] = (), what: str = "output") -> None:
    """One line and exit 2 unless ``path`` is a directory or can be created as one."""
    path = Path(path)
    for source in inputs:
        if _same_file(path, Path(source)):
            raise BenchkillError(f"{path}: is an input of this command, not an {what} directory")
    if path.exists() and not path.is_dir():
        raise BenchkillError(f"{path}: exists and is not a directory")
    _check_parents(path)


@contextmanager
def writing(path: Path, what: str = "write", exact: bool = True) -> Iterator[None]:
    """OS errors of the block become one line naming the file (``exact``: the one the
    error names, if any; else ``path``): a :class:`MeasurementError` when the disk is
    full or failed, else a :class:`BenchkillError`."""
    try:
        yield
    except OSError as exc:
        name = exc.filename if isinstance(exc.filename, str) else None
        temporary = name is not None and os.path.basename(name).endswith(".tmp")
        where = name if exact and name is not None and not temporary else path
        error = MeasurementError if exc.errno in _NOT_WRITTEN else BenchkillError
        raise error(f"{where}: cannot {what}: {_reason(exc)}") from None


def write_text(out: Path, text: str, inputs: Iterable[Path] = (), what: str = "the output") -> None:
    """Create ``out`` with ``text``, whole, after :func:`refuse_overwrite`; one line and exit
    2 if another process created it meanwhile."""
    refuse_overwrite(out, inputs, what)
    with writing(out):
        try:
            write_atomic(Path(out), text, exclusive=True)
        except FileExistsError:
            raise _exists(out) from None


@contextmanager
def staged_directory(
    out_dir: Path, inputs: Iterable[Path] = (), what: str = "output"
) -> Iterator[Path]:
    """A hidden directory inside ``out_dir`` to write files into; when the block ends
    without an error they are linked into ``out_dir`` (each after :func:`refuse_overwrite`;
    none if one of them was created meanwhile),
    and the staging directory is removed in any case.  ``out_dir`` is created when
    needed, and removed again if it was and nothing was moved into it.  A killed
    command's staging directory is removed by the next one (its name carries its pid).
    ``what`` names the directory in an error (:func:`check_directory`).
    """
    out_dir = Path(out_dir)
    inputs = list(inputs)
    check_directory(out_dir, inputs, what)
    created = not out_dir.exists()
    with writing(out_dir, "write into it", exact=False):
        out_dir.mkdir(parents=True, exist_ok=True)
        remove_stale_work_dirs(out_dir, prefix=".benchkill-stage-")
        stage = new_work_dir("benchkill-stage-", out_dir, hidden=True)
    moved: list[str] = []
    try:
        yield stage
        names = sorted(p.name for p in stage.iterdir())
        for name in names:
            refuse_overwrite(out_dir / name, inputs)
        with writing(out_dir):
            try:
                for name in names:
                    place_new(stage / name, out_dir / name)
                    moved.append(name)
            except FileExistsError as exc:  # created by another process since the check
                for name in moved:  # the files this command placed, not the other's
                    with suppress(OSError):
                        os.unlink(out_dir / name)
                moved.clear()
                raise _exists(Path(exc.filename2 or out_dir)) from None
    finally:
        shutil.rmtree(stage, ignore_errors=True)
        if created and not moved:
            try:
                out_dir.rmdir()
            except OSError:
                pass
