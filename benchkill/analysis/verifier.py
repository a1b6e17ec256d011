"""Check the kills of a lowered Relax module: where each one is, and (optionally) none missing.

:func:`verify_kills` walks each Relax function and reports a :class:`Violation` for each
rule of :mod:`benchkill.analysis.kill_rules` that a kill, a use or a scope end breaks; the
variables CanonicalizeBindings merges count as one object, their *root* (see there).

The check walks each function once with an explicit stack (no recursion over bindings or
scopes), in time linear in the number of bindings times the ``If`` nesting depth.
"""

from __future__ import annotations

import tvm
import tvm_ffi
from tvm import relax

from benchkill.analysis import kill_rules as rules
from benchkill.analysis import nodes
from benchkill.analysis.kill_rules import RULES, Site, Violation
from benchkill.errors import BenchkillError
from benchkill.relax import ffi, ops

__all__ = ["RULES", "Violation", "verify_kills"]


def verify_kills(mod: tvm.IRModule, expect_complete: bool = False) -> list[Violation]:
    """Every kill-rule violation in the Relax functions of ``mod``, function by function.

    Parameters
    ----------
    mod : tvm.IRModule
        A lowered module (typically the output of a KillAfterLastUse pass).
    expect_complete : bool
        Also report missed kills.  *Complete* means: every storage (a variable bound to
        ``R.memory.alloc_storage`` / ``R.vm.alloc_storage``) and every tensor (a TensorType
        variable that has a VM register) that is defined in a scope (the function body or an
        ``If`` branch), is used at least once, and is not part of that scope's result, is
        killed on every path before the scope ends.  Kills inside both branches of a nested
        ``If`` count; aliases count as the variable they rename.  A never-used variable has
        no last use and is not required to be killed; promptness (how soon after the last
        use) is not checked.
    """
    if not isinstance(mod, tvm.IRModule):
        raise BenchkillError(f"verify_kills expects a tvm.IRModule, got {type(mod).__name__}")
    violations: list[Violation] = []
    for gvar, func in mod.functions_items():
        if isinstance(func, relax.Function):
            checker = _FunctionChecker(gvar.name_hint, expect_complete)
            violations.extend(checker.run(func))
    return violations


# Entries of the kill log (may-kill and must-kill sets are undone per If branch).
_MAY, _MUST = 0, 1
#: Operator roles a binding's root keeps as its nature (see kill_rules.Site.nature).
_NATURES = (ops.STORAGE, ops.NULL)


class _Scope:
    """A SeqExpr being walked: the function body (depth 0) or an If branch."""

    __slots__ = ("seq", "bindings", "prefix", "depth", "index", "candidates", "result_name", "defs")

    def __init__(self, seq: relax.SeqExpr, prefix: str, depth: int, result_name: str):
        self.seq = seq
        self.bindings = [b for block in ffi.items(seq.blocks) for b in ffi.items(block.bindings)]
        self.prefix = prefix
        self.depth = depth
        self.index = 0
        self.candidates: list[tuple[int, relax.Var]] = []
        self.result_name = result_name
        self.defs: list[int] = []  # handles bound here (out of scope after the scope)


class _IfTask:
    """An If binding whose branches are being walked; merges their kills afterwards."""

    __slots__ = ("scope", "binding", "mark", "phase", "then_added")

    def __init__(self, scope: _Scope, binding: relax.VarBinding, mark: int):
        self.scope = scope
        self.binding = binding
        self.mark = mark
        self.phase = 0
        self.then_added: tuple[dict, set] = ({}, set())


class _FunctionChecker:
    def __init__(self, name: str, expect_complete: bool):
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
        # Kills on some path (root -> kill location) and on every path; the log lets If
        # branches undo their kills before the other branch is walked.
        self.may: dict[int, tuple[_Scope, int]] = {}
        self.must: set[int] = set()
        self.log: list[tuple[int, int]] = []
        # Completeness: candidate root -> depth; candidate -> location of its last use.
        self.candidate_depth: dict[int, int] = {}
        self.last_use: dict[int, tuple[_Scope, int]] = {}
        self.cursor: list[tuple[_Scope, int]] = []  # current binding at each depth
        self.in_scope: set[int] = set()  # handles of the parameters and visible bindings

    # -- driver --------------------------------------------------------------------------

    def run(self, func: relax.Function) -> list[Violation]:
        for param in func.params:
            h = param.__chandle__()
            self.nature[h] = rules.PARAM
            self.depth[h] = 0
            self.in_scope.add(h)
        stack: list[_Scope | _IfTask] = [self._enter(func.body, "", 0, "return")]
        while stack:
            top = stack[-1]
            if type(top) is _IfTask:
                self._branch_done(top, stack)
                continue
            if top.index == len(top.bindings):
                self._leave(top)
                stack.pop()
                continue
            binding = top.bindings[top.index]
            self.cursor[top.depth] = (top, top.index)
            value = binding.value
            if nodes.node_kind(value) == nodes.IF:
                for var in nodes.vars_in(value.cond):
                    self._use(var, top, top.index)
                stack.append(_IfTask(top, binding, len(self.log)))
                prefix = f"{top.prefix}{top.index}.then"
                stack.append(
                    self._enter(value.true_branch, prefix + ".", top.depth + 1, prefix + ".result")
                )
                continue
            self._binding(top, binding, value)
            top.index += 1
        return self.violations

    def _enter(self, seq: object, prefix: str, depth: int, result_name: str) -> _Scope:
        if not isinstance(seq, relax.SeqExpr):  # once per scope
            raise BenchkillError(
                f"{self.name}: function body or If branch at {prefix or 'top'} is not a "
                f"SeqExpr ({type(seq).__name__}); normalize the module first"
            )
        scope = _Scope(seq, prefix, depth, result_name)
        if len(self.cursor) <= depth:
            self.cursor.append((scope, 0))
        return scope

    def _branch_done(self, task: _IfTask, stack: list) -> None:
        added = self._undo(task.mark, task.scope.depth + 1)
        if task.phase == 0:
            task.then_added = added
            task.phase = 1
            scope = task.scope
            prefix = f"{scope.prefix}{scope.index}.else"
            stack.append(
                self._enter(
                    task.binding.value.false_branch,
                    prefix + ".",
                    scope.depth + 1,
                    prefix + ".result",
                )
            )
            return
        stack.pop()
        (then_may, then_must), (else_may, else_must) = task.then_added, added
        for root, where in list(then_may.items()) + list(else_may.items()):
            if root not in self.may:
                self.may[root] = where
                self.log.append((_MAY, root))
        for root in then_must & else_must:
            if root not in self.must:
                self.must.add(root)
                self.log.append((_MUST, root))
        self._define(task.scope, task.binding, task.binding.value)
        task.scope.index += 1

    def _undo(self, mark: int, branch_depth: int) -> tuple[dict, set]:
        """Forget the kills logged since ``mark``; return those of variables defined outside
        the branch (the branch's own variables are out of scope after it)."""
        may: dict[int, tuple[_Scope, int]] = {}
        must: set[int] = set()
        while len(self.log) > mark:
            kind, root = self.log.pop()
            outer = self.depth.get(root, 0) < branch_depth
            if kind == _MAY:
                where = self.may.pop(root)
                if outer:
                    may[root] = where
            else:
                self.must.discard(root)
                if outer:
                    must.add(root)
        return may, must

    # -- bindings ------------------------------------------------------------------------

    def _binding(self, scope: _Scope, binding: object, value: object) -> None:
        role = nodes.call_role(value)
        if role == ops.KILL:
            self._kill(scope, value)
            return
        for var in nodes.vars_in(value):
            self._use(var, scope, scope.index)
        self._define(scope, binding, value, role if role in _NATURES else None)

    def _root(self, var: relax.Var) -> int:
        h = var.__chandle__()
        return self.root.get(h, h)

    def _define(
        self, scope: _Scope, binding: object, value: object, nature: str | None = None
    ) -> None:
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

    # -- uses and kills --------------------------------------------------------------------

    def _use(self, var: relax.Var, scope: _Scope, index: int, result: bool = False) -> None:
        h = var.__chandle__()
        root = self.root.get(h, h)
        killed_at = self.may.get(root)
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
                self.last_use[root] = self.cursor[depth]

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
            killed_by=self._kill_text(self.may.get(root)),
        )
        found, frees = rules.broken(rules.KILL, site)
        self._report(scope, index, var.name, found)
        if not frees:
            return
        self.may[root] = (scope, index)
        self.log.append((_MAY, root))
        if root not in self.must:
            self.must.add(root)
            self.log.append((_MUST, root))

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
                killed_everywhere=root in self.must,
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
