"""The static liveness bound of a lowered Relax module: what its kills let the VM free.

:func:`estimate_lowered` executes a lowered module (as ``relax.build`` lowers it up to and
including the kill step, see :func:`benchkill.estimate_memory`) abstractly, following what
the bytecode VM frees and when:

* ``alloc_storage`` allocates a block of its byte size; ``alloc_tensor`` carves a tensor
  that keeps its storage's block alive; a block is freed when nothing refers to it.
* registers, frames and when a register lets go of its value (a kill of its variable,
  a rebinding, its function's return, the bytecode VM's return slot, so a killed result
  can outlive its kill; the compiled VM has no such slot: ``return_slot=False``) follow
  the one model of the VM, :mod:`benchkill.analysis.vm_model`;
* the inputs belong to the caller and are not counted; constants are loaded with the
  executable and not counted; buffers allocated inside kernels and by packed functions
  are not seen (a packed call's result is taken to share its arguments' memory).

The liveness peak is the largest total of live block bytes at any point of the run,
taken over every path through ``If`` branches: the least memory the kills in the module
allow.  The live-bytes curve gives the total after each binding of each frame.  The
same execution also replays the pooled allocator (a freed buffer is reused only for a
request of the same page-rounded size), whose total is ``pooled_bytes``: what the VM
with ``memory_cfg="pooled"`` should measure when buffer sizes differ.  The path that
reaches the peak runs once more to name who holds the peak and what each variable holds
after its last use (``at_peak``, ``waste``; see :mod:`.holders`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchkill.analysis.allocations import static_allocations
from benchkill.analysis.bindings import has_kills
from benchkill.analysis.frame import entry_shapes
from benchkill.analysis.holders import (
    Explainer,
    Holder,
    Waste,
    holders_at,
    waste_by_function,
    waste_of,
)
from benchkill.analysis.machine import EMPTY, POOL_PAGE, AbstractVM, LivePoint, Run
from benchkill.errors import BenchkillError

__all__ = ["POOL_PAGE", "LivePoint", "MemoryEstimate", "check_function", "estimate_lowered"]

#: Above this many paths through If branches the liveness search stops (exhaustive=False).
MAX_PATHS = 64


@dataclass(frozen=True)
class MemoryEstimate:
    """Static memory figures of one lowered module (see the module docstring).

    ``allocated_bytes`` maps each Relax function to the bytes of its constant-size
    ``alloc_storage`` calls (TVM's ``estimate_memory_usage`` "with memory planning"
    figure) and ``total_bytes`` is their sum; ``executed_bytes`` counts every
    allocation of one run of ``func`` (a function called twice counts twice, symbolic
    sizes from the input shapes); ``liveness_peak_bytes`` is the largest total live at
    once given the kills; ``pooled_bytes`` what the VM's pooled allocator ends up
    holding, which can be more: it reuses a freed buffer only for a request of the same
    page-rounded size; ``curve`` the live bytes after each binding on the path that
    reaches the peak.  ``paths`` is how many paths through If branches were followed.

    ``at_peak`` is the live set at the liveness peak (on the path that reaches it),
    largest first: per buffer the variable holding it, its bytes, where it was defined,
    last used and released, and whether it was killed or why not
    (:class:`~benchkill.analysis.holders.Holder`).  ``waste`` lists per variable the bytes
    held after their last use and for how many bindings (kills not counted), largest
    first (:class:`~benchkill.analysis.holders.Waste`); :attr:`waste_by_function` sums
    them per function.
    """

    kill: str | None
    func: str
    allocated_bytes: Mapping[str, int]
    total_bytes: int
    executed_bytes: int
    liveness_peak_bytes: int
    pooled_bytes: int
    curve: tuple[LivePoint, ...]
    paths: int
    exhaustive: bool = True
    dynamic_allocations: Mapping[str, int] = field(default_factory=dict)
    at_peak: tuple[Holder, ...] = ()
    waste: tuple[Waste, ...] = ()

    @property
    def waste_by_function(self) -> dict[str, int]:
        """Byte-bindings held after last use, per function (largest first)."""
        return waste_by_function(self.waste)


def check_function(mod: Any, func: str, caller: str) -> None:
    """Raise BenchkillError unless ``mod`` is an IRModule with a function ``func``."""
    import tvm

    if not isinstance(mod, tvm.IRModule):
        raise BenchkillError(f"{caller} needs a tvm.IRModule, not {type(mod).__name__}")
    names = [gv.name_hint for gv in mod.get_global_vars()]
    if func not in names:
        raise BenchkillError(f"module has no function {func!r} (has {', '.join(sorted(names))})")


def estimate_lowered(
    mod: Any,
    input_shapes: Mapping[str, Sequence[int]] | Sequence[Sequence[int] | None] | None = None,
    *,
    func: str = "main",
    return_slot: bool = True,
    kill: str | None = None,
) -> MemoryEstimate:
    """Static memory figures of the lowered module ``mod`` (used exactly as given).

    ``input_shapes`` (by parameter name or position) give symbolic dimensions of ``func``'s
    parameters their values; ``return_slot`` models the bytecode VM's return slot, which
    holds the last returned value until the next return (the compiled VM has none);
    ``kill`` is recorded in the result as the kill step the module went through.
    """
    check_function(mod, func, "estimate_lowered")
    allocated, dynamic = static_allocations(mod)
    search = _explore(mod, func, input_shapes, return_slot)
    best = max(search.runs, key=lambda r: r.peak)
    at_peak, waste = _holders(mod, func, input_shapes, return_slot, best)
    return MemoryEstimate(
        kill=kill,
        func=func,
        allocated_bytes=allocated,
        total_bytes=sum(allocated.values()),
        executed_bytes=best.allocated,
        liveness_peak_bytes=best.peak,
        pooled_bytes=max(r.pooled for r in search.runs),
        curve=tuple(best.curve),
        paths=len(search.runs),
        exhaustive=search.exhaustive,
        dynamic_allocations=dynamic,
        at_peak=at_peak,
        waste=waste,
    )


def _holders(
    mod: Any, func: str, input_shapes: Any, return_slot: bool, best: Run
) -> tuple[tuple[Holder, ...], tuple[Waste, ...]]:
    """The live set at ``best``'s peak and the waste on its path: the path run once
    more, recording who holds each block right after the allocation that makes the peak."""
    entry = mod[func]
    shapes = [None if s is None else [int(d) for d in s] for s in entry_shapes(entry, input_shapes)]
    machine = AbstractVM(mod, best.choices, return_slot, snapshot_tick=best.peak_tick)
    machine.call(func, entry, [EMPTY] * len(entry.params), shapes)
    run = machine.run
    from tvm import relax

    functions = {gv.name_hint for gv, f in mod.functions_items() if isinstance(f, relax.Function)}
    explain = Explainer(
        lambda name: machine.index(name) if name in functions else None, has_kills(mod)
    )
    at_peak = holders_at(run.lives, run.peak_tick, run.held, explain) if run.peak else ()
    return at_peak, waste_of(run.lives, explain)


@dataclass(frozen=True)
class _Search:
    runs: list[Run]
    exhaustive: bool


def _explore(mod: Any, func: str, input_shapes: Any, return_slot: bool) -> _Search:
    """Execute ``func`` abstractly once per path through its If branches."""
    from tvm import relax

    entry = mod[func]
    if not isinstance(entry, relax.Function):
        raise BenchkillError(f"{func!r} is not a Relax function")
    shapes = [None if s is None else [int(d) for d in s] for s in entry_shapes(entry, input_shapes)]
    runs: list[Run] = []
    pending: list[tuple[bool, ...]] = [()]
    while pending:
        if len(runs) == MAX_PATHS:
            return _Search(runs, False)
        forced = pending.pop()
        machine = AbstractVM(mod, forced, return_slot)
        # inputs are the caller's: they hold no blocks of the program
        machine.call(func, entry, [EMPTY] * len(entry.params), shapes)
        run = machine.run
        runs.append(run)
        for k in range(len(forced), len(run.choices)):
            pending.append(tuple(run.choices[:k]) + (False,))
    return _Search(runs, True)
