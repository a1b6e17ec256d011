"""The one symbolic model of the Relax VM running a lowered module: frames, registers,
the buffers each register keeps alive, and the VM's release rules.

Three walks share it: the static liveness estimate (:class:`benchkill.analysis.machine.
AbstractVM`, sizes from the IR, one path through the If branches), the attribution of
a recorded trace (:class:`benchkill.execution.walker.Walker`, allocations and branches
read from the recording) and the kill verifier (:class:`benchkill.analysis.kill_checker.
KillChecker`, every path through the If branches, no buffers).  :class:`SymbolicVM` walks
the module and follows every buffer as a :class:`~benchkill.analysis.holders.Lifetime`
(its names, uses and kill); a subclass says what a value is (:meth:`~SymbolicVM.buffers`),
what an allocation, a branch and a call of a Relax function give, and what a release does
(count references, or record why the recording saw a free).

The VM's rules, as CodeGenVM's bytecode and the compiled VM follow them:

* every binding holds its value in its own register (``b = a`` copies the reference, as
  CodeGenVM's ``vm.builtin.copy`` does), and so does the merge register of an ``If``;
  a binding's use of its operands ends when it is evaluated; kills are not bindings of
  the binding clock;
* a register lets go of its value when a kill names its variable (:meth:`~SymbolicVM.kill`),
  when its variable is bound again, or when its function returns (:meth:`~SymbolicVM.
  returning`: every register of the frame);
* in bytecode mode a returned value is also held by the VM's return slot
  (``return_value_``) until the next function returns (:meth:`~SymbolicVM.
  replace_slot`); the compiled VM has no slot;
* the call binding of a Relax function uses its arguments until the callee returns.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from benchkill.analysis.bindings import BindingIndex
from benchkill.analysis.frame import Frame
from benchkill.analysis.holders import Lifetime, Site
from benchkill.relax import ops


class SymbolicVM:
    """Walks a lowered module as the VM runs it (module docstring).

    A subclass provides ``lives`` (the :class:`Lifetime` of every buffer so far),
    :meth:`buffers`, :meth:`branch`, :meth:`call_expr`, and the release steps
    :meth:`bind` and :meth:`returning`; ``EMPTY`` is the value of an expression that
    keeps nothing alive.  It may also follow the walk through :meth:`enter` (a binding
    starts), :meth:`read` (a binding or a return reads a variable) and
    :meth:`after_binding` (a binding is done)."""

    EMPTY: Any = None
    lives: list[Lifetime]

    def __init__(self, mod: Any, return_slot: bool) -> None:
        from benchkill.analysis import nodes  # imports TVM: not before a VM is made

        self.nodes = nodes
        self.mod = mod
        self.return_slot = return_slot
        self.slot: Any = self.EMPTY  # the bytecode VM's return_value_
        self.indexes: dict[str, BindingIndex] = {}
        self.frames: list[Frame] = []
        self.site = Site("?", 0, "?")
        self.clock = 0  # bindings evaluated, kills not counted
        self.snapshot_pending = False
        self.held: dict[int, list[str]] = {}
        self.scopes_seen: dict[int, list[Any]] = {}  # SeqExpr handle -> its bindings

    def bindings_of(self, seq: Any) -> list[Any]:
        """The bindings of a SeqExpr (a function body or an If branch) in text order,
        read from the IR once per VM."""
        key = seq.__chandle__()
        found = self.scopes_seen.get(key)
        if found is None:
            found = self.scopes_seen[key] = self.nodes.bindings_of(seq)
        return found

    def index(self, name: str) -> BindingIndex:
        found = self.indexes.get(name)
        if found is None:
            found = self.indexes[name] = BindingIndex(name, self.mod[name])
        return found

    # -- what a subclass says
    def buffers(self, value: Any) -> Iterable[int]:
        """The indexes in ``lives`` of the buffers ``value`` keeps alive."""
        raise NotImplementedError

    def alive(self, life: int) -> bool:
        """Whether buffer ``life`` has not been freed yet."""
        return True

    def branch(self, expr: Any, frame: Frame, var: str | None) -> Any:
        """The value of an If: the branch taken, evaluated."""
        raise NotImplementedError

    def call_expr(self, call: Any, frame: Frame, var: str | None) -> Any:
        """The value of a call bound to ``var``."""
        raise NotImplementedError

    def bind_param(self, frame: Frame, param: Any, value: Any, shape: Any) -> None:
        frame.regs[param] = value

    def bind(self, frame: Frame, binding: Any, value: Any, site: Site) -> None:
        """Store a binding's value in its register (and release what it held before)."""
        frame.regs[binding.var] = value
        for life in self.buffers(value):
            self.lives[life].name(f"{frame.name}.{site.var}")

    def returning(self, frame: Frame, index: BindingIndex, result: Any, back: Site) -> None:
        """The function of ``frame`` returns ``result``: every register of the frame lets
        go of its value, and in bytecode mode the return slot takes ``result``."""
        raise NotImplementedError

    def enter(self, frame: Frame, binding: Any) -> Site:
        """A binding of ``frame`` starts: where it is (before it reads its operands)."""
        return self.index(frame.name).site(binding.var)

    def read(self, frame: Frame, var: Any, site: Site) -> None:
        """``var`` is read at ``site``: every buffer its register keeps alive is used."""
        for life in self.buffers(frame.regs.get(var, self.EMPTY)):
            self.lives[life].use(site, self.clock)

    def after_binding(self, frame: Frame, var: Any) -> None:
        """Called once a binding is done (the live-bytes curve)."""

    # -- the release rules shared by every execution
    def replace_slot(self, result: Any) -> Any:
        """Bytecode mode: the return slot takes ``result``; returns what it held before
        (the value it lets go of).  The compiled VM has no slot: returns ``EMPTY``."""
        if not self.return_slot:
            return self.EMPTY
        old, self.slot = self.slot, result
        return old

    def kill(self, frame: Frame, target: Any) -> tuple[str, Any]:
        """A kill of ``target``: its register lets go of its value.  Returns the variable's
        printed name and the value (``EMPTY`` when no register holds it)."""
        from tvm import relax

        value = self.EMPTY
        if isinstance(target, relax.Var) and target in frame.regs:
            value = frame.regs.pop(target)
        name = self.index(frame.name).printed.get(target, getattr(target, "name", "?"))
        for life in self.buffers(value):
            self.lives[life].kill(self.site)
        return name, value

    # -- the walk
    def use(self, frame: Frame, expr: Any, site: Site) -> None:
        """``expr`` is evaluated at ``site``: it reads the variables of
        :func:`~benchkill.analysis.nodes.vars_in` (an If its condition; a kill none)."""
        for var in self.nodes.vars_in(expr):
            self.read(frame, var, site)

    def snapshot(self) -> None:
        """Who holds each buffer now: per buffer the variables, the one to name it by
        first (a binding, not a parameter, of the outermost frame, bound last)."""
        found: dict[int, list[tuple[bool, int, int, str]]] = {}
        for depth, frame in enumerate(self.frames):
            index = self.index(frame.name)
            for order, (var, value) in enumerate(frame.regs.items()):
                name = f"{frame.name}.{index.printed.get(var, var.name)}"
                param = var not in index.position
                for life in self.buffers(value):
                    found.setdefault(life, []).append((param, depth, -order, name))
        self.held = {life: [n for *_, n in sorted(names)] for life, names in found.items()}

    def call_function(
        self, name: str, fn: Any, frame: Frame, args: Sequence[Any], shapes: Sequence[Any]
    ) -> Any:
        """Run ``fn`` in ``frame`` on argument values (``shapes``: their concrete shapes)."""
        from tvm import relax

        index = self.index(name)
        caller = self.site
        self.frames.append(frame)
        for param, value, shape in zip(fn.params, args, shapes, strict=True):
            self.bind_param(frame, param, value, shape)
        result = self.expr(fn.body, frame)
        back = index.returns()
        self.use(frame, fn.body.body if isinstance(fn.body, relax.SeqExpr) else fn.body, back)
        self.returning(frame, index, result, back)
        self.frames.pop()
        # the caller's call binding uses its arguments until the call returns
        for life in self.buffers(tuple(args)):
            if self.alive(life):
                self.lives[life].use(caller, self.clock)
        self.site = caller
        return result

    def expr(self, expr: Any, frame: Frame, var: str | None = None) -> Any:
        nodes = self.nodes
        kind = nodes.node_kind(expr)
        if kind == nodes.VAR:
            return frame.regs.get(expr, self.EMPTY)
        if kind == nodes.CALL:
            return self.call_expr(expr, frame, var)
        if kind == nodes.SEQ:
            for binding in self.bindings_of(expr):
                self.binding(binding, frame)
            return self.expr(expr.body, frame)
        if kind == nodes.TUPLE:
            return tuple(self.expr(f, frame) for f in expr.fields)
        if kind == nodes.ITEM:
            value = self.expr(expr.tuple_value, frame)
            if isinstance(value, tuple) and 0 <= expr.index < len(value):
                return value[expr.index]
            return value
        if kind == nodes.IF:
            return self.branch(expr, frame, var)
        return self.EMPTY  # constants, shapes, prim values, strings, functions

    def binding(self, binding: Any, frame: Frame) -> None:
        site = self.site = self.enter(frame, binding)
        expr = binding.value
        if self.nodes.call_role(expr) != ops.KILL:  # kills are not on the clock
            self.clock += 1
        self.use(frame, expr, site)
        value = self.expr(expr, frame, site.var)
        self.site = site
        self.bind(frame, binding, value, site)
        if self.snapshot_pending:
            self.snapshot_pending = False
            self.snapshot()
        self.after_binding(frame, binding.var)
