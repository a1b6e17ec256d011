"""The static memory figures of a module as ``relax.build`` would run it.

:func:`estimate_memory` lowers a high-level module with the build pipeline up to and
including its kill step (:func:`~benchkill.execution.pipeline.lower_to_kill_input`,
:func:`~benchkill.execution.pipeline.kill_pass`) and hands the result to the liveness
model of :mod:`benchkill.analysis.liveness`, which says what the figures mean.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchkill.analysis.liveness import MemoryEstimate, check_function, estimate_lowered
from benchkill.execution.pipeline import kill_pass, lower_to_kill_input

__all__ = ["MemoryEstimate", "estimate_memory"]


def estimate_memory(
    mod: Any,
    input_shapes: Mapping[str, Sequence[int]] | Sequence[Sequence[int] | None] | None = None,
    *,
    kill: str | None = "benchkill",
    lowered: bool = False,
    func: str = "main",
    return_slot: bool = True,
) -> MemoryEstimate:
    """Static memory figures of ``mod`` as ``relax.build`` would run it.

    Parameters
    ----------
    mod : tvm.IRModule
        A high-level Relax module, or with ``lowered=True`` one already lowered to
        ``alloc_storage``/``alloc_tensor`` (used exactly as given).
    input_shapes : mapping of parameter name to shape, or shapes by position
        Values for symbolic dimensions of ``func``'s parameters (None where a
        parameter is not a tensor).  Needed only when sizes are symbolic.
    kill : {"tvm", "benchkill", "beyond", "legacy", None}
        The kill step run after lowering (ignored when ``lowered``).
    return_slot : bool
        Model the bytecode VM's return slot, which holds the last returned value until
        the next return (True; the compiled VM has none).
    """
    check_function(mod, func, "estimate_memory")
    if not lowered:
        step = kill_pass(kill)
        mod = lower_to_kill_input(mod)
        if step is not None:
            mod = step(mod)
    return estimate_lowered(
        mod, input_shapes, func=func, return_slot=return_slot, kill=None if lowered else kill
    )
