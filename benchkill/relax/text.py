"""Reading and writing Relax modules as TVMScript, the one file format benchkill uses.

Not ``tvm.ir.save_json``/``load_json``: in apache-tvm 0.27.0.post1 ``save_json`` segfaults
on any Relax or TIR node, so JSON files of Relax modules cannot be made with this TVM.
"""

from __future__ import annotations

import gc
import os
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchkill.errors import BenchkillError, one_line

if TYPE_CHECKING:
    import tvm

#: A module file larger than this is refused unread.  The largest module benchkill's
#: inputs print (the 48-layer ``model`` decoder, lowered) is about 6 MB of TVMScript.
MAX_MODULE_BYTES = 256 << 20

_IMPORT_LINE = re.compile(
    r"^(from tvm\.script import (ir as I|relax as R|tirx as T)|import tvm)\s*$", re.M
)


def read_module(path: str | Path) -> tvm.IRModule:
    """The IRModule in the TVMScript file ``path``.

    The file may start with the usual ``from tvm.script import ... as I/R/T`` lines; a
    single printed ``@R.function`` is wrapped in a module as ``main``.
    """
    import tvm
    from tvm import relax

    path = Path(path)
    check_regular_file(path, MAX_MODULE_BYTES, "a TVMScript module")
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise BenchkillError(f"cannot read {path}: {reason}") from None
    if not text.strip():
        raise BenchkillError(f"{path} is empty, not a TVMScript module")
    parsed, error = _parse(_IMPORT_LINE.sub(r"# \g<0>", text))
    if error is not None:
        raise BenchkillError(f"cannot parse {path} as TVMScript: {error}")
    if isinstance(parsed, relax.Function):
        parsed = tvm.IRModule({"main": parsed})
    if not isinstance(parsed, tvm.IRModule):
        raise BenchkillError(f"{path} holds a {type(parsed).__name__}, not an IRModule")
    return parsed


def check_regular_file(path: str | Path, max_bytes: int, what: str) -> int:
    """The size of ``path``; BenchkillError unless it is a regular file of at most
    ``max_bytes`` (``what`` says what it should hold).  Checked before anything is read,
    as the results reader does: ``/dev/zero`` would be read until memory runs out, and a
    FIFO would block the reader forever."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise BenchkillError(f"cannot read {path}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(info.st_mode):
        raise BenchkillError(f"cannot read {path}: Is a directory, not {what}")
    if not stat.S_ISREG(info.st_mode):
        raise BenchkillError(f"{path} is not a regular file, not {what}")
    if info.st_size > max_bytes:
        raise BenchkillError(
            f"{path}: {info.st_size:,} bytes, larger than {max_bytes:,} for {what}"
        )
    return info.st_size


def _parse(text: str) -> tuple[Any, str | None]:
    """``(module, None)`` of TVMScript ``text``, or ``(None, the error in one line)``.

    A failed parse leaves TVM's BlockBuilder with open blocks, whose destructor logs a
    warning to the process's stderr (fd 2) when the error's traceback is freed; that
    happens here, with fd 2 sent nowhere, so the command's error stays one line."""
    import tvm

    try:
        return tvm.script.from_source(text), None
    except Exception as exc:  # the parser raises SyntaxError, DiagnosticError, ...
        error = one_line(exc)
    saved = os.dup(2)
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)
        gc.collect()  # the parser's frames, and the builder they hold, are freed here
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    return None, error


def module_text(mod: Any) -> str:
    """``mod`` as TVMScript, the form in which modules travel to child processes.

    Printing without metadata cannot carry tensor constants, so a module with a
    non-scalar constant is refused (pass such a tensor as an input instead).
    """
    import tvm
    from tvm import relax

    found: list[Any] = []

    def visit(expr: Any) -> None:
        ty = getattr(expr, "ty", None)
        if (
            isinstance(expr, tvm.ir.expr.Constant)
            and isinstance(ty, relax.TensorType)
            and ty.ndim != 0
        ):
            found.append(expr)

    for gv, fn in mod.functions_items():
        if isinstance(fn, relax.Function):
            relax.analysis.post_order_visit(fn, visit)
            if found:
                raise BenchkillError(
                    f"function {gv.name_hint!r} has a tensor constant; a module travels to a "
                    "child process as TVMScript, which cannot carry tensor constants "
                    "(make it an input)"
                )
    return mod.script()
