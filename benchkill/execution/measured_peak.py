"""Measure a module with a traced run and explain its peak (:mod:`.explain`)."""

from __future__ import annotations

from typing import Any

from benchkill.errors import BenchkillError
from benchkill.execution.explain import PeakExplanation
from benchkill.execution.vm_measure import measure_vm
from benchkill.execution.vm_options import VMOptions


def explain_peak(
    mod: Any,
    inputs: Any,
    *,
    kill: str | None = "benchkill",
    exec_mode: str = "bytecode",
    memory_cfg: str = "pooled",
    func: str = "main",
    peak_repeat: int = 3,
) -> PeakExplanation:
    """Measure ``mod`` on ``inputs`` with a traced run and explain its peak.

    Parameters
    ----------
    mod : tvm.IRModule
        A high-level Relax module (what :func:`benchkill.measure_vm` takes).
    inputs : sequence
        The arguments of ``func``.
    kill : {"tvm", "benchkill", "beyond", "legacy", None}
        The kill variant built.
    exec_mode, memory_cfg : str
        As in :class:`benchkill.VMOptions`.
    func : str
        The function to run.
    peak_repeat : int
        Runs measured for the peak (their median is ``measured_peak_bytes``).

    Returns
    -------
    benchkill.PeakExplanation
        The measured peak and the parts of the traced run's replayed peak: planned
        storage, storage sized by unbounded dimensions (what kills free), run-time
        allocations, shape heaps and the pooled allocator's freed buffers.

    Raises
    ------
    benchkill.BenchkillError
        The measurement or its trace failed.
    """
    options = VMOptions(exec_mode, memory_cfg, 0, peak_repeat, func, timeline=False)
    r = measure_vm(mod, inputs, options, kill=kill, trace=True)
    if not r.ok:
        raise BenchkillError(f"explain_peak: the measurement failed ({r.stage}): {r.error}")
    summary = r.trace_summary
    if summary is None or summary.peak_parts is None:
        why = r.trace_error or (summary.attribution_error if summary else None)
        raise BenchkillError(f"explain_peak: no attributed trace: {why}")
    return PeakExplanation(kill, exec_mode, memory_cfg, int(r.peak_bytes), summary.peak_parts)
