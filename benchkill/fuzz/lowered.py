"""The lowered-module strategy: random Relax functions in the form the kill pass sees.

:func:`lowered_modules` draws straight-line code; If/else nested up to three deep; tuples
and TupleGetItem; match_cast (to the same, a looser or a symbolic type) and trivial
rebindings; tensor, dtype, shape and prim constants; ``R.null_value()``; storage shared by
several tensors; pre-existing kills; extern calls taking and returning objects; calls to
PrimFuncs (:mod:`benchkill.inputs.kernels`, never built); and the shapes of IR nobody here
wrote (:mod:`benchkill.fuzz.shapes`: declared types other than the value's, If branches
typed differently, return annotations, symbolic variables inferred by canonicalization,
dataflow blocks, local functions).  It is built with TVM's raw constructors and fully
typed, as TVMScript would parse it.  Every drawn program is valid: a pre-existing kill
comes after the last use of the variable and of everything CanonicalizeBindings would
merge with it, so :func:`benchkill.verify_kills` finds nothing wrong in it (apart from
missed kills).

Each ``stmt_*`` method of :class:`_Program` (and of :class:`~benchkill.fuzz.shapes.Shapes`
and :class:`~benchkill.fuzz.tuples.Tuples`) is one statement; the values it binds and the
bookkeeping it relies on are in :mod:`benchkill.fuzz.values`.
"""

from __future__ import annotations

import numpy as np
import tvm
import tvm.ir._ffi_api as _ir_ffi
import tvm.relax._ffi_api as _rx_ffi
from hypothesis import strategies as st
from tvm import relax

from benchkill.errors import BenchkillError
from benchkill.fuzz.properties import KNOWN_FAILURES
from benchkill.fuzz.shapes import Shapes
from benchkill.fuzz.tuples import Tuples
from benchkill.fuzz.values import (
    ANY_ARG,
    BOOL,
    CONST,
    KILLABLE,
    LITERAL,
    LOOSE,
    NULL,
    OBJECT,
    PAIR,
    PRIM,
    SHAPE,
    STORAGE,
    STRING,
    TENSOR,
    VOID,
    Scopes,
    Value,
    atoms,
    becomes_alias,
)
from benchkill.inputs.kernels import i64

#: the kernels a drawn function calls
KERNELS = ("unary", "binary")

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
    "shape_of",
    "pure",
    "symbolic_use",
    "closure",
)


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


class _Program(Shapes, Tuples, Scopes):
    """Draws one lowered function, statement by statement, with a hypothesis ``draw``."""

    # -- the function ------------------------------------------------------------------
    def function(self) -> relax.Function:
        a = self.a
        params = [
            _ir_ffi.Var("x", a.tensor_ty, None),
            _ir_ffi.Var("obj", a.any_ty, None),
            _ir_ffi.Var("flag", a.bool_tensor, None),
            _ir_ffi.Var("cond", a.bool_ty, None),
            _ir_ffi.Var("pair", a.pair, None),
        ]
        for var, kind in zip(params, (TENSOR, OBJECT, BOOL, PRIM, PAIR), strict=True):
            self.values.append(Value(var, kind, param=True))
        self.scopes.append([])
        self.statements(self.budget)
        result = self.result(top=True)
        body = self.close(result)
        attrs = tvm.ir.DictAttrs({"global_symbol": "main", "relax.force_pure": True})
        return _rx_ffi.Function(params, body, self.return_type(result), True, attrs, None)

    def statements(self, limit: int) -> None:
        """Up to ``limit`` statements; each is one hypothesis span (a "go on?" draw and the
        statement's own draws), so the shrinker can delete statements one by one."""
        for _ in range(limit):
            if self.budget <= 0 or not self.draw(_statement(self)):
                return
            self.budget -= 1

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

    def extern_call(self, kind: str) -> Value:
        a = self.a
        args = []
        for i in range(self.draw(st.integers(0, 3))):
            picked = self.pick(KILLABLE if i == 0 else ANY_ARG)  # objects get read too
            if picked is not None:
                args.append(picked.var)
        inline = self.draw(st.sampled_from((None, "str", "prim", "shape", "dtype")))
        if inline is not None:
            args.append(
                {
                    "str": tvm.ir.StringImm("s"),
                    "prim": i64(7),
                    "shape": a.shape,
                    "dtype": a.float32,
                }[inline]
            )
        ty = {
            OBJECT: a.any_ty,
            TENSOR: a.tensor_ty,
            PAIR: a.pair,
            BOOL: a.bool_tensor,
            VOID: a.void_ty,
        }[kind]
        func = a.externs[self.draw(st.integers(0, len(a.externs) - 1))]
        return self.bind_call(kind, ty, func, args, "o" if kind != VOID else "_", (ty,))

    def stmt_storage(self) -> None:
        self.new_storage()

    def new_storage(self) -> Value:
        a = self.a
        if self.draw(st.booleans()):
            args = (a.storage_bytes, a.zero, a.global_scope, a.uint8)
            value = self.call(a.any_ty, a.op_alloc_storage, args)
        else:
            args = (a.storage_bytes, a.zero, a.uint8, a.global_scope)
            value = self.call(a.any_ty, a.op_vm_alloc_storage, args)
        return self.bind(STORAGE, a.any_ty, value, "storage")

    def stmt_tensor(self) -> None:
        self.new_tensor(declared=True)

    def new_tensor(self, declared: bool = False) -> Value:
        """A tensor in a storage; ``declared``: maybe declared with another type (an
        ``R.Any`` one is killed with ``R.vm.kill_object``)."""
        a = self.a
        storage = self.pick((STORAGE,)) or self.new_storage()
        op = a.op_alloc_tensor if self.draw(st.booleans()) else a.op_vm_alloc_tensor
        args = (storage.var, a.zero, a.shape, a.float32, a.zero)
        if declared:
            return self.bind_call(TENSOR, a.tensor_ty, op, args, "alloc")
        return self.bind(TENSOR, a.tensor_ty, self.call(a.tensor_ty, op, args), "alloc")

    def stmt_kernel(self) -> None:
        a = self.a
        name = self.draw(st.sampled_from(KERNELS))
        inputs = []
        for _ in range(1 if name == "unary" else 2):
            picked = self.pick((TENSOR,))
            inputs.append((picked or self.new_tensor()).var)
        out = self.new_tensor()
        self.bind(
            VOID, a.void_ty, self.call(a.void_ty, a.kernel_vars[name], [*inputs, out.var]), "_"
        )

    def stmt_rebind(self) -> None:
        picked = self.pick(ANY_ARG)
        if picked is not None:
            # mostly of the value's own type; else declared less specific or other (IR built
            # with the API: TVMScript gives a rebinding its value's type), which TVM's
            # CanonicalizeBindings replaces all the same
            ty, _, kind = self.declare(picked.kind, picked.var.ty)
            self.bind(kind, ty, picked.var, "y", root=picked.root, fields=picked.fields)

    def stmt_match_cast(self) -> None:
        a = self.a
        how = self.draw(st.sampled_from(("refine", "same", "loose", "symbolic", "inferred")))
        if how in ("symbolic", "inferred") and self.depth() > 0:
            how = "loose"  # a symbolic variable is defined at the top level only
        if how == "inferred":
            self.match_cast_inferred()
            return
        if how == "refine":  # an object as a tensor: a new register, not an alias
            picked = self.pick((OBJECT,))
            if picked is None or becomes_alias(picked, a.tensor_ty):
                return
            var = _ir_ffi.Var(self.name("m"), a.tensor_ty, None)
            self.scopes[-1].append(_rx_ffi.MatchCast(var, picked.var, a.tensor_ty, None))
            self.define(var, TENSOR)
        elif how in ("loose", "symbolic"):  # another type: kept by CanonicalizeBindings
            # Symbolic only from an object: from a float32[4] tensor CanonicalizeBindings
            # infers n = 4, makes the match_cast trivial and turns a kill of its result
            # into a kill of the source (see tests/fuzz/test_fuzz.py); so not from an
            # object that rebinds a tensor either.
            picked = self.pick((TENSOR, OBJECT) if how == "loose" else (OBJECT,))
            if picked is None or (how == "symbolic" and picked.root.kind != OBJECT):
                return
            ty = a.loose if how == "loose" else a.symbolic
            if becomes_alias(picked, ty):
                return
            var = _ir_ffi.Var(self.name("m"), ty, None)
            self.scopes[-1].append(_rx_ffi.MatchCast(var, picked.var, ty, None))
            self.define(var, LOOSE)
            self.symbolic_defined = self.symbolic_defined or how == "symbolic"
        else:  # to its own type: an alias
            picked = self.pick((TENSOR, OBJECT, STORAGE))
            if picked is None:
                return
            ty = picked.var.ty
            var = _ir_ffi.Var(self.name("m"), ty, None)
            self.scopes[-1].append(_rx_ffi.MatchCast(var, picked.var, ty, None))
            self.define(var, picked.kind, root=picked.root)

    def stmt_constant(self) -> None:
        a = self.a
        kinds = ["scalar", "dtype", "prim", "shape"] + (["string"] if self.string_vars else [])
        which = self.draw(st.sampled_from(kinds))
        if which == "scalar":
            value = relax.const(np.float32(self.draw(st.sampled_from((0.5, 2.0)))), "float32")
            self.bind(CONST, a.scalar, value, "c")
        elif which == "dtype":
            self.bind(CONST, a.any_ty, a.float32, "dt")
        elif which == "prim":
            self.bind(PRIM, a.int64_ty, i64(self.draw(st.integers(0, 3))), "p")
        elif which == "shape":
            self.bind(SHAPE, a.shape_ty, a.shape, "sh")
        else:  # a variable bound to R.str: TVM kills it (see the tests); off by default
            self.bind(STRING, tvm.ir.StringImm("s").ty, tvm.ir.StringImm("s"), "s")

    def stmt_null(self) -> None:
        a = self.a
        self.bind(NULL, a.any_ty, self.call(a.any_ty, a.op_null_value, []), "n")

    def stmt_kill(self) -> None:
        """A pre-existing kill of a value of this scope that nothing reads any more (with
        ``branch_kills``, also of an outer value, which then is dead after the If)."""
        depth = self.depth()
        pool = [
            v
            for v in self.usable(KILLABLE)
            if not v.root.param and (v.root.depth == depth or self.branch_kills)
        ]
        if not pool:
            return
        victim = pool[self.draw(st.integers(0, len(pool) - 1))]
        a = self.a
        root_kind = victim.root.kind
        op = {
            TENSOR: a.op_kill_tensor,
            BOOL: a.op_kill_tensor,
            LOOSE: a.op_kill_tensor,
            STORAGE: a.op_kill_storage,
        }.get(root_kind, a.op_kill_object)
        self.bind(VOID, a.void_ty, self.call(a.void_ty, op, [victim.var]), "_")
        self.killed.add(victim.root.serial)

    def stmt_if(self) -> None:
        if self.depth() >= self.max_depth:
            return
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
            branches.append(self.close(self.branch_result()))
            del self.values[mark:]
        node = _rx_ffi.If(cond.var, branches[0], branches[1], None)
        ty, kind = self.if_type(*branches)
        _rx_ffi.UpdateType(node, ty)
        self.bind(kind, ty, node, "r")


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
    main_gv = tvm.ir.GlobalVar("main")
    _rx_ffi.UpdateType(main_gv, main.ty)
    return tvm.IRModule({main_gv: main, **atoms().kernel_functions(KERNELS)})
