"""The static liveness bound of a lowered Relax module: what its kills let the VM free.

:func:`estimate_lowered` executes a lowered module (as ``relax.build`` lowers it up to and
including the kill step, see :func:`benchkill.estimate_memory`) abstractly, following what
the bytecode VM frees and when:

* ``alloc_storage`` allocates a block of its byte size; ``alloc_tensor`` carves a tensor
  that keeps its storage's block alive; a block is freed when nothing refers to it.
* every binding holds its value in its own VM register (a binding ``b = a`` copies the
  reference, as CodeGenVM's ``vm.builtin.copy`` does), and so does the merge register
  of an ``If``; a register lets go of its value at ``kill_tensor``, ``kill_storage`` or
  ``kill_object`` of its variable, or when its function returns;
* a call of a Relax function runs the callee in a new frame; in bytecode mode its
  result is also held by the VM's return slot (``return_value_``) until the next
  function returns, so a killed result can outlive its kill (the compiled VM has no
  such slot: ``return_slot=False``);
* the inputs belong to the caller and are not counted; constants are loaded with the
  executable and not counted; buffers allocated inside kernels and by packed functions
  are not seen (a packed call's result is taken to share its arguments' memory).

The liveness peak is the largest total of live block bytes at any point of the run,
taken over every path through ``If`` branches: the least memory the kills in the module
allow.  The live-bytes curve gives the total after each binding of each frame.  The
same execution also replays the pooled allocator (a freed buffer is reused only for a
request of the same page-rounded size), whose total is ``pooled_bytes``: what the VM
with ``memory_cfg="pooled"`` should measure when buffer sizes differ.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from benchkill.analysis.allocations import dtype_bytes, static_allocations
from benchkill.analysis.frame import Frame, bind_shape, concrete_shape, entry_shapes
from benchkill.errors import BenchkillError
from benchkill.relax import ops

#: Above this many paths through If branches the liveness search stops (exhaustive=False).
MAX_PATHS = 64

#: The pooled allocator rounds every request up to a multiple of this (its page size).
POOL_PAGE = 4096


class LivePoint(NamedTuple):
    """Live storage bytes right after the binding of ``var`` in ``function``."""

    function: str
    var: str
    live_bytes: int


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
    )


# --- abstract execution --------------------------------------------------------

# A value is the frozenset of blocks it keeps alive, or a tuple of values.
_EMPTY: frozenset[int] = frozenset()


def _blocks(value: Any) -> frozenset[int]:
    if isinstance(value, frozenset):
        return value
    out: set[int] = set()
    for item in value:
        out |= _blocks(item)
    return frozenset(out)


@dataclass
class _Run:
    """One abstract execution along one path through the If branches."""

    choices: list[bool] = field(default_factory=list)
    peak: int = 0
    allocated: int = 0
    pooled: int = 0
    curve: list[LivePoint] = field(default_factory=list)


class _Machine:
    """Executes lowered Relax abstractly, counting live block bytes (module docstring)."""

    def __init__(self, mod: Any, forced: Sequence[bool], return_slot: bool) -> None:
        self.mod = mod
        self.forced = list(forced)
        self.use_return_slot = return_slot
        self.run = _Run()
        self.sizes: dict[int, int] = {}
        self.refs: dict[int, int] = {}
        self.live = 0
        self.next_block = 0
        self.slot: Any = _EMPTY
        self.pool: dict[int, int] = {}  # page-rounded size -> free pooled buffers

    # -- block reference counting
    def _new_block(self, size: int) -> frozenset[int]:
        self.next_block += 1
        block = self.next_block
        self.sizes[block] = size
        self.refs[block] = 0
        self.live += size
        self.run.allocated += size
        self.run.peak = max(self.run.peak, self.live)
        # the pooled allocator reuses a free buffer of the same page-rounded size
        rounded = -(-size // POOL_PAGE) * POOL_PAGE
        if self.pool.get(rounded, 0) > 0:
            self.pool[rounded] -= 1
        else:
            self.run.pooled += rounded
        return frozenset((block,))

    def _free(self, block: int) -> None:
        size = self.sizes.pop(block)
        del self.refs[block]
        self.live -= size
        rounded = -(-size // POOL_PAGE) * POOL_PAGE
        self.pool[rounded] = self.pool.get(rounded, 0) + 1

    def _hold(self, value: Any) -> None:
        for block in _blocks(value):
            self.refs[block] += 1

    def _release(self, value: Any) -> None:
        for block in _blocks(value):
            self.refs[block] -= 1
            if self.refs[block] == 0:
                self._free(block)

    def _drop_unheld(self, value: Any) -> None:
        """Free blocks of a value nobody holds (e.g. an allocation bound to nothing)."""
        for block in _blocks(value):
            if self.refs.get(block) == 0:
                self._free(block)

    # -- functions
    def call(self, name: str, fn: Any, args: Sequence[Any], shapes: Sequence[Any]) -> Any:
        """Run ``fn`` on argument values; the result comes back held once (by the
        return slot, or by a temporary hold the caller drops after binding it)."""
        frame = Frame(name)
        for param, value, shape in zip(fn.params, args, shapes, strict=True):
            bind_shape(frame, param.ty, shape)
            frame.regs[param] = value
            self._hold(value)
        result = self.expr(fn.body, frame)
        self._hold(result)
        if self.use_return_slot:
            self._release(self.slot)
            self.slot = result
        for value in frame.regs.values():
            self._release(value)
        return result

    def _returned(self, value: Any) -> None:
        """The caller has bound a call's result: drop the temporary hold."""
        if not self.use_return_slot:
            self._release(value)

    # -- expressions
    def expr(self, expr: Any, frame: Frame) -> Any:
        from tvm import relax

        if isinstance(expr, relax.SeqExpr):
            for block in expr.blocks:
                for binding in block.bindings:
                    self.binding(binding, frame)
            return self.expr(expr.body, frame)
        if isinstance(expr, relax.Var):
            return frame.regs.get(expr, _EMPTY)
        if isinstance(expr, relax.Tuple):
            return tuple(self.expr(f, frame) for f in expr.fields)
        if isinstance(expr, relax.TupleGetItem):
            value = self.expr(expr.tuple_value, frame)
            if isinstance(value, tuple) and 0 <= expr.index < len(value):
                return value[expr.index]
            return value
        if isinstance(expr, relax.If):
            return self.branch(expr, frame)
        if isinstance(expr, relax.Call):
            return self.call_expr(expr, frame)
        return _EMPTY  # constants, shapes, prim values, strings, functions

    def binding(self, binding: Any, frame: Frame) -> None:
        from tvm import relax

        value = self.expr(binding.value, frame)
        if isinstance(binding, relax.MatchCast):
            bind_shape(frame, binding.ty, concrete_shape(frame, binding.value.ty))
        var = binding.var
        old = frame.regs.get(var)
        frame.regs[var] = value
        self._hold(value)
        if old is not None:
            self._release(old)
        if isinstance(binding.value, relax.Call) and self._is_relax_call(binding.value):
            self._returned(value)
        self._drop_unheld(value)
        self.run.curve.append(LivePoint(frame.name, var.name, self.live))

    def branch(self, expr: Any, frame: Frame) -> Any:
        index = len(self.run.choices)
        taken = self.forced[index] if index < len(self.forced) else True
        self.run.choices.append(taken)
        return self.expr(expr.true_branch if taken else expr.false_branch, frame)

    def _is_relax_call(self, call: Any) -> bool:
        from tvm import relax

        return isinstance(call.op, relax.GlobalVar) and isinstance(
            self.mod[call.op], relax.Function
        )

    def call_expr(self, call: Any, frame: Frame) -> Any:
        from tvm import relax

        role = ops.ROLES.get(ops.op_name(call))
        if role == ops.STORAGE:
            return self._new_block(frame.size_of(call.args[0].values[0]))
        if role == ops.TENSOR:
            return _blocks(self.expr(call.args[0], frame))
        if role == ops.BUILTIN_TENSOR:
            dims = [frame.size_of(d) for d in call.args[0].values]
            return self._new_block(dtype_bytes(call.args[1].value) * math.prod(dims))
        if role == ops.KILL:
            target = call.args[0]
            if isinstance(target, relax.Var) and target in frame.regs:
                self._release(frame.regs.pop(target))
            return _EMPTY
        if role == ops.NULL:
            return _EMPTY
        if isinstance(call.op, relax.GlobalVar):
            callee = self.mod[call.op]
            if not isinstance(callee, relax.Function):
                return _EMPTY  # a PrimFunc writes into its destination arguments
            args = [self.expr(a, frame) for a in call.args]
            shapes = [concrete_shape(frame, a.ty) for a in call.args]
            return self.call(call.op.name_hint, callee, args, shapes)
        # packed functions, views, other builtins: assume the result shares the
        # memory of its arguments (reshape, view) and allocates nothing of its own.
        if isinstance(call.ty, (relax.TensorType, relax.TupleType, relax.AnyType)):
            return _blocks(tuple(self.expr(a, frame) for a in call.args))
        return _EMPTY


@dataclass(frozen=True)
class _Search:
    runs: list[_Run]
    exhaustive: bool


def _explore(mod: Any, func: str, input_shapes: Any, return_slot: bool) -> _Search:
    """Execute ``func`` abstractly once per path through its If branches."""
    from tvm import relax

    entry = mod[func]
    if not isinstance(entry, relax.Function):
        raise BenchkillError(f"{func!r} is not a Relax function")
    shapes = [None if s is None else [int(d) for d in s] for s in entry_shapes(entry, input_shapes)]
    runs: list[_Run] = []
    pending: list[tuple[bool, ...]] = [()]
    while pending:
        if len(runs) == MAX_PATHS:
            return _Search(runs, False)
        forced = pending.pop()
        machine = _Machine(mod, forced, return_slot)
        # inputs are the caller's: they hold no blocks of the program
        machine.call(func, entry, [_EMPTY] * len(entry.params), shapes)
        run = machine.run
        runs.append(run)
        for k in range(len(forced), len(run.choices)):
            pending.append(tuple(run.choices[:k]) + (False,))
    return _Search(runs, True)
