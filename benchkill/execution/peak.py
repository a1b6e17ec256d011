"""The measured peak of resident memory (Linux), and its calibration.

:func:`peak_of` runs a callable and returns how far the process's resident set rose
above where it stood just before: it reads ``VmRSS``, writes ``5`` to
``/proc/self/clear_refs`` (which resets the kernel's high-water mark ``VmHWM`` to the
current RSS), runs the callable, then reads ``VmHWM``.  The kernel raises ``VmHWM``
whenever pages are unmapped and on reading, so it holds the true peak of the call
(within the kernel's per-CPU RSS counter slack, a few hundred KB).  Everything
resident before the call (the interpreter, TVM, the compiled module, the inputs)
cancels out.  Pages count only once written, which VM tensors always are.

Measurements run in a child process (:mod:`benchkill.execution.child`) whose environment
fixes glibc's mmap threshold: without it glibc keeps freed 16 MB buffers in its heap and
reuses them, and the naive allocator's peak (or the pooled allocator's after its pool is
cleared) would be hidden by memory left over from an earlier run.  The VM's pooled
allocator keeps freed buffers in a pool and hands them out again for a request of the
same page-rounded size, so its resident peak is the pool's high-water mark: the largest
total the program held at once when its buffers have one size, which is exactly what
kills lower (see :mod:`benchkill.analysis.liveness` for mixed sizes).
:func:`measure_allocation` checks the method against a known allocation.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from benchkill.errors import BenchkillError, check_int
from benchkill.execution.child import run_task, work_dir

T = TypeVar("T")

_CLEAR_REFS = "/proc/self/clear_refs"
_STATUS = "/proc/self/status"
_STATM = "/proc/self/statm"
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def peak_supported() -> bool:
    """True where :func:`peak_of` works (Linux with a writable ``clear_refs``)."""
    return os.access(_CLEAR_REFS, os.W_OK) and os.path.exists(_STATUS)


def resident_bytes() -> int:
    """The resident set size of this process, in bytes (cheap: one read of statm)."""
    with open(_STATM) as f:
        return int(f.read().split()[1]) * _PAGE


def _status_bytes(key: str) -> int:
    with open(_STATUS) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise BenchkillError(f"{_STATUS} has no {key} line")


def peak_of(fn: Callable[[], T]) -> tuple[T, int]:
    """Run ``fn()``; return its result and the peak rise of resident memory in bytes.

    The result is kept alive until the peak has been read, so it counts in the peak.
    """
    if not peak_supported():
        raise BenchkillError("peak memory needs Linux with a writable /proc/self/clear_refs")
    before = _status_bytes("VmRSS")
    with open(_CLEAR_REFS, "w") as f:
        f.write("5")
    result = fn()
    peak = _status_bytes("VmHWM")
    return result, max(0, peak - before)


class VMEvent(NamedTuple):
    """One point of a measured bytecode timeline: a VM call, before or after it ran,
    and the resident bytes above the start of the run at that moment."""

    symbol: str
    before: bool
    resident_bytes: int


def measure_allocation(nbytes: int, *, timeout: float = 120.0) -> int:
    """Measured peak of a child that allocates and writes ``nbytes`` with numpy.

    The calibration of :func:`peak_of`: the answer should be ``nbytes`` within a
    fraction of a percent.  Also the reference measurement of the ``vm`` suite.
    """
    check_int(nbytes, "nbytes")
    with work_dir("benchkill-alloc-") as work:
        outcome = run_task(
            "benchkill.execution.peak:allocation_task", {"nbytes": nbytes}, work, timeout
        )
    result = outcome.result
    if not outcome.ok or result is None:
        raise BenchkillError(f"allocation measurement failed: {outcome.failure()}")
    if result.get("error"):
        raise BenchkillError(f"allocation measurement failed: {result['error']}")
    return int(result["peak_bytes"])


def allocation_task(request: dict[str, Any], _work: Path) -> dict[str, Any]:
    """The child's side of :func:`measure_allocation` (its child task)."""
    import numpy as np

    nbytes = int(request["nbytes"])
    _, floor = peak_of(lambda: None)
    block, peak = peak_of(lambda: np.ones(nbytes, dtype=np.uint8))
    del block
    return {"peak_bytes": peak, "floor_bytes": floor}
