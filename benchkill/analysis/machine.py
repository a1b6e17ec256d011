"""The abstract execution of a lowered Relax module behind :mod:`.liveness`.

:class:`AbstractVM` runs one path through the If branches of a lowered module, following
what the VM frees and when (the rules are in :mod:`.vm_model` and :mod:`.liveness`).  It
counts live block bytes and the pooled allocator's total, and follows every block from
its allocation to its release (:class:`~benchkill.analysis.holders.Lifetime`): who held
it, where it was last used, how it was released; with ``snapshot_tick`` it also records
which variables hold each block right after that allocation (the live set at the peak).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from benchkill.analysis.allocations import dtype_bytes
from benchkill.analysis.bindings import BindingIndex
from benchkill.analysis.frame import Frame, bind_shape, concrete_shape
from benchkill.analysis.holders import KILLED, REBOUND, RETURNED, SLOT, Lifetime, Site
from benchkill.analysis.vm_model import SymbolicVM
from benchkill.relax import ops

#: The pooled allocator rounds every request up to a multiple of this (its page size).
POOL_PAGE = 4096


class LivePoint(NamedTuple):
    """Live storage bytes right after the binding of ``var`` in ``function``."""

    function: str
    var: str
    live_bytes: int


# A value is the frozenset of blocks it keeps alive, or a tuple of values.
EMPTY: frozenset[int] = frozenset()


def blocks_of(value: Any) -> frozenset[int]:
    if isinstance(value, frozenset):
        return value
    out: set[int] = set()
    for item in value:
        out |= blocks_of(item)
    return frozenset(out)


@dataclass
class Run:
    """One abstract execution along one path through the If branches."""

    choices: list[bool] = field(default_factory=list)
    peak: int = 0
    peak_tick: int = 0
    allocated: int = 0
    pooled: int = 0
    curve: list[LivePoint] = field(default_factory=list)
    lives: list[Lifetime] = field(default_factory=list)
    held: dict[int, list[str]] = field(default_factory=dict)  # at snapshot_tick


class AbstractVM(SymbolicVM):
    """Executes lowered Relax abstractly, counting live block bytes (module docstring).

    A value is the frozenset of blocks it keeps alive (block ``b`` is ``lives[b - 1]``),
    or a tuple of values; a block is freed when no register, no temporary hold and not
    the return slot refers to it."""

    EMPTY = EMPTY

    def __init__(
        self,
        mod: Any,
        forced: Sequence[bool],
        return_slot: bool,
        snapshot_tick: int | None = None,
        indexes: dict[str, BindingIndex] | None = None,
    ) -> None:
        super().__init__(mod, return_slot)
        self.forced = list(forced)
        self.snapshot_tick = snapshot_tick
        if indexes is not None:
            self.indexes = indexes
        self.run = Run()
        self.sizes: dict[int, int] = {}
        self.refs: dict[int, int] = {}
        self.live = 0
        self.tick = 0
        self.pool: dict[int, int] = {}  # page-rounded size -> free pooled buffers

    @property
    def lives(self) -> list[Lifetime]:  # type: ignore[override]
        return self.run.lives

    def buffers(self, value: Any) -> list[int]:
        return [block - 1 for block in blocks_of(value)]

    def alive(self, life: int) -> bool:
        return life + 1 in self.sizes

    # -- block reference counting
    def _new_block(self, size: int) -> frozenset[int]:
        self.tick += 1
        block = len(self.run.lives) + 1
        self.run.lives.append(Lifetime(size, self.site, self.tick, self.clock))
        self.sizes[block] = size
        self.refs[block] = 0
        self.live += size
        self.run.allocated += size
        if self.live > self.run.peak:
            self.run.peak, self.run.peak_tick = self.live, self.tick
        # the pooled allocator reuses a free buffer of the same page-rounded size
        rounded = -(-size // POOL_PAGE) * POOL_PAGE
        if self.pool.get(rounded, 0) > 0:
            self.pool[rounded] -= 1
        else:
            self.run.pooled += rounded
        if self.tick == self.snapshot_tick:
            self.snapshot_pending = True  # taken once the binding holds the block
        return frozenset((block,))

    def snapshot(self) -> None:
        super().snapshot()
        self.run.held = self.held

    def _free(self, block: int, how: tuple[str, Site | None, str | None]) -> None:
        size = self.sizes.pop(block)
        del self.refs[block]
        self.live -= size
        self.tick += 1
        self.run.lives[block - 1].released(how, self.tick, self.clock)
        rounded = -(-size // POOL_PAGE) * POOL_PAGE
        self.pool[rounded] = self.pool.get(rounded, 0) + 1

    def _hold(self, value: Any, name: str | None = None) -> None:
        for block in blocks_of(value):
            self.refs[block] += 1
            if name is not None:
                self.run.lives[block - 1].name(name)

    def _release(self, value: Any, how: tuple[str, Site | None, str | None]) -> None:
        for block in blocks_of(value):
            self.refs[block] -= 1
            if self.refs[block] == 0:
                self._free(block, how)

    def _drop_unheld(self, value: Any) -> None:
        """Free blocks of a value nobody holds (e.g. an allocation bound to nothing)."""
        for block in blocks_of(value):
            if self.refs.get(block) == 0:
                self._free(block, (REBOUND, self.site, None))

    # -- functions
    def call(self, name: str, fn: Any, args: Sequence[Any], shapes: Sequence[Any]) -> Any:
        """Run ``fn`` on argument values; the result comes back held once (by the
        return slot, or by a temporary hold the caller drops after binding it)."""
        return self.call_function(name, fn, Frame(name), args, shapes)

    def bind_param(self, frame: Frame, param: Any, value: Any, shape: Any) -> None:
        bind_shape(frame, param.ty, shape)
        frame.regs[param] = value
        self._hold(value, f"{frame.name}.{self.index(frame.name).printed.get(param, param.name)}")

    def returning(self, frame: Frame, index: BindingIndex, result: Any, back: Site) -> None:
        self._hold(result)
        if self.return_slot:
            self._release(self.replace_slot(result), (SLOT, back, None))
        for var, value in frame.regs.items():
            self._release(value, (RETURNED, back, index.printed.get(var, var.name)))

    # -- bindings
    def bind(self, frame: Frame, binding: Any, value: Any, site: Site) -> None:
        from tvm import relax

        var = binding.var
        if isinstance(binding, relax.MatchCast):
            bind_shape(frame, binding.ty, concrete_shape(frame, binding.value.ty))
        old = frame.regs.get(var)
        frame.regs[var] = value
        self._hold(value, f"{frame.name}.{site.var}")
        if old is not None:
            self._release(old, (REBOUND, site, site.var))
        if isinstance(binding.value, relax.Call) and self._is_relax_call(binding.value):
            if not self.return_slot:  # the caller has bound the result: the temporary hold ends
                self._release(value, (RETURNED, self.site, None))
        self._drop_unheld(value)

    def after_binding(self, frame: Frame, var: Any) -> None:
        self.run.curve.append(LivePoint(frame.name, var.name, self.live))

    def branch(self, expr: Any, frame: Frame, var: str | None) -> Any:
        index = len(self.run.choices)
        taken = self.forced[index] if index < len(self.forced) else True
        self.run.choices.append(taken)
        return self.expr(expr.true_branch if taken else expr.false_branch, frame)

    def _is_relax_call(self, call: Any) -> bool:
        from tvm import relax

        return isinstance(call.op, relax.GlobalVar) and isinstance(
            self.mod[call.op], relax.Function
        )

    def call_expr(self, call: Any, frame: Frame, var: str | None) -> Any:
        from tvm import relax

        role = ops.ROLES.get(ops.op_name(call))
        if role == ops.STORAGE:
            return self._new_block(frame.size_of(call.args[0].values[0]))
        if role == ops.TENSOR:
            return blocks_of(self.expr(call.args[0], frame))
        if role == ops.BUILTIN_TENSOR:
            dims = [frame.size_of(d) for d in call.args[0].values]
            return self._new_block(dtype_bytes(call.args[1].value) * math.prod(dims))
        if role == ops.KILL:
            name, value = self.kill(frame, call.args[0])
            self._release(value, (KILLED, self.site, name))
            return EMPTY
        if role == ops.NULL:
            return EMPTY
        if isinstance(call.op, relax.GlobalVar):
            callee = self.mod[call.op]
            if not isinstance(callee, relax.Function):
                return EMPTY  # a PrimFunc writes into its destination arguments
            args = [self.expr(a, frame) for a in call.args]
            shapes = [concrete_shape(frame, a.ty) for a in call.args]
            return self.call(call.op.name_hint, callee, args, shapes)
        # packed functions, views, other builtins: assume the result shares the
        # memory of its arguments (reshape, view) and allocates nothing of its own.
        if isinstance(call.ty, (relax.TensorType, relax.TupleType, relax.AnyType)):
            return blocks_of(tuple(self.expr(a, frame) for a in call.args))
        return EMPTY
