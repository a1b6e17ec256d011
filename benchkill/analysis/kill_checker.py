"""The kill checker behind :func:`benchkill.analysis.verifier.verify_kills`: the symbolic VM
(:class:`~benchkill.analysis.vm_model.SymbolicVM`) walking one Relax function along every
path through its Ifs, and the rules of :mod:`benchkill.analysis.kill_rules` at each kill,
use and scope end.

The walk is the model's (a binding reads its operands, is evaluated, then bound; an If
reads its condition); :class:`KillChecker` says what happens on the way: a read checks
use-after-kill and scope, a kill checks the kill rules and enters the :class:`~benchkill.
analysis.kill_log.KillLog`, a binding defines its variable (its *root*: the variables
CanonicalizeBindings merges count as one object, see :mod:`~benchkill.analysis.kill_rules`),
and each scope's end checks its result and its missed kills.  An If walks its true branch,
takes back the branch's kills, walks its false branch, and joins the two.  The model's walk
recurses once per If nesting level; the checker raises Python's recursion limit by a
bounded amount per level while it walks (and restores it).
"""

from __future__ import annotations

import sys
from typing import Any

import tvm_ffi
from tvm import relax

from benchkill.analysis import kill_rules as rules
from benchkill.analysis import nodes
from benchkill.analysis.frame import Frame
from benchkill.analysis.holders import Site as HolderSite
from benchkill.analysis.kill_log import KillLog
from benchkill.analysis.kill_rules import Site, Violation
from benchkill.analysis.vm_model import SymbolicVM
from benchkill.errors import BenchkillError
from benchkill.relax import ffi, ops

#: Operator roles a binding's root keeps as its nature (see kill_rules.Site.nature).
_NATURES = (ops.STORAGE, ops.NULL)
#: Python frames the model's walk takes per If nesting level (binding, expr, branch, the
#: branch's walk, its SeqExpr), with room to spare.
FRAMES_PER_IF = 8
_NO_SITE = HolderSite("?", 0, "?")


class _Scope:
    """A SeqExpr being walked: the function body (depth 0) or an If branch."""

    __slots__ = ("seq", "bindings", "prefix", "depth", "index", "candidates", "result_name", "defs")

    def __init__(
        self, seq: relax.SeqExpr, bindings: list, prefix: str, depth: int, result_name: str
    ):
        self.seq = seq
        self.bindings = bindings
        self.prefix = prefix
        self.depth = depth
        self.index = 0  # the binding being walked
        self.candidates: list[tuple[int, relax.Var]] = []
        self.result_name = result_name
        self.defs: list[int] = []  # handles bound here (out of scope after the scope)


class KillChecker(SymbolicVM):
    """Checks the kills of one Relax function on every path (module docstring).

    A value keeps no buffer: the checker follows objects by their roots, not by
    registers.  :meth:`check` walks the function and returns its violations."""

    def __init__(self, mod: Any, name: str, expect_complete: bool) -> None:
        super().__init__(mod, return_slot=False)
        self.lives = []
        self.name = name
        self.expect_complete = expect_complete
        self.violations: list[Violation] = []
        # Object identity: handle of a var -> handle of the var it aliases (absent: itself).
        self.root: dict[int, int] = {}
        self.nature: dict[int, str] = {}  # root handle -> PARAM / CONST / NULL / STORAGE
        self.depth: dict[int, int] = {}  # root handle -> depth of its defining scope
        self.tuple_fields: dict[int, list] = {}  # root bound to a tuple literal -> fields
        # var = t[i] with t not a tuple literal -> (root of t, i, number of fields of t)
        self.item_of: dict[int, tuple[int, int, int]] = {}
        self.kills = KillLog()  # may: root -> (scope, index) of its kill
        # Completeness: candidate root -> depth; candidate -> location of its last use.
        self.candidate_depth: dict[int, int] = {}
        self.last_use: dict[int, tuple[_Scope, int]] = {}
        self.scopes: list[_Scope] = []  # the scopes being walked, outermost first
        self.in_scope: set[int] = set()  # handles of the parameters and visible bindings
        self.base_limit = 0

    # -- the walk ------------------------------------------------------------------------

    def check(self, func: relax.Function) -> list[Violation]:
        """Walk ``func`` (every path) and return the violations found, in walk order."""
        frame = Frame(self.name)
        for param in func.params:
            self.bind_param(frame, param, self.EMPTY, None)
        limit = self.base_limit = sys.getrecursionlimit()
        try:
            self._walk(func.body, frame, "", "return")
        finally:
            sys.setrecursionlimit(limit)
        return self.violations

    def _walk(self, seq: object, frame: Frame, prefix: str, result_name: str) -> None:
        """One scope: its bindings by the model's walk, then its result and missed kills."""
        if not isinstance(seq, relax.SeqExpr):
            raise BenchkillError(
                f"{self.name}: function body or If branch at {prefix or 'top'} is not a "
                f"SeqExpr ({type(seq).__name__}); normalize the module first"
            )
        scope = _Scope(seq, self.bindings_of(seq), prefix, len(self.scopes), result_name)
        self.scopes.append(scope)
        self.expr(seq, frame)
        self._leave(scope)
        self.scopes.pop()

    def buffers(self, value: Any) -> tuple[int, ...]:
        return ()

    def bind_param(self, frame: Frame, param: Any, value: Any, shape: Any) -> None:
        h = param.__chandle__()
        self.nature[h] = rules.PARAM
        self.depth[h] = 0
        self.in_scope.add(h)

    def enter(self, frame: Frame, binding: Any) -> HolderSite:
        return _NO_SITE  # positions are the scopes' (the binding being walked in each)

    def read(self, frame: Frame, var: Any, site: HolderSite) -> None:
        scope = self.scopes[-1]
        self._use(var, scope, scope.index)

    def after_binding(self, frame: Frame, var: Any) -> None:
        self.scopes[-1].index += 1

    def branch(self, expr: Any, frame: Frame, var: str | None) -> Any:
        """Both branches from the same kills, one after the other; then their join."""
        scope = self.scopes[-1]
        depth = scope.depth + 1
        need = self.base_limit + FRAMES_PER_IF * depth
        if sys.getrecursionlimit() < need:
            sys.setrecursionlimit(need)
        outlives = lambda root: self.depth.get(root, 0) < depth  # noqa: E731
        mark = self.kills.mark()
        added = []
        for label, seq in (("then", expr.true_branch), ("else", expr.false_branch)):
            prefix = f"{scope.prefix}{scope.index}.{label}"
            self._walk(seq, frame, prefix + ".", prefix + ".result")
            added.append(self.kills.undo(mark, outlives))
        self.kills.join(*added)
        return self.EMPTY

    def call_expr(self, call: Any, frame: Frame, var: str | None) -> Any:
        if nodes.call_role(call) == ops.KILL:
            self._kill(self.scopes[-1], call)
        return self.EMPTY

    def bind(self, frame: Frame, binding: Any, value: Any, site: HolderSite) -> None:
        expr = binding.value
        role = nodes.call_role(expr)
        if role == ops.KILL:
            return  # a kill binds nothing the program can read
        self._define(self.scopes[-1], binding, expr, role if role in _NATURES else None)

    # -- definitions and aliases -----------------------------------------------------------

    def _root(self, var: relax.Var) -> int:
        h = var.__chandle__()
        return self.root.get(h, h)

    def _define(self, scope: _Scope, binding: Any, value: Any, nature: str | None) -> None:
        var = binding.var
        h = var.__chandle__()
        self.in_scope.add(h)
        scope.defs.append(h)
        alias: int | None = None
        kind = nodes.node_kind(value)
        if type(binding) is relax.MatchCast:
            if kind == nodes.VAR and tvm_ffi.structural_equal(var.ty, value.ty):
                alias = self._root(value)
        elif kind == nodes.VAR:
            alias = self._root(value)
        elif kind == nodes.ITEM:
            alias = self._define_item(h, value)
        elif kind == nodes.TUPLE:
            fields = ffi.items(value.fields)
            rebuilt, alias = self._rebuilt_tuple(fields)
            if not rebuilt:
                self.tuple_fields[h] = fields
        elif kind == nodes.CONSTANT:
            self.nature[h] = rules.CONST
        elif nature is not None:
            self.nature[h] = nature
        if alias is not None:
            self.root[h] = alias
            return
        self.depth[h] = scope.depth
        if self.expect_complete and self._is_candidate(h, var):
            self.candidate_depth[h] = scope.depth
            scope.candidates.append((h, var))

    def _define_item(self, h: int, value: relax.TupleGetItem) -> int | None:
        tup = value.tuple_value
        if nodes.node_kind(tup) != nodes.VAR:
            return None
        troot = self._root(tup)
        fields = self.tuple_fields.get(troot)
        if fields is None:
            arity = len(getattr(tup.ty, "fields", ()))
            self.item_of[h] = (troot, int(value.index), arity)
            return None
        field = fields[int(value.index)]
        if nodes.node_kind(field) == nodes.VAR:
            return self._root(field)
        if nodes.node_kind(field) == nodes.CONSTANT:
            self.nature[h] = rules.CONST
        return None

    def _rebuilt_tuple(self, fields: list) -> tuple[bool, int | None]:
        """Whether ``(t[0], ..., t[n-1])`` copies an n-tuple ``t`` that is not a literal,
        and the root it aliases: ``t`` when ``t`` is a parameter; otherwise none, and the
        copy is no tuple literal either (CanonicalizeBindings knows it as ``t``'s value)."""
        if not fields:
            return False, None
        source = None
        for i, field in enumerate(fields):
            if nodes.node_kind(field) != nodes.VAR:
                return False, None
            item = self.item_of.get(self._root(field))
            if item is None or item[1] != i or item[2] != len(fields):
                return False, None
            if source is not None and item[0] != source:
                return False, None
            source = item[0]
        return True, (source if self.nature.get(source) == rules.PARAM else None)

    def _is_candidate(self, h: int, var: relax.Var) -> bool:
        nature = self.nature.get(h)
        if nature == rules.STORAGE:
            return True
        return nature is None and nodes.type_kind(var.ty) == nodes.TENSOR_TYPE

    # -- uses, kills and scope ends --------------------------------------------------------

    def _use(self, var: relax.Var, scope: _Scope, index: int, result: bool = False) -> None:
        h = var.__chandle__()
        root = self.root.get(h, h)
        killed_at = self.kills.may.get(root)
        if killed_at is not None or h not in self.in_scope:  # else no rule can hold
            if not result:
                use = rules.USED
            else:
                use = rules.RETURNED if scope.depth == 0 else rules.BRANCH_RESULT
            site = Site(
                var=var.name,
                defined=h in self.in_scope,
                prim=nodes.type_kind(var.ty) == nodes.PRIM_TYPE,
                killed_by=self._kill_text(killed_at),
                use=use,
            )
            self._report(scope, index, var.name, rules.broken(rules.USE, site)[0])
        depth = self.candidate_depth.get(root)
        if depth is not None:
            if result and depth == scope.depth:
                self.candidate_depth[root] = -1  # part of the scope's result: never killed
            elif depth >= 0:
                outer = self.scopes[depth]  # at the binding (or If) being walked there
                self.last_use[root] = (outer, outer.index)

    def _kill(self, scope: _Scope, call: relax.Call) -> None:
        index = scope.index
        args = ffi.items(call.args)
        if len(args) != 1 or nodes.node_kind(args[0]) != nodes.VAR:
            text = ", ".join(nodes.short(a) for a in args)
            site = Site(var=text, malformed=True)
            self._report(scope, index, text, rules.broken(rules.KILL, site)[0])
            return
        var = args[0]
        root = self._root(var)
        ty_kind = nodes.type_kind(var.ty)
        site = Site(
            var=var.name,
            defined=var.__chandle__() in self.in_scope,
            prim=ty_kind == nodes.PRIM_TYPE,
            register=ty_kind not in (nodes.NO_REGISTER_TYPE, nodes.PRIM_TYPE),
            type_name=type(var.ty).__name__,
            alias="" if root == var.__chandle__() else " (an alias)",
            nature=self.nature.get(root),
            killed_by=self._kill_text(self.kills.may.get(root)),
        )
        found, frees = rules.broken(rules.KILL, site)
        self._report(scope, index, var.name, found)
        if frees:
            self.kills.kill(root, (scope, index))

    def _leave(self, scope: _Scope) -> None:
        """The scope's result expression, then its missed kills."""
        result_index = len(scope.bindings)
        for var in nodes.vars_in(scope.seq.body):
            self._use(var, scope, result_index, result=True)
        self.in_scope.difference_update(scope.defs)
        for root, var in scope.candidates:
            depth = self.candidate_depth.pop(root)
            where = self.last_use.pop(root, None)
            if where is None:
                continue  # never used: no last use
            last_scope, last_index = where
            site = Site(
                var=var.name,
                what="storage" if self.nature.get(root) == rules.STORAGE else "tensor",
                last_use=self._position(last_scope, last_index),
                in_result=depth < 0,
                killed_everywhere=root in self.kills.must,
            )
            self._report(last_scope, last_index, var.name, rules.broken(rules.SCOPE_END, site)[0])

    # -- reporting -------------------------------------------------------------------------

    def _position(self, scope: _Scope, index: int) -> str:
        if index >= len(scope.bindings):
            return scope.result_name
        return f"{scope.prefix}{index}"

    def _kill_text(self, where: tuple[_Scope, int] | None) -> str:
        if where is None:
            return ""
        scope, index = where
        return f"{nodes.describe(scope.bindings[index])} at {self._position(scope, index)}"

    def _report(
        self, scope: _Scope, index: int, variable: str, found: list[tuple[str, str]]
    ) -> None:
        if not found:
            return
        if index < len(scope.bindings):
            description = nodes.describe(scope.bindings[index])
        else:
            description = f"result {nodes.short(scope.seq.body)}"
        where = self._position(scope, index)
        for rule, message in found:
            self.violations.append(
                Violation(self.name, variable, where, description, rule, message)
            )
