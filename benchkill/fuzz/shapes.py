"""The statements of the lowered-module strategy for shapes TVM's own IR has and the first
generator lacked, mixed into :class:`benchkill.fuzz.lowered._Program`:

* declared types less specific than, or other than, the value's (``R.Tensor(ndim=1)``,
  ``R.Tensor`` without shape or dtype, ``R.Any`` for a tensor, ``R.Shape(ndim=1)``), on
  the variable and, as TVMScript puts them, on the call too (:meth:`Shapes.declare`);
* ``alloc_tensor`` results declared ``R.Any`` (TVM kills them with ``R.vm.kill_object``);
* ``R.shape_of`` and pure extern calls (``R.call_pure_packed``), which may stand in the
  dataflow blocks :meth:`benchkill.fuzz.values.Scopes.close` makes;
* If branches whose types differ from each other and from the If's (their LCA);
* return annotations less specific than, more specific than or incomparable with the body;
* symbolic variables defined by a match_cast of a tensor (CanonicalizeBindings infers them)
  and used afterwards in types and in ``R.shape([n])``;
* local functions, capturing values of the enclosing scope, and calls of them.
"""

from __future__ import annotations

import tvm
import tvm.ir._ffi_api as _ir_ffi
import tvm.relax._ffi_api as _rx_ffi
import tvm_ffi
from hypothesis import strategies as st
from tvm import relax

from benchkill.fuzz.values import LOOSE, OBJECT, SHAPE, TENSOR, Value


class Shapes:
    """Statements and helpers of the shapes listed in the module docstring."""

    symbolic_defined = False  # a top-level match_cast has defined the symbolic variable n

    # -- declared types ---------------------------------------------------------------
    def declare(self, kind: str, ty) -> tuple[object, object, str]:
        """``(variable type, call type, kind)`` of a call binding whose value has type
        ``ty``: mostly ``ty`` itself; else a less specific or other declared type, put on the
        call as well (as TVMScript parses an annotated binding) or on the variable only (as
        IR built with the API may have it)."""
        options = self.a.declared.get(kind, ())
        if not options or self.draw(st.integers(0, 3)):
            return ty, ty, kind
        declared, declared_kind = options[self.draw(st.integers(0, len(options) - 1))]
        call_ty = declared if self.draw(st.booleans()) else ty
        return declared, call_ty, declared_kind

    def bind_call(self, kind: str, ty, op, args, prefix: str, ty_args=()) -> Value:
        """``prefix: declared = op(*args)`` for a call whose inferred type is ``ty``."""
        var_ty, call_ty, var_kind = self.declare(kind, ty)
        value = self.bind(var_kind, var_ty, self.call(call_ty, op, args, ty_args), prefix)
        if var_ty is not ty:
            value.inferred = ty
        return value

    def normalized(self, call):
        """``call`` with the type TVM infers for it."""
        return relax.BlockBuilder().normalize(call)

    # -- statements -------------------------------------------------------------------
    def stmt_shape_of(self) -> None:
        picked = self.pick((TENSOR, LOOSE))
        if picked is None:
            return
        call = self.normalized(relax.op.shape_of(picked.var))
        self.bind_call(SHAPE, call.ty, call.op, list(call.args), "sh")

    def stmt_pure(self) -> None:
        """A pure extern call (``R.call_pure_packed``), which a dataflow block may hold."""
        a = self.a
        kind = self.draw(st.sampled_from((TENSOR, OBJECT)))
        ty = a.tensor_ty if kind == TENSOR else a.any_ty
        args = []
        for _ in range(self.draw(st.integers(0, 2))):
            picked = self.pick((TENSOR, LOOSE, OBJECT, SHAPE))
            if picked is not None:
                args.append(picked.var)
        func = a.externs[self.draw(st.integers(0, len(a.externs) - 1))]
        call = self.normalized(relax.op.call_pure_packed(func, *args, ty_args=ty))
        self.bind_call(kind, call.ty, call.op, list(call.args), "p", ty_args=(ty,))

    def match_cast_inferred(self) -> None:
        """``R.match_cast(t, R.Tensor((n,)))`` of a float32[4] tensor, at the top level:
        CanonicalizeBindings infers n = 4, and the match_cast becomes an alias of ``t``
        (unless ``R.shape([n])`` uses n at run time): a kill of it kills its source."""
        picked = self.pick((TENSOR,))
        if picked is None:
            return
        a = self.a
        var = _ir_ffi.Var(self.name("m"), a.symbolic, None)
        self.scopes[-1].append(_rx_ffi.MatchCast(var, picked.var, a.symbolic, None))
        self.define(var, LOOSE, root=picked.root)
        self.symbolic_defined = True

    def stmt_symbolic_use(self) -> None:
        """A use of the symbolic variable ``n`` after a top-level match_cast defined it: in
        a call's type, or at run time in ``R.shape([n])`` (which keeps that match_cast)."""
        if not self.symbolic_defined:
            return
        a = self.a
        if self.draw(st.booleans()):
            shape = relax.ShapeExpr([a.n])
            self.bind(SHAPE, shape.ty, shape, "shn")
            return
        args = [v.var for v in [self.pick((TENSOR, LOOSE, OBJECT))] if v is not None]
        func = a.externs[self.draw(st.integers(0, len(a.externs) - 1))]
        self.bind(LOOSE, a.symbolic, self.call(a.symbolic, func, args, (a.symbolic,)), "o")

    def stmt_closure(self) -> None:
        """A local function of a tensor (maybe reading a value of the enclosing scope),
        bound to a variable and called once (one statement in three: TVM's pass treats a
        function holding one apart, see :mod:`benchkill.passes.fallback`)."""
        if self.draw(st.integers(0, 2)):
            return
        a = self.a
        param = _ir_ffi.Var(self.name("p"), a.tensor_ty, None)
        captured = self.pick((TENSOR, LOOSE, OBJECT))
        funcs = a.externs
        inner, last = [], param
        for _ in range(self.draw(st.integers(1, 2))):
            args = [last] + ([captured.var] if captured is not None and not inner else [])
            func = funcs[self.draw(st.integers(0, len(funcs) - 1))]
            var = _ir_ffi.Var(self.name("q"), a.tensor_ty, None)
            inner.append(
                _rx_ffi.VarBinding(var, self.call(a.tensor_ty, func, args, (a.tensor_ty,)), None)
            )
            last = var
        body = _rx_ffi.SeqExpr([_rx_ffi.BindingBlock(inner, None)], last, None)
        _rx_ffi.UpdateType(body, a.tensor_ty)
        closure = _rx_ffi.Function([param], body, a.tensor_ty, False, tvm.ir.DictAttrs({}), None)
        func_var = _ir_ffi.Var(self.name("f"), closure.ty, None)
        self.scopes[-1].append(_rx_ffi.VarBinding(func_var, closure, None))
        arg = self.pick((TENSOR,)) or self.extern_call(TENSOR)
        self.bind(TENSOR, a.tensor_ty, self.call(a.tensor_ty, func_var, [arg.var]), "r")

    # -- If branches and return annotations ----------------------------------------------
    def branch_result(self):
        """The result of an If branch: a float32[4] tensor, a tensor of another type, or a
        float32[8] one (the branches' types may then differ from each other and the If's)."""
        choice = self.draw(st.integers(0, 9))
        if choice == 1:
            picked = self.pick((LOOSE,))
            if picked is not None:
                return picked.var
        if choice == 2:
            a = self.a
            func = a.externs[self.draw(st.integers(0, len(a.externs) - 1))]
            call = self.call(a.other_tensor, func, [], (a.other_tensor,))
            return self.bind(LOOSE, a.other_tensor, call, "o8").var
        return self.result(top=False)

    def if_type(self, true_branch, false_branch) -> tuple[object, str]:
        """The If's type, as TVM's Normalizer derives it, and the kind of its variable."""
        ty = relax.analysis.type_lca(true_branch.ty, false_branch.ty)
        if tvm_ffi.structural_equal(ty, self.a.tensor_ty):
            return self.a.tensor_ty, TENSOR
        return ty, LOOSE if isinstance(ty, relax.TensorType) else OBJECT

    def return_type(self, result):
        """The function's return annotation: mostly the result's type; else less specific
        (the Function constructor then takes the body's), more specific (kept) or
        incomparable (kept by the constructor, replaced by TVM's rebuild)."""
        ty = result.ty
        if not isinstance(ty, relax.TensorType) or self.draw(st.integers(0, 3)):
            return ty
        a = self.a
        return self.draw(st.sampled_from((a.loose, a.tensor_ty, a.half_tensor)))
