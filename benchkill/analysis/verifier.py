"""Check the kills of a lowered Relax module: where each one is, and (optionally) none missing.

A kill (``R.memory.kill_tensor``, ``R.memory.kill_storage``, ``R.vm.kill_object``) sets a VM
register to null, like Python's ``del``.  :func:`verify_kills` reports a
:class:`Violation` for each of these rules:

``kill-malformed``
    A kill whose argument is not exactly one variable.
``kill-null-value``, ``kill-constant``, ``kill-no-register-type``
    A kill of a variable the VM keeps no register for: one bound to ``R.null_value()``, to a
    constant (a tensor constant, ``R.str``, ``R.dtype``, a prim value), or of FuncType,
    ShapeType or PrimType.  Code generation fails on such a kill (``exec_mode="compiled"``
    always; bytecode for constants, and it ignores a kill of a null value).
``kill-param``
    A kill of a function parameter.
``double-kill``
    A second kill of a variable that is already killed on some path to it.
``use-after-kill``
    A use (in a binding, an ``If`` condition or a branch result) of a variable that is
    killed on some path to it.
``kill-output``
    A kill of a variable that the function returns.
``missed-kill`` (only with ``expect_complete=True``)
    A tensor or storage not killed after its last use; see :func:`verify_kills`.
``use-out-of-scope``
    A use or kill of a variable that is not defined there (e.g. bound in an ``If`` branch
    and used after the ``If``): ill-formed IR, on which the VM reads a register that was
    never written.  PrimType variables are not checked (symbolic shape variables are
    defined by match_cast patterns, not by bindings).

Aliases.  KillAfterLastUse starts with CanonicalizeBindings, which replaces a variable by
the one it merely renames, so a kill that is harmless in the input can become a
use-after-free in the output.  The rules therefore treat as one object the variables that
CanonicalizeBindings merges: ``y = x``, ``y = R.match_cast(x, T)`` with T equal to x's type,
``y = t[i]`` where ``t`` is bound to a tuple literal (``y`` is then its i-th field), and a
tuple rebuilt item by item from a parameter tuple.  A match_cast that refines the type
(``R.match_cast(obj, R.Tensor(...))``) gets a register of its own and is not an alias.
Not modelled: a match_cast that becomes trivial once CanonicalizeBindings has inferred a
symbolic dimension (``R.match_cast(x, R.Tensor((n,)))`` of a float32[4] ``x``).

The check walks each function once with an explicit stack (no recursion over bindings or
scopes), in time linear in the number of bindings times the ``If`` nesting depth.
"""

from __future__ import annotations

from dataclasses import dataclass

import tvm
import tvm_ffi
from tvm import relax

from benchkill.errors import BenchkillError

#: Rule name -> one-line meaning.
RULES = {
    "kill-malformed": "the kill's argument is not exactly one variable",
    "kill-null-value": "kill of a variable bound to R.null_value() (no VM register)",
    "kill-constant": "kill of a variable bound to a constant (no VM register)",
    "kill-no-register-type": "kill of a FuncType/ShapeType/PrimType variable (no VM register)",
    "kill-param": "kill of a function parameter",
    "double-kill": "kill of a variable already killed on some path",
    "use-after-kill": "use of a variable killed on some path to the use",
    "kill-output": "kill of a variable the function returns",
    "missed-kill": "tensor or storage not killed after its last use (expect_complete)",
    "use-out-of-scope": "use or kill of a variable outside the scope that defines it "
    "(ill-formed IR)",
}


@dataclass(frozen=True)
class Violation:
    """One broken rule: where (function, binding position and text), what, and why.

    ``binding`` is the position in the function: ``"3"`` is the fourth binding of the body,
    ``"3.then.0"`` the first binding of the true branch of the ``If`` bound at ``"3"``,
    ``"return"`` / ``"3.else.result"`` the result expression of the body / of a branch.
    """

    function: str
    variable: str
    binding: str
    description: str
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.function} @{self.binding} {self.rule}: {self.message} [{self.description}]"


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


# --- classification of nodes (cached per Python class: isinstance on TVM's ABCs is slow) ----

_KILL, _STORAGE, _NULL = "kill", "storage", "null"
_OP_KIND = {
    tvm.ir.Op.get(name).__chandle__(): kind
    for name, kind in [
        ("relax.memory.kill_tensor", _KILL),
        ("relax.memory.kill_storage", _KILL),
        ("relax.vm.kill_object", _KILL),
        ("relax.memory.alloc_storage", _STORAGE),
        ("relax.vm.alloc_storage", _STORAGE),
        ("relax.null_value", _NULL),
    ]
}
_PARAM, _CONST = "param", "const"
_MAY, _MUST = 0, 1

# Node classes: what each Python class of expression or type is, decided once per class.
_VAR, _CALL, _TUPLE, _ITEM, _IF, _NESTED, _CONSTANT, _OP, _OTHER = range(9)
_NODE_CLASSES = [
    (relax.Var, _VAR),
    (relax.Call, _CALL),
    (relax.Tuple, _TUPLE),
    (relax.TupleGetItem, _ITEM),
    (relax.If, _IF),
    (relax.Function, _NESTED),
    (relax.SeqExpr, _NESTED),
    (tvm.ir.expr.Constant, _CONSTANT),  # tensor constants, R.str, R.dtype, prim values
    (tvm.ir.Op, _OP),
]
_node_cache: dict[type, int] = {}


def _node(expr: object) -> int:
    cls = type(expr)
    kind = _node_cache.get(cls)
    if kind is None:
        kind = next((k for base, k in _NODE_CLASSES if issubclass(cls, base)), _OTHER)
        _node_cache[cls] = kind
    return kind


_NO_REGISTER_TYPES = (relax.FuncType, relax.ShapeType)
_TENSOR, _NO_REGISTER, _PRIM, _OTHER_TYPE = range(4)
_type_cache: dict[type, int] = {}


def _type_class(ty: object) -> int:
    cls = type(ty)
    kind = _type_cache.get(cls)
    if kind is None:
        if issubclass(cls, relax.TensorType):
            kind = _TENSOR
        elif issubclass(cls, tvm.ir.PrimType):
            kind = _PRIM
        elif issubclass(cls, _NO_REGISTER_TYPES):
            kind = _NO_REGISTER
        else:
            kind = _OTHER_TYPE
        _type_cache[cls] = kind
    return kind


_array_get = tvm_ffi.get_global_func("ffi.ArrayGetItem")
_array_size = tvm_ffi.get_global_func("ffi.ArraySize")


def _items(array: object) -> list:
    """An FFI array as a list (the wrapper's iterator costs two FFI calls per item)."""
    return [_array_get(array, i) for i in range(_array_size(array))]


def _call_kind(value: object) -> str | None:
    if _node(value) == _CALL:
        op = value.op
        if _node(op) == _OP:
            return _OP_KIND.get(op.__chandle__())
    return None


_LEAVES = (_CONSTANT, _OP, _OTHER)


def _vars_in(expr: object) -> list:
    """The relax variables an expression reads, in reading order (closures: their free
    variables).  Recursion follows the nesting of one expression (a call's tuple argument),
    never the number of bindings."""
    cache = _node_cache
    kind = cache.get(type(expr))
    if kind is None:
        kind = _node(expr)
    if kind == _VAR:
        return [expr]
    if kind == _CALL:
        found = []
        op = expr.op
        if _node(op) == _VAR:
            found.append(op)
        args = expr.args
        for i in range(_array_size(args)):
            arg = _array_get(args, i)
            arg_kind = cache.get(type(arg))
            if arg_kind is None:
                arg_kind = _node(arg)
            if arg_kind == _VAR:
                found.append(arg)
            elif arg_kind not in _LEAVES:
                found.extend(_vars_in(arg))
        return found
    if kind == _TUPLE:
        return [v for field in _items(expr.fields) for v in _vars_in(field)]
    if kind == _ITEM:
        return _vars_in(expr.tuple_value)
    if kind == _IF or kind == _NESTED:
        return list(relax.analysis.free_vars(expr))
    return []


# --- the per-function walk ---------------------------------------------------------------


class _Scope:
    """A SeqExpr being walked: the function body (depth 0) or an If branch."""

    __slots__ = ("seq", "bindings", "prefix", "depth", "index", "candidates", "result_name", "defs")

    def __init__(self, seq: relax.SeqExpr, prefix: str, depth: int, result_name: str):
        self.seq = seq
        self.bindings = [b for block in _items(seq.blocks) for b in _items(block.bindings)]
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
        self.nature: dict[int, str] = {}  # root handle -> _PARAM / _CONST / _NULL / _STORAGE
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
            self.nature[h] = _PARAM
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
            if _node(value) == _IF:
                for var in _vars_in(value.cond):
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
        call_kind = _call_kind(value)
        if call_kind == _KILL:
            self._kill(scope, value)
            return
        for var in _vars_in(value):
            self._use(var, scope, scope.index)
        self._define(scope, binding, value, call_kind)

    def _root(self, var: relax.Var) -> int:
        h = var.__chandle__()
        return self.root.get(h, h)

    def _define(
        self, scope: _Scope, binding: object, value: object, call_kind: str | None = None
    ) -> None:
        var = binding.var
        h = var.__chandle__()
        self.in_scope.add(h)
        scope.defs.append(h)
        alias: int | None = None
        kind = _node(value)
        if type(binding) is relax.MatchCast:
            if kind == _VAR and tvm_ffi.structural_equal(var.ty, value.ty):
                alias = self._root(value)
        elif kind == _VAR:
            alias = self._root(value)
        elif kind == _ITEM:
            alias = self._define_item(h, value)
        elif kind == _TUPLE:
            fields = _items(value.fields)
            rebuilt, alias = self._rebuilt_tuple(fields)
            if not rebuilt:
                self.tuple_fields[h] = fields
        elif kind == _CONSTANT:
            self.nature[h] = _CONST
        else:
            if call_kind is not None:
                self.nature[h] = call_kind
        if alias is not None:
            self.root[h] = alias
            return
        self.depth[h] = scope.depth
        if self.expect_complete and self._is_candidate(h, var):
            self.candidate_depth[h] = scope.depth
            scope.candidates.append((h, var))

    def _define_item(self, h: int, value: relax.TupleGetItem) -> int | None:
        tup = value.tuple_value
        if _node(tup) != _VAR:
            return None
        troot = self._root(tup)
        fields = self.tuple_fields.get(troot)
        if fields is None:
            arity = len(getattr(tup.ty, "fields", ()))
            self.item_of[h] = (troot, int(value.index), arity)
            return None
        field = fields[int(value.index)]
        if _node(field) == _VAR:
            return self._root(field)
        if _node(field) == _CONSTANT:
            self.nature[h] = _CONST
        return None

    def _rebuilt_tuple(self, fields: list) -> tuple[bool, int | None]:
        """Whether ``(t[0], ..., t[n-1])`` copies an n-tuple ``t`` that is not a literal,
        and the root it aliases: ``t`` when ``t`` is a parameter; otherwise none, and the
        copy is no tuple literal either (CanonicalizeBindings knows it as ``t``'s value)."""
        if not fields:
            return False, None
        source = None
        for i, field in enumerate(fields):
            if _node(field) != _VAR:
                return False, None
            item = self.item_of.get(self._root(field))
            if item is None or item[1] != i or item[2] != len(fields):
                return False, None
            if source is not None and item[0] != source:
                return False, None
            source = item[0]
        return True, (source if self.nature.get(source) == _PARAM else None)

    def _is_candidate(self, h: int, var: relax.Var) -> bool:
        nature = self.nature.get(h)
        if nature == _STORAGE:
            return True
        return nature is None and _type_class(var.ty) == _TENSOR

    # -- uses and kills --------------------------------------------------------------------

    def _use(self, var: relax.Var, scope: _Scope, index: int, result: bool = False) -> None:
        self._check_in_scope(var, scope, index)
        root = self._root(var)
        killed_at = self.may.get(root)
        if killed_at is not None:
            if result and scope.depth == 0:
                rule, what = "kill-output", "returned by the function"
            elif result:
                rule, what = "use-after-kill", "used as the branch result"
            else:
                rule, what = "use-after-kill", "used"
            self._report(
                scope, index, var, rule, f"{var.name} is {what} after {self._kill_text(killed_at)}"
            )
        depth = self.candidate_depth.get(root)
        if depth is not None:
            if result and depth == scope.depth:
                self.candidate_depth[root] = -1  # part of the scope's result: never killed
            elif depth >= 0:
                self.last_use[root] = self.cursor[depth]

    def _check_in_scope(self, var: relax.Var, scope: _Scope, index: int) -> None:
        if var.__chandle__() not in self.in_scope and _type_class(var.ty) != _PRIM:
            self._report(
                scope,
                index,
                var,
                "use-out-of-scope",
                f"{var.name} is not defined here (ill-formed IR: the VM would read a register "
                "that was never written)",
            )

    def _kill(self, scope: _Scope, call: relax.Call) -> None:
        index = scope.index
        args = _items(call.args)
        if len(args) != 1 or _node(args[0]) != _VAR:
            text = ", ".join(_short(a) for a in args)
            self._report(
                scope,
                index,
                None,
                "kill-malformed",
                f"kill of ({text}): expected exactly one variable",
                variable=text,
            )
            return
        var = args[0]
        self._check_in_scope(var, scope, index)
        root = self._root(var)
        nature = self.nature.get(root)
        alias = "" if root == var.__chandle__() else " (an alias)"
        if nature == _NULL:
            self._report(
                scope,
                index,
                var,
                "kill-null-value",
                f"{var.name}{alias} is bound to R.null_value() and has no VM register",
            )
            return
        if nature == _CONST:
            self._report(
                scope,
                index,
                var,
                "kill-constant",
                f"{var.name}{alias} is bound to a constant and has no VM register",
            )
            return
        if _type_class(var.ty) in (_NO_REGISTER, _PRIM):
            self._report(
                scope,
                index,
                var,
                "kill-no-register-type",
                f"{var.name} has type {type(var.ty).__name__} and no VM register",
            )
            return
        killed_at = self.may.get(root)
        if killed_at is not None:
            self._report(
                scope,
                index,
                var,
                "double-kill",
                f"{var.name}{alias} is already killed by {self._kill_text(killed_at)}",
            )
            return
        if nature == _PARAM:
            self._report(
                scope, index, var, "kill-param", f"{var.name}{alias} is a parameter of the function"
            )
        self.may[root] = (scope, index)
        self.log.append((_MAY, root))
        if root not in self.must:
            self.must.add(root)
            self.log.append((_MUST, root))

    def _leave(self, scope: _Scope) -> None:
        """The scope's result expression, then its missed kills."""
        result_index = len(scope.bindings)
        for var in _vars_in(scope.seq.body):
            self._use(var, scope, result_index, result=True)
        self.in_scope.difference_update(scope.defs)
        for root, var in scope.candidates:
            depth = self.candidate_depth.pop(root)
            where = self.last_use.pop(root, None)
            if depth < 0 or where is None or root in self.must:
                continue
            last_scope, last_index = where
            what = "storage" if self.nature.get(root) == _STORAGE else "tensor"
            self._report(
                last_scope,
                last_index,
                var,
                "missed-kill",
                f"{what} {var.name} is not killed after its last use at "
                f"{self._position(last_scope, last_index)}",
            )

    # -- reporting -------------------------------------------------------------------------

    def _position(self, scope: _Scope, index: int) -> str:
        if index >= len(scope.bindings):
            return scope.result_name
        return f"{scope.prefix}{index}"

    def _kill_text(self, where: tuple[_Scope, int]) -> str:
        scope, index = where
        return f"{_describe(scope.bindings[index])} at {self._position(scope, index)}"

    def _report(
        self,
        scope: _Scope,
        index: int,
        var: relax.Var | None,
        rule: str,
        message: str,
        variable: str | None = None,
    ) -> None:
        if index < len(scope.bindings):
            description = _describe(scope.bindings[index])
        else:
            description = f"result {_short(scope.seq.body)}"
        self.violations.append(
            Violation(
                function=self.name,
                variable=variable if variable is not None else var.name,
                binding=self._position(scope, index),
                description=description,
                rule=rule,
                message=message,
            )
        )


# --- short text of bindings (only built for violations) ------------------------------------


def _describe(binding: object) -> str:
    value = binding.value
    if isinstance(value, relax.If):
        text = f"if {_short(value.cond)}: ..."
    elif isinstance(binding, relax.MatchCast):
        text = f"R.match_cast({_short(value)}, ...)"
    else:
        text = _short(value)
    if _call_kind(value) == _KILL:
        return text
    return f"{binding.var.name} = {text}"


def _short(expr: object, limit: int = 80) -> str:
    if isinstance(expr, relax.Var):
        text = expr.name
    elif isinstance(expr, relax.Call):
        op = expr.op
        args = [_short(a, 20) for a in expr.args]
        if isinstance(op, tvm.ir.Op):
            callee = "R." + op.name.removeprefix("relax.")
        elif isinstance(op, relax.ExternFunc):
            callee, args = "R.call_packed", [repr(str(op.global_symbol)), *args]
        elif isinstance(op, tvm.ir.GlobalVar):
            callee = op.name_hint
        else:
            callee = _short(op)
        text = f"{callee}({', '.join(args)})"
    elif isinstance(expr, relax.Tuple):
        text = f"({', '.join(_short(f, 20) for f in expr.fields)})"
    elif isinstance(expr, relax.TupleGetItem):
        text = f"{_short(expr.tuple_value)}[{int(expr.index)}]"
    elif isinstance(expr, tvm.ir.StringImm):
        text = repr(str(expr.value))
    elif isinstance(expr, (tvm.tirx.IntImm, tvm.tirx.FloatImm)):
        text = str(expr.value)
    elif isinstance(expr, relax.ShapeExpr):
        dims = (str(v.value) if isinstance(v, tvm.tirx.IntImm) else str(v) for v in expr.values)
        text = f"R.shape([{', '.join(dims)}])"
    elif isinstance(expr, tvm.ir.expr.Constant):
        text = "const"
    else:
        text = type(expr).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."
