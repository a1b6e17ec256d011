"""Measure a module with a traced run and explain its peak (:mod:`.explain`)."""

from __future__ import annotations

from typing import Any

from benchkill.errors import BenchkillError
from benchkill.execution.explain import PeakExplanation
from benchkill.execution.vm_measure import measure_vm


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
    """Measure ``mod`` on ``inputs`` with a traced run (:func:`benchkill.measure_vm`) and
    explain its peak; BenchkillError if the measurement or its trace failed."""
    r = measure_vm(
        mod, inputs, kill=kill, exec_mode=exec_mode, memory_cfg=memory_cfg, func=func,
        repeat=0, peak_repeat=peak_repeat, timeline=False, trace=True,
    )  # fmt: skip
    if not r.ok:
        raise BenchkillError(f"explain_peak: the measurement failed ({r.stage}): {r.error}")
    summary = r.trace_summary
    if summary is None or summary.peak_parts is None:
        why = r.trace_error or (summary.attribution_error if summary else None)
        raise BenchkillError(f"explain_peak: no attributed trace: {why}")
    return PeakExplanation(kill, exec_mode, memory_cfg, int(r.peak_bytes), summary.peak_parts)
