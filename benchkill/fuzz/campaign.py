"""Differential fuzzing of benchkill's KillAfterLastUse against TVM's, with hypothesis.

:func:`lowered_modules` draws random Relax functions in the lowered form the kill pass
sees (straight-line code; If/else nested up to three deep; tuples and TupleGetItem;
match_cast (to the same, a looser or a symbolic type) and trivial rebindings; tensor,
dtype, shape and prim constants;
``R.null_value()``; storage shared by several tensors; pre-existing kills; extern calls
taking and returning objects; calls to PrimFuncs), built with TVM's raw constructors and
fully typed.  Every drawn program is valid: a pre-existing kill comes after the last use
of the variable and of everything CanonicalizeBindings would merge with it, so
:func:`benchkill.verify_kills` finds nothing wrong in it (apart from missed kills).

The properties (:func:`check_example`):

1. benchkill's pass (default mode) gives a module structurally equal to TVM's
   ``relax.transform.KillAfterLastUse``, or both raise;
2. ``verify_kills`` finds no violation in benchkill's output in either mode; with
   ``expect_complete`` it finds, in TVM-compatible mode, only the missed kills TVM keeps on
   purpose (in a scope, at or after its first ``If``), and none at all in
   ``tvm_compatible=False`` mode;
3. the legacy mode (``exclude_null_value=False``) breaks no rule but kill-null-value.

:func:`buildable_modules` draws high-level programs (``R.add``/``R.multiply``/... with
If/else) that :func:`check_vm_equivalence` builds with every kill variant in both exec
modes, runs on the VM and compares with the build without kills.

:func:`run_campaign` checks N drawn modules, and optionally M buildable programs in
child processes (``benchkill fuzz``).  hypothesis is a test dependency of benchkill:
this module needs it, the rest of the package does not.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import tvm
import tvm.ir._ffi_api as _ir_ffi
import tvm.relax._ffi_api as _rx_ffi
from hypothesis import HealthCheck, assume, given, seed, settings
from hypothesis import strategies as st
from tvm import relax

from benchkill.analysis.verifier import Violation, verify_kills
from benchkill.errors import BenchkillError
from benchkill.execution.child import run_task, set_stage, work_dir
from benchkill.relax.text import module_text

# --- IR leaves shared by every drawn module --------------------------------------------

_KERNELS_SOURCE = """
@I.ir_module
class Kernels:
    @T.prim_func(private=True)
    def unary(a: T.Buffer((T.int64(4),), "float32"), out: T.Buffer((T.int64(4),), "float32")):
        T.func_attr({"tirx.noalias": True})
        for i in range(T.int64(4)):
            out[i] = a[i] + T.float32(1)

    @T.prim_func(private=True)
    def binary(a: T.Buffer((T.int64(4),), "float32"), b: T.Buffer((T.int64(4),), "float32"),
               out: T.Buffer((T.int64(4),), "float32")):
        T.func_attr({"tirx.noalias": True})
        for i in range(T.int64(4)):
            out[i] = a[i] * b[i]
"""


@lru_cache(maxsize=1)
def _kernels() -> tvm.IRModule:
    return tvm.script.from_source(_KERNELS_SOURCE)


class _Atoms:
    """Types, ops and leaves (immutable, so one instance serves every module)."""

    def __init__(self) -> None:
        def i64(value: int) -> tvm.ir.Expr:
            return tvm.tirx.IntImm("int64", value)

        self.i64 = i64
        self.shape4 = relax.ShapeExpr([i64(4)])
        self.tensor = relax.TensorType(self.shape4, "float32")
        self.scalar = relax.TensorType(relax.ShapeExpr([]), "float32")
        self.bool_tensor = relax.TensorType(relax.ShapeExpr([]), "bool")
        self.bool_prim = tvm.ir.PrimType("bool")
        self.any = relax.AnyType()
        self.void = tvm.ir.TupleType([])
        self.pair = tvm.ir.TupleType([self.tensor, self.any])
        self.shape_ty = self.shape4.ty
        self.loose = relax.TensorType(None, "float32", ndim=1)
        self.n = tvm.tirx.Var("n", "int64")
        self.symbolic = relax.TensorType(relax.ShapeExpr([self.n]), "float32")
        self.int64 = tvm.ir.PrimType("int64")
        self.storage_bytes = relax.ShapeExpr([i64(16)])
        self.global_scope = tvm.ir.StringImm("global")
        self.uint8 = tvm.ir.GenericConst(tvm.DataType("uint8"), self.any)
        self.float32 = tvm.ir.GenericConst(tvm.DataType("float32"), self.any)
        op = tvm.ir.Op.get
        self.mem_alloc_storage = op("relax.memory.alloc_storage")
        self.mem_alloc_tensor = op("relax.memory.alloc_tensor")
        self.vm_alloc_storage = op("relax.vm.alloc_storage")
        self.vm_alloc_tensor = op("relax.vm.alloc_tensor")
        self.null_value = op("relax.null_value")
        self.kill_tensor = op("relax.memory.kill_tensor")
        self.kill_storage = op("relax.memory.kill_storage")
        self.kill_object = op("relax.vm.kill_object")
        self.externs = [relax.ExternFunc(f"test.fuzz.f{i}") for i in range(3)]
        kernels = _kernels()
        self.kernels = {}
        for name in ("unary", "binary"):
            gv = tvm.ir.GlobalVar(name)
            _rx_ffi.UpdateType(gv, kernels.get_global_var(name).ty)
            self.kernels[name] = gv


@lru_cache(maxsize=1)
def _atoms() -> _Atoms:
    return _Atoms()


# --- the generator ---------------------------------------------------------------------

# Kinds of values the generator tracks (what a variable holds, for picking operands).
TENSOR, STORAGE, OBJECT, PAIR, LITERAL, SHAPE, PRIM, NULL, CONST, BOOL, STRING, VOID = (
    "tensor",
    "storage",
    "object",
    "pair",
    "literal",
    "shape",
    "prim",
    "null",
    "const",
    "bool",
    "string",
    "void",
)
LOOSE = "loose"  # a tensor of another type: R.Tensor(ndim=1) or R.Tensor((n,)) after match_cast
#: kinds an extern call or a tuple literal may take as an argument
_ANY_ARG = (TENSOR, STORAGE, OBJECT, PAIR, LITERAL, SHAPE, PRIM, NULL, CONST, BOOL, STRING, LOOSE)
#: kinds that hold a VM register (a kill of them is legal)
_KILLABLE = (TENSOR, STORAGE, OBJECT, PAIR, LITERAL, BOOL, LOOSE)

#: Statements, simplest first (hypothesis shrinks towards the start of the list).
_STATEMENTS = (
    "extern",
    "storage",
    "tensor",
    "kernel",
    "rebind",
    "match_cast",
    "tuple",
    "item",
    "retuple",
    "constant",
    "null",
    "kill",
    "kill",
    "if",
    "if",
)


class _Value:
    """A variable of the drawn program and what it is (for picking operands and kills)."""

    __slots__ = ("var", "kind", "root", "depth", "exposes", "fields", "param", "serial", "item")
    _serials = iter(range(1 << 62))

    def __init__(self, var, kind, root=None, depth=0, fields=None, param=False):
        self.serial = next(self._serials)  # not id(): ids of dropped values get reused
        self.var = var
        self.kind = kind
        self.root = self if root is None else root  # the value CanonicalizeBindings keeps
        self.depth = depth
        self.fields = fields  # the field values of a tuple literal
        self.param = param
        self.item: tuple[_Value, int] | None = None  # (tuple, index) of an item of a pair
        # Roots this value lets a later binding reach (a tuple literal reaches its fields).
        exposes = {self.root.serial}
        for field in fields or ():
            exposes |= field.exposes
        self.exposes = frozenset(exposes)


@st.composite
def _statement(draw, program: _Program) -> bool:
    """One statement of ``program`` drawn with this span's ``draw``; False: stop here."""
    if draw(st.integers(0, 9)) == 0:
        return False
    outer, program.draw = program.draw, draw
    try:
        getattr(program, "stmt_" + draw(st.sampled_from(_STATEMENTS)))()
    finally:
        program.draw = outer
    return True


class _Program:
    """Draws one lowered function, statement by statement, with a hypothesis ``draw``."""

    def __init__(
        self,
        draw,
        max_statements: int,
        max_depth: int,
        string_vars: bool = False,
        branch_kills: bool = False,
    ):
        self.draw = draw
        self.branch_kills = branch_kills
        self.a = _atoms()
        self.budget = max_statements
        self.max_depth = max_depth
        self.string_vars = string_vars
        self.scopes: list[list] = []  # bindings of each open scope
        self.values: list[_Value] = []  # visible values, innermost scope last
        self.killed: set[int] = set()  # serials of killed roots
        self.names = 0

    # -- helpers -----------------------------------------------------------------------
    def name(self, prefix: str) -> str:
        self.names += 1
        return f"{prefix}{self.names}"

    def usable(self, kinds) -> list[_Value]:
        return [v for v in self.values if v.kind in kinds and not (v.exposes & self.killed)]

    def pick(self, kinds) -> _Value | None:
        pool = self.usable(kinds)
        if not pool:
            return None
        return pool[self.draw(st.integers(0, len(pool) - 1))]

    def depth(self) -> int:
        return len(self.scopes) - 1

    def bind(self, kind: str, ty, value, prefix: str, root=None, fields=None) -> _Value:
        var = _ir_ffi.Var(self.name(prefix), ty, None)
        self.scopes[-1].append(_rx_ffi.VarBinding(var, value, None))
        return self.define(var, kind, root, fields)

    def define(self, var, kind, root=None, fields=None) -> _Value:
        val = _Value(var, kind, root, self.depth() if root is None else root.depth, fields)
        if kind != VOID:
            self.values.append(val)
        return val

    def call(self, ty, op, args, ty_args=()):
        return _ir_ffi.Call(ty, op, list(args), None, list(ty_args), None)

    # -- the function ------------------------------------------------------------------
    def function(self) -> relax.Function:
        a = self.a
        params = [
            _ir_ffi.Var("x", a.tensor, None),
            _ir_ffi.Var("obj", a.any, None),
            _ir_ffi.Var("flag", a.bool_tensor, None),
            _ir_ffi.Var("cond", a.bool_prim, None),
            _ir_ffi.Var("pair", a.pair, None),
        ]
        for var, kind in zip(params, (TENSOR, OBJECT, BOOL, PRIM, PAIR), strict=True):
            self.values.append(_Value(var, kind, param=True))
        self.scopes.append([])
        self.statements(self.budget)
        result = self.result(top=True)
        body = self.close(result)
        attrs = tvm.ir.DictAttrs({"global_symbol": "main", "relax.force_pure": True})
        return _rx_ffi.Function(params, body, result.ty, True, attrs, None)

    def statements(self, limit: int) -> None:
        """Up to ``limit`` statements; each is one hypothesis span (a "go on?" draw and the
        statement's own draws), so the shrinker can delete statements one by one."""
        for _ in range(limit):
            if self.budget <= 0 or not self.draw(_statement(self)):
                return
            self.budget -= 1

    def close(self, result) -> relax.SeqExpr:
        bindings = self.scopes.pop()
        # one or two binding blocks (TVM's pass merges adjacent blocks; its kills go in the
        # block of their binding)
        split = self.draw(st.integers(0, len(bindings))) if bindings else 0
        if not bindings:
            blocks = []  # as TVMScript parses an empty scope
        elif split in (0, len(bindings)):
            blocks = [_rx_ffi.BindingBlock(bindings, None)]
        else:
            blocks = [
                _rx_ffi.BindingBlock(bindings[:split], None),
                _rx_ffi.BindingBlock(bindings[split:], None),
            ]
        seq = _rx_ffi.SeqExpr(blocks, result, None)
        _rx_ffi.UpdateType(seq, result.ty)
        return seq

    def result(self, top: bool):
        """The result of a scope: a tensor (a branch), or for the function maybe a tuple."""
        choice = self.draw(st.integers(0, 2)) if top else 0
        if choice == 1:
            picked = self.pick((TENSOR, OBJECT, PAIR, LITERAL, STORAGE))
            if picked is not None:
                return picked.var
        if choice == 2:
            first, second = self.pick((TENSOR,)), self.pick((OBJECT, STORAGE, TENSOR))
            if first is not None and second is not None:
                return self.literal([first, second]).var
        picked = self.pick((TENSOR,))
        if picked is None:
            picked = self.extern_call(TENSOR)
        return picked.var

    # -- statements ----------------------------------------------------------------------
    def stmt_extern(self) -> None:
        kind = self.draw(st.sampled_from((OBJECT, TENSOR, PAIR, BOOL, VOID)))
        self.extern_call(kind)

    def extern_call(self, kind: str) -> _Value:
        a = self.a
        args = []
        for i in range(self.draw(st.integers(0, 3))):
            picked = self.pick(_KILLABLE if i == 0 else _ANY_ARG)  # objects get read too
            if picked is not None:
                args.append(picked.var)
        inline = self.draw(st.sampled_from((None, "str", "prim", "shape", "dtype")))
        if inline is not None:
            args.append(
                {
                    "str": tvm.ir.StringImm("s"),
                    "prim": a.i64(7),
                    "shape": a.shape4,
                    "dtype": a.float32,
                }[inline]
            )
        ty = {OBJECT: a.any, TENSOR: a.tensor, PAIR: a.pair, BOOL: a.bool_tensor, VOID: a.void}[
            kind
        ]
        func = a.externs[self.draw(st.integers(0, len(a.externs) - 1))]
        return self.bind(kind, ty, self.call(ty, func, args, (ty,)), "o" if kind != VOID else "_")

    def stmt_storage(self) -> None:
        self.new_storage()

    def new_storage(self) -> _Value:
        a = self.a
        if self.draw(st.booleans()):
            args = (a.storage_bytes, a.i64(0), a.global_scope, a.uint8)
            value = self.call(a.any, a.mem_alloc_storage, args)
        else:
            args = (a.storage_bytes, a.i64(0), a.uint8, a.global_scope)
            value = self.call(a.any, a.vm_alloc_storage, args)
        return self.bind(STORAGE, a.any, value, "storage")

    def stmt_tensor(self) -> None:
        self.new_tensor()

    def new_tensor(self) -> _Value:
        a = self.a
        storage = self.pick((STORAGE,)) or self.new_storage()
        op = a.mem_alloc_tensor if self.draw(st.booleans()) else a.vm_alloc_tensor
        args = (storage.var, a.i64(0), a.shape4, a.float32, a.i64(0))
        return self.bind(TENSOR, a.tensor, self.call(a.tensor, op, args), "alloc")

    def stmt_kernel(self) -> None:
        a = self.a
        name = self.draw(st.sampled_from(("unary", "binary")))
        inputs = []
        for _ in range(1 if name == "unary" else 2):
            picked = self.pick((TENSOR,))
            inputs.append((picked or self.new_tensor()).var)
        out = self.new_tensor()
        self.bind(VOID, a.void, self.call(a.void, a.kernels[name], [*inputs, out.var]), "_")

    def stmt_rebind(self) -> None:
        picked = self.pick(_ANY_ARG)
        if picked is not None:
            self.bind(
                picked.kind, picked.var.ty, picked.var, "y", root=picked.root, fields=picked.fields
            )

    def stmt_match_cast(self) -> None:
        a = self.a
        how = self.draw(st.sampled_from(("refine", "same", "loose", "symbolic")))
        if how == "symbolic" and self.depth() > 0:
            how = "loose"  # a symbolic variable is defined at the top level only
        if how == "refine":  # an object as a tensor: a new register, not an alias
            picked = self.pick((OBJECT,))
            if picked is None:
                return
            var = _ir_ffi.Var(self.name("m"), a.tensor, None)
            self.scopes[-1].append(_rx_ffi.MatchCast(var, picked.var, a.tensor, None))
            self.define(var, TENSOR)
        elif how in ("loose", "symbolic"):  # another type: kept by CanonicalizeBindings
            # Symbolic only from an object: from a float32[4] tensor CanonicalizeBindings
            # infers n = 4, makes the match_cast trivial and turns a kill of its result
            # into a kill of the source (see tests/test_fuzz.py).
            picked = self.pick((TENSOR, OBJECT) if how == "loose" else (OBJECT,))
            if picked is None:
                return
            ty = a.loose if how == "loose" else a.symbolic
            var = _ir_ffi.Var(self.name("m"), ty, None)
            self.scopes[-1].append(_rx_ffi.MatchCast(var, picked.var, ty, None))
            self.define(var, LOOSE)
        else:  # to its own type: an alias
            picked = self.pick((TENSOR, OBJECT, STORAGE))
            if picked is None:
                return
            ty = picked.var.ty
            var = _ir_ffi.Var(self.name("m"), ty, None)
            self.scopes[-1].append(_rx_ffi.MatchCast(var, picked.var, ty, None))
            self.define(var, picked.kind, root=picked.root)

    def stmt_tuple(self) -> None:
        fields = []
        for _ in range(self.draw(st.integers(1, 3))):
            if self.draw(st.integers(0, 5)) == 0:  # an inline constant field
                fields.append(_Value(relax.const(np.float32(0.5), "float32"), CONST))
                continue
            # no PrimType field: TVMScript cannot parse R.Tuple(T.bool) back inside a module
            picked = self.pick((TENSOR, OBJECT, STORAGE, CONST, NULL, SHAPE, PAIR, LOOSE, LITERAL))
            if picked is not None:
                fields.append(picked)
        if fields:
            self.literal(fields)

    def stmt_retuple(self) -> None:
        """``(t[0], t[1])`` of a pair that is not a literal (see :meth:`literal`)."""
        picked = self.pick((PAIR,))
        if picked is None:
            return
        first, second = (self.item_of(picked, index) for index in (0, 1))
        self.literal([first, second])

    def literal(self, fields: list[_Value]) -> _Value:
        """A tuple of ``fields``.  Like CanonicalizeBindings, ``(t[0], t[1])`` of a pair ``t``
        that is not a literal is ``t`` itself when ``t`` is a parameter, and an opaque pair
        (whose items are not its fields) otherwise."""
        value = _ir_ffi.Tuple([f.var for f in fields], None)
        items = [f.root.item for f in fields]
        if len(items) == 2 and all(items) and items[0][0] is items[1][0]:
            if (items[0][1], items[1][1]) == (0, 1):
                source = items[0][0]
                root = source if source.param else None
                return self.bind(PAIR, self.a.pair, value, "copy", root=root)
        return self.bind(LITERAL, value.ty, value, "tup", fields=fields)

    def item_of(self, pair: _Value, index: int) -> _Value:
        a = self.a
        kind, ty = ((TENSOR, a.tensor), (OBJECT, a.any))[index]
        item = self.bind(kind, ty, _ir_ffi.TupleGetItem(pair.var, index, None), "item")
        item.item = (pair.root, index)
        return item

    def stmt_item(self) -> None:
        picked = self.pick((PAIR, LITERAL))
        if picked is None:
            return
        arity = len(picked.fields) if picked.kind == LITERAL else 2
        index = self.draw(st.integers(0, arity - 1))
        if picked.kind == LITERAL:  # CanonicalizeBindings replaces it by the field
            field = picked.fields[index]
            value = _ir_ffi.TupleGetItem(picked.var, index, None)
            self.bind(field.kind, field.var.ty, value, "item", root=field.root, fields=field.fields)
        else:
            self.item_of(picked, index)

    def stmt_constant(self) -> None:
        a = self.a
        kinds = ["scalar", "dtype", "prim", "shape"] + (["string"] if self.string_vars else [])
        which = self.draw(st.sampled_from(kinds))
        if which == "scalar":
            value = relax.const(np.float32(self.draw(st.sampled_from((0.5, 2.0)))), "float32")
            self.bind(CONST, a.scalar, value, "c")
        elif which == "dtype":
            self.bind(CONST, a.any, a.float32, "dt")
        elif which == "prim":
            self.bind(PRIM, a.int64, a.i64(self.draw(st.integers(0, 3))), "p")
        elif which == "shape":
            self.bind(SHAPE, a.shape_ty, a.shape4, "sh")
        else:  # a variable bound to R.str: TVM kills it (see the tests); off by default
            self.bind(STRING, tvm.ir.StringImm("s").ty, tvm.ir.StringImm("s"), "s")

    def stmt_null(self) -> None:
        a = self.a
        self.bind(NULL, a.any, self.call(a.any, a.null_value, []), "n")

    def stmt_kill(self) -> None:
        """A pre-existing kill of a value of this scope that nothing reads any more (with
        ``branch_kills``, also of an outer value, which then is dead after the If)."""
        depth = self.depth()
        pool = [
            v
            for v in self.usable(_KILLABLE)
            if not v.root.param and (v.root.depth == depth or self.branch_kills)
        ]
        if not pool:
            return
        victim = pool[self.draw(st.integers(0, len(pool) - 1))]
        a = self.a
        root_kind = victim.root.kind
        op = {
            TENSOR: a.kill_tensor,
            BOOL: a.kill_tensor,
            LOOSE: a.kill_tensor,
            STORAGE: a.kill_storage,
        }.get(root_kind, a.kill_object)
        self.bind(VOID, a.void, self.call(a.void, op, [victim.var]), "_")
        self.killed.add(victim.root.serial)

    def stmt_if(self) -> None:
        if self.depth() >= self.max_depth:
            return
        a = self.a
        how = self.draw(st.sampled_from(("param", "bool", "computed")))
        cond = self.pick((BOOL,)) if how == "bool" else None
        if how == "computed":  # a condition the If reads last: its kill goes after the If
            cond = self.extern_call(BOOL)
        if cond is None:
            cond = next(v for v in self.values if v.param and v.kind == PRIM)
        branches = []
        for _ in range(2):
            mark = len(self.values)
            self.scopes.append([])
            self.statements(4)
            branches.append(self.close(self.result(top=False)))
            del self.values[mark:]
        node = _rx_ffi.If(cond.var, branches[0], branches[1], None)
        _rx_ffi.UpdateType(node, a.tensor)
        self.bind(TENSOR, a.tensor, node, "r")


#: Generator options that reach known failures of the properties, off by default.
KNOWN_FAILURES = {
    "string_vars": "bind R.str values to variables: TVM's pass kills them (no VM register), "
    "both VM code generators then fail",
    "branch_kills": "pre-existing kills of outer values inside an If branch: both passes then "
    "kill the value on no other path (missed kills, also in tvm_compatible=False mode)",
}


def lowered_modules(
    max_statements: int = 30, max_depth: int = 3, **options: bool
) -> st.SearchStrategy:
    """A hypothesis strategy: IRModules whose ``main`` is a random lowered function of at
    most ``max_statements`` statements and ``max_depth`` nested Ifs.

    ``options`` (all False by default) draw inputs on which the properties are known to
    fail; see :data:`KNOWN_FAILURES` and the tests.
    """
    unknown = set(options) - set(KNOWN_FAILURES)
    if unknown:
        raise BenchkillError(f"unknown generator options: {', '.join(sorted(unknown))}")
    return _lowered_modules(max_statements, max_depth, options)


@st.composite
def _lowered_modules(draw, max_statements: int, max_depth: int, options: dict) -> tvm.IRModule:
    main = _Program(draw, max_statements, max_depth, **options).function()
    a = _atoms()
    main_gv = tvm.ir.GlobalVar("main")
    _rx_ffi.UpdateType(main_gv, main.ty)
    functions = {main_gv: main}
    kernels = _kernels()
    for name, gv in a.kernels.items():
        functions[gv] = kernels[name]
    return tvm.IRModule(functions)


# --- the properties ----------------------------------------------------------------------


class FuzzMismatch(AssertionError):
    """A property failed on a drawn module (the message says which and how)."""


def _passes():
    from benchkill.passes import KillAfterLastUse

    return (
        relax.transform.KillAfterLastUse(),
        KillAfterLastUse(),
        KillAfterLastUse(tvm_compatible=False),
        KillAfterLastUse(exclude_null_value=False),
    )


def _run(kill_pass, mod):
    try:
        return kill_pass(mod), None
    except Exception as exc:  # TVM raises its own error classes, benchkill BenchkillError
        return None, exc


def check_example(mod: tvm.IRModule) -> None:
    """The fuzzing properties on ``mod``; raises :class:`FuzzMismatch` when one fails.

    1. benchkill's default output is structurally equal to TVM's, or both raise;
    2. ``verify_kills`` finds no unsafe kill in the default and ``tvm_compatible=False``
       outputs; the only missed kills of the default output are those TVM keeps on purpose
       (:func:`tvm_keeps_on_purpose`), and the ``tvm_compatible=False`` output has none;
    3. the legacy output (``exclude_null_value=False``) breaks no rule but kill-null-value.
    """
    tvm_pass, default_pass, beyond_pass, legacy_pass = _passes()
    expected, tvm_error = _run(tvm_pass, mod)
    actual, error = _run(default_pass, mod)
    if (tvm_error is None) != (error is None):
        raise FuzzMismatch(
            f"only {'TVM' if tvm_error else 'benchkill'} raised: {tvm_error or error!r}"
        )
    if tvm_error is not None:
        return
    try:
        tvm.ir.assert_structural_equal(actual, expected, map_free_vars=True)
    except ValueError as exc:
        raise FuzzMismatch(f"benchkill's output differs from TVM's: {_first(exc)}") from None
    for label, kill_pass in (("tvm_compatible=False", beyond_pass), ("legacy", legacy_pass)):
        out, error = _run(kill_pass, mod)
        if error is not None:
            raise FuzzMismatch(f"{label} raised where TVM did not: {error!r}")
        if label == "legacy":
            bad = [v for v in verify_kills(out) if v.rule != "kill-null-value"]
        else:
            bad = verify_kills(out, expect_complete=True)
        if bad:
            raise FuzzMismatch(f"verify_kills on the {label} output: {bad[0]}")
    for violation in verify_kills(actual, expect_complete=True):
        if violation.rule != "missed-kill":
            raise FuzzMismatch(f"verify_kills on the default output: {violation}")
        if not tvm_keeps_on_purpose(actual, violation):
            raise FuzzMismatch(f"missed kill TVM does not explain: {violation}")


def _first(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]


_POSITION = re.compile(r"^(?P<scope>(?:\d+\.(?:then|else)\.)*)(?P<index>\d+)$")


def tvm_keeps_on_purpose(mod: tvm.IRModule, violation: Violation) -> bool:
    """Whether ``violation`` is a missed kill TVM's pass leaves by design: after the first
    binding of a scope that holds a nested ``If``, TVM emits no kill in that scope."""
    if violation.rule != "missed-kill":
        return False
    match = _POSITION.match(violation.binding)
    if match is None:
        return False
    scope = mod[violation.function].body
    parts = match["scope"].split(".")[:-1]
    for index, branch in zip(parts[::2], parts[1::2], strict=True):
        node = _bindings(scope)[int(index)].value
        scope = node.true_branch if branch == "then" else node.false_branch
    bindings = _bindings(scope)
    last_use = int(match["index"])
    return any(isinstance(b.value, relax.If) for b in bindings[: last_use + 1])


def _bindings(seq) -> list:
    return [b for block in seq.blocks for b in block.bindings]


# --- buildable programs: real kernels, real VM -----------------------------------------

_OPS = ("add", "multiply", "subtract")


@st.composite
def buildable_modules(draw, max_ops: int = 6):
    """``(mod, inputs)``: high-level R.add/R.multiply/R.subtract programs on float32[4]
    with If/else nested up to two deep (conditions: a parameter or a computed bool), in
    the form any kill variant of :func:`benchkill.build_pipeline` builds."""
    lines = [
        "@R.function",
        'def main(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32"),'
        ' flag: R.Tensor((), "bool")) -> R.Tensor((4,), "float32"):',
    ]
    names = iter(f"v{i}" for i in range(10_000))
    result = _text_scope(draw, lines, 1, ["x", "y"], draw(st.integers(1, max_ops)), names)
    lines.append(f"    return {result}")
    func = tvm.script.from_source("\n".join(lines))
    mod = tvm.IRModule({"main": func})
    # TVM's StaticPlanBlockMemory sometimes reuses a storage allocated inside an If
    # branch after the If (ill-formed IR that crashes the VM even without kills; see
    # tests/test_fuzz.py): such programs test TVM's planner, not the kill passes.
    assume(_lowers_well_formed(mod))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    inputs = [rng.uniform(-2, 2, (4,)).astype("float32") for _ in range(2)]
    inputs.append(np.array(draw(st.booleans())))
    return mod, inputs


def _lowers_well_formed(mod: tvm.IRModule) -> bool:
    from benchkill.execution.pipeline import lower_to_kill_input

    try:
        relax.analysis.well_formed(lower_to_kill_input(mod))
    except Exception:  # well_formed raises TVM's error on the first violation
        return False
    return True


def _text_scope(draw, lines, depth, live, n_ops, names) -> str:
    """Append ``n_ops`` statements at indentation ``depth``; return the last value's name."""
    pad = "    " * depth
    live = list(live)
    for _ in range(n_ops):
        out = next(names)
        if depth < 3 and draw(st.integers(0, 3)) == 0:
            cond = "flag"
            if draw(st.booleans()):
                cond = next(names)
                src = live[draw(st.integers(0, len(live) - 1))]
                lines.append(f'{pad}{cond} = R.greater(R.sum({src}), R.const(0, "float32"))')
            lines.append(f"{pad}if {cond}:")
            for branch in range(2):
                if branch:
                    lines.append(f"{pad}else:")
                last = _text_scope(draw, lines, depth + 1, live, draw(st.integers(1, 3)), names)
                lines.append(f"{pad}    {out} = {last}")
        else:
            op = draw(st.sampled_from(_OPS))
            a = live[draw(st.integers(0, len(live) - 1))]
            b = live[draw(st.integers(0, len(live) - 1))]
            lines.append(f"{pad}{out} = R.{op}({a}, {b})")
        live.append(out)
    return live[-1]


def check_vm_equivalence(
    mod: tvm.IRModule,
    inputs: list,
    variants=("tvm", "benchkill", "beyond", None),
    exec_modes=("bytecode", "compiled"),
    progress=None,
) -> None:
    """Build ``mod`` with each kill variant in each exec mode, run it, and compare with the
    build without kills; raises :class:`FuzzMismatch` on a difference or a failed build.

    ``progress(kill, mode)`` is called before each build (the child process of
    :func:`check_vm_equivalence_in_child` uses it to name the build that crashed).
    """
    from benchkill.execution.pipeline import build_pipeline

    args = [tvm.runtime.tensor(a) for a in inputs]
    reference = None
    for mode in exec_modes:
        for kill in (None, *[v for v in variants if v is not None]):
            if progress is not None:
                progress(kill, mode)
            try:
                ex = relax.build(
                    mod, "llvm", relax_pipeline=build_pipeline(kill=kill), exec_mode=mode
                )
                vm = relax.VirtualMachine(ex, tvm.cpu())
                out = vm["main"](*args).numpy()
            except Exception as exc:
                raise FuzzMismatch(f"kill={kill!r} exec_mode={mode}: {_first(exc)}") from None
            if reference is None:
                reference = out
            elif not np.array_equal(out, reference, equal_nan=True):
                raise FuzzMismatch(
                    f"kill={kill!r} exec_mode={mode}: output {out} differs from {reference}"
                )


def check_vm_equivalence_in_child(mod: tvm.IRModule, inputs: list, timeout: float = 600.0) -> None:
    """:func:`check_vm_equivalence` in a child process (task ``vm_equivalence_task`` of
    :mod:`benchkill.execution.child`), so a VM crash (a segfault from a wrong kill) becomes a
    :class:`FuzzMismatch` instead of killing the caller."""
    with work_dir("benchkill-fuzz-") as work:
        (work / "module.py").write_text(module_text(mod))
        np.savez(work / "inputs.npz", **{f"arg{i}": a for i, a in enumerate(inputs)})
        outcome = run_task(
            "benchkill.fuzz.campaign:vm_equivalence_task", {"n_inputs": len(inputs)}, work, timeout
        )
    result = outcome.result
    if result is None:
        if outcome.signal_name is not None:
            where = outcome.stage or "before the first build"
            raise FuzzMismatch(f"the VM process died of {outcome.signal_name} at {where}")
        raise FuzzMismatch(f"the VM process failed: {outcome.failure()}")
    if result.get("mismatch"):
        raise FuzzMismatch(result["mismatch"])
    if result.get("error"):
        raise FuzzMismatch(f"the VM process failed: {result['error']}")


def vm_equivalence_task(request: dict, work: Path) -> dict:
    """The child's side of :func:`check_vm_equivalence_in_child`: the stage names the
    build being made, so that a crash names it."""
    mod = tvm.script.from_source((work / "module.py").read_text())
    with np.load(work / "inputs.npz") as saved:
        inputs = [saved[f"arg{i}"] for i in range(request["n_inputs"])]

    def progress(kill, mode):
        set_stage(work, f"kill={kill!r} exec_mode={mode}")

    try:
        check_vm_equivalence(mod, inputs, progress=progress)
    except FuzzMismatch as exc:
        return {"mismatch": str(exc)}
    return {}


# --- the campaign --------------------------------------------------------------------------


@dataclass(frozen=True)
class CampaignResult:
    """What ``benchkill fuzz`` ran and found."""

    examples: int  # structural examples run (shrinking included)
    buildable: int  # buildable examples built and run
    seed: int
    seconds: float
    failure: str | None  # the property's message for the minimal failing example
    reproducer: str | None  # TVMScript of the minimal failing module (and its inputs)

    @property
    def ok(self) -> bool:
        return self.failure is None


def run_campaign(
    examples: int,
    seed_value: int = 0,
    max_statements: int = 30,
    buildable: int = 0,
    check=None,
    **options: bool,
) -> CampaignResult:
    """Check :func:`check_example` on ``examples`` drawn lowered modules, then
    :func:`check_vm_equivalence_in_child` on ``buildable`` drawn high-level programs.

    hypothesis runs without a database, seeded by ``seed_value``; on a failure it shrinks
    the example, and the result holds the minimal one as TVMScript.  ``check`` replaces
    :func:`check_example` (a property of your own that raises :class:`FuzzMismatch`);
    ``options`` are those of :func:`lowered_modules` (:data:`KNOWN_FAILURES`).
    """
    check = check_example if check is None else check
    for name, value, low in (
        ("examples", examples, 1),
        ("buildable", buildable, 0),
        ("max_statements", max_statements, 1),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise BenchkillError(f"{name} must be an integer >= {low}, got {value!r}")
    start = time.perf_counter()
    counts, failure, reproducer = [0, 0], None, None

    def structural(mod):
        counts[0] += 1
        check(mod)

    def vm(arg):
        counts[1] += 1
        mod, inputs = arg
        check_vm_equivalence_in_child(mod, inputs)

    failure, reproducer = _hypothesis_run(
        lowered_modules(max_statements=max_statements, **options),
        structural,
        examples,
        seed_value,
        lambda mod: mod.script(),
    )
    if failure is None and buildable:
        failure, reproducer = _hypothesis_run(
            buildable_modules(),
            vm,
            buildable,
            seed_value,
            lambda arg: f"{arg[0].script()}\n# inputs: {[a.tolist() for a in arg[1]]}",
        )
    return CampaignResult(
        counts[0], counts[1], seed_value, time.perf_counter() - start, failure, reproducer
    )


def _hypothesis_run(strategy, check, examples, seed_value, describe):
    """Run ``check`` on ``examples`` draws of ``strategy``; (message, reproducer) of the
    minimal failing example, or (None, None)."""
    last = {}

    @seed(seed_value)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
        report_multiple_bugs=False,
    )
    @given(strategy)
    def run(example):
        try:
            check(example)
        except FuzzMismatch as exc:
            last["message"], last["reproducer"] = str(exc), describe(example)
            raise

    try:
        run()
    except FuzzMismatch:
        return last["message"], last["reproducer"]
    return None, None
