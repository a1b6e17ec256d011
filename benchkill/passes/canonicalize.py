"""TVM's preprocessing of the pass, planned during the sweep, and the rules of its rebuild.

TVM's ``KillAfterLastUse(func)`` (``src/relax/transform/kill_after_last_use.cc:256-262``)
runs four ExprMutators back to back: the expression-level ``CanonicalizeBindings`` (TIR
variables once, then Relax bindings: ``canonicalize_bindings.cc:628-632``), the
``UnusedTrivialBindingRemover`` (``kill_after_last_use.cc:43-79``) and the
``KillInserter`` (``:214-254``).  A mutator re-emits every binding through a BlockBuilder
that normalizes, so it rebuilds every scope that holds a binding.  benchkill rebuilds only
what it changes; this module reproduces the common canonicalizations in Python
(:class:`Canonicalizer`: trivial rebindings and same-typed match_casts, constants, items
and copies of known tuples) and checks, on the way, each rule below by which TVM's rebuild
could change a function in a way benchkill does not reproduce.  A function that meets one
raises :class:`Unsupported` (or :class:`.last_use.NeedsTVMCanonicalization` from the
sweep) and goes, whole, to :mod:`.fallback`, which is exact by construction.

Line numbers are those of apache/tvm at 5d4dc87, the source nearest the apache-tvm
0.27.0.post1 wheel (which was checked against each rule with a reproducer).

1. ``ReEmitBinding`` (``src/relax/ir/expr_functor.cc:851-878``): a binding whose value
   changed gets a new Var (``WithType``, ``:1035-1052``) when the new value's type is not
   structurally equal to the declared one, and later uses are remapped; a rebuilt call is
   re-inferred (``:518-528``); a rebuilt match_cast's variable takes the target type
   (``:880-906``).  Here: every call benchkill rebuilds is inferred again, as TVM's
   Normalizer infers it (:meth:`Canonicalizer.call`), and keeps its variable only if the
   declared type equals the new value's (:func:`_var_binding`), else fallback.  A trivial
   rebinding is canonicalized whatever its two types, as TVM's planner does
   (``canonicalize_bindings.cc:412-431``): its uses are rebuilt with their types
   re-derived and checked, and a scope result it replaces must keep its type (rule 10).
2. The rebuilt Function keeps ``ret_ty`` only if the body's type is a base of it
   (``expr_functor.cc:755-793``), else the constructor uses the body's type
   (``src/relax/ir/expr.cc:345-404``).  Here: ``FunctionChecks.function``
   (:mod:`.checks`) accepts a return type equal to the body's or strictly more specific,
   else fallback.
3. ``SymbolicVarCanonicalizer`` rebuilds an If and wraps each branch whose type differs
   from the If's in a ``then_branch_with_dyn`` / ``else_branch_with_dyn`` match_cast
   (``canonicalize_bindings.cc:102-150``).  Here: ``FunctionChecks.if_binding`` requires
   both branches, and the If's variable, to have the If's type, else fallback.
4. TVM's pass canonicalizes TIR variables once (``canonicalize_bindings.cc:628-632``);
   the module pass ``relax.transform.CanonicalizeBindings`` runs them twice
   (``:643-657``), which differs on chained symbolic match_casts.  Here: a match_cast to a
   type with TIR variables goes to the fallback, which runs TVM's pass itself (never the
   module pass).
5. Every call is re-normalized with its operator's ``FNormalize``
   (``expr_functor.cc:734-736``, ``src/relax/ir/block_builder.cc:669-680``), which
   rewrites (``NormalizeCallTIR``, ``src/relax/op/op.cc:405-481``) or raises
   (``NormalizeCallTIRInPlace``, ``op.cc:591``) on some parsed input.  Here: the sweep's
   table of operator codes marks the operators that have ``FNormalize`` (asked of TVM
   once per process, :func:`benchkill.relax.ops.ops_with_attr`), so a call of one costs
   the dictionary lookup every call already makes; the function goes to the fallback,
   which raises where TVM raises because it is TVM's pass.
5b. The Normalizer replaces every use of a Var of void type ``R.Tuple()`` by ``R.tuple()``
   (``block_builder.cc:596-603``).  Here: ``FunctionChecks.scope`` checks each scope's
   result and ``FunctionChecks.function`` the parameters; the plan checks the type of
   every used variable it reads anyway (:mod:`.plan`), the sweep that of every variable a
   pre-existing kill names; each goes to the fallback.
6. The module pass ``CanonicalizeBindings`` is skipped by ``PassContext(opt_level=0)``,
   ``disabled_pass`` and instruments (``src/ir/transform.cc:98-108, 547-556``); TVM's own
   pass is not.  Here: nothing depends on the caller's PassContext; the fallback runs
   TVM's pass in a fresh one.
7. The kill of an ``alloc_tensor`` result follows the variable's type, storage is known by
   its operator (``kill_after_last_use.cc:120-131``); only tensor constants are constants
   (a variable bound to ``R.dtype`` is killed).  Here: :mod:`.plan` and the sweep.
8. ``UnusedTrivialBindingRemover`` counts uses inside types (``expr_functor.cc:143-146``),
   which only Shape variables can have.  Here: a trivial binding of a shape or prim value
   is not canonicalized in Python (fallback).
9. Empty blocks are dropped, adjacent blocks of one kind merged, nested SeqExprs
   flattened (``expr_functor.cc:810-816``, ``block_builder.cc:912-1028``).  Reproduced by
   :mod:`.rewrite`; a scope whose result is not a leaf, a call argument that is not, or
   a body that is not a SeqExpr goes to the fallback (the Normalizer would bind it).
10. A rebuilt SeqExpr gets ``EraseToWellDefinedInScope(body.ty)`` (``block_builder.cc:
    726-729``), a rebuilt If the ``TypeLCA`` of its branches' (``:745-749``).  Here:
    ``FunctionChecks.scope`` requires each scope with blocks to have its result's type,
    well defined by the parameters' symbolic variables, and rule 3 the If's branches to
    have the If's type; so the types benchkill copies onto rebuilt nodes are TVM's.
11. The KillInserter's quirks (no kills at or after a scope's first nested scope, kill
    order, what is never killed: ``kill_after_last_use.cc:103-137, 214-254``) are
    reproduced by :mod:`.plan`.

Dataflow blocks and local functions (whose canonicalization this module does not
reproduce) go to the fallback too.

The work is split between the pass's two walks, so the function is swept once: the
sweep (:mod:`.last_use`) calls :meth:`Canonicalizer.plan_binding` on each binding it can
change and records uses of the replacements, and the rebuild (:mod:`.rewrite`) calls
:meth:`Canonicalizer.apply_binding` and :meth:`Canonicalizer.expr` on the bindings the
sweep marked.
"""

from __future__ import annotations

from typing import NamedTuple

from tvm import relax

from benchkill.passes.keys import SHIFT, key
from benchkill.relax import ffi as ir


class Unsupported(Exception):
    """The function needs a canonicalization this module does not reproduce."""


tir_vars_in_type = ir.held("relax.analysis.TIRVarsInType")
_make_tuple = ir.held("relax.Tuple")


class _Opaque(NamedTuple):
    """The value of a variable bound to an expression canonicalization cannot look into."""

    handle: int


def _ident(expr) -> tuple:
    return ("opaque", expr.handle) if isinstance(expr, _Opaque) else ("node", expr.__chandle__())


#: ``tvm_ffi.structural_equal`` without its Python wrapper: (a, b, map_free_vars,
#: skip_tensor_content)
_structural_equal = ir.held("ffi.StructuralEqual")
#: Types of values whose trivial rebinding is not canonicalized in Python (rule 8).
_SHAPE_OR_PRIM = (ir.ShapeType, ir.PrimType)
#: The missing type (a singleton) that TVM's mutator gives a rebuilt call to infer.
_MISSING = ir.missing_type()


def same_type(a, b) -> bool:
    """Structural equality of two types (one FFI comparison unless they are one object)."""
    return a.__chandle__() == b.__chandle__() or _structural_equal(a, b, False, False)


def _var_binding(var, value):
    """``var = value`` of a rebuilt value; rule 1: when the value's type is not the declared
    one TVM binds a new Var and remaps the later uses, which benchkill leaves to the
    fallback.  Like TVM's ``ReEmitBinding`` (``VarBinding(new_var, new_value)``), the new
    binding has no span."""
    if not same_type(var.ty, value.ty):
        raise Unsupported("a rebuilt value whose type is not the declared one")
    return ir.make_var_binding(var, value, None)


class Canonicalizer:
    """CanonicalizeBindings for the common cases, following TVM's CanonicalizePlanner.

    Plan (:meth:`plan_binding`, called by the sweep on each candidate binding in TVM's
    visiting order): each value is unwrapped (an item of a known tuple becomes that
    field; a tuple of all items of one earlier tuple becomes that tuple); a variable
    bound to a variable is a trivial binding, removed, its uses replaced by the first
    non-trivial variable; a variable bound to a constant has its uses replaced by the
    constant.  Apply (:meth:`apply_binding`, :meth:`expr`, called by the rebuild): the
    bindings that use a replaced variable get the replacement.

    Items, match_casts and constants are replaced only by values of the replaced
    variable's type; a trivial rebinding whatever its types, as TVM does
    (:meth:`plan_rebinding`).  Rebuilt calls, tuples and items are inferred again as TVM
    infers them and keep their variable only if its declared type is the new one; any
    other case raises :class:`Unsupported`.
    """

    def __init__(self, bound: dict, params) -> None:
        self.bound = bound  # handle -> anything, for every variable bound so far
        self.known: dict[int, object] = {}  # handle -> unwrapped bound value
        self.replace: dict[int, object] = {}  # trivial handle -> first non-trivial variable
        self.constant: dict[int, object] = {}  # handle -> constant it is bound to
        self.params = params  # of the function, for the scope of :meth:`normalize`
        self.builder = None  # made at the first normalization

    # -- plan ---------------------------------------------------------------
    def plan_binding(self, binding, var, value, h: int) -> tuple[bool, object, object]:
        """Plan one binding (``var``, ``value`` and ``h``: its variable, value and the
        variable's table key (:func:`.keys.key`), as the sweep read them); the bindings it
        reads must have been planned before.

        Returns ``(removed, replacement, type)``: whether the binding goes away (it is
        trivial), what every later use of its variable becomes (a variable, a constant,
        or None when uses stay as they are), and the type of the replacement (the
        variable's own type; None when there is no replacement).
        """
        keeps_type = True
        var_ty = None
        if type(binding) is ir.MatchCast:
            if ir.array_size(tir_vars_in_type(binding.ty)):
                raise Unsupported("match_cast with symbolic variables")
            var_ty = var.ty
            keeps_type = same_type(var_ty, value.ty)
        unwrapped = self.unwrap(value)
        removed = False
        if ir.is_var(unwrapped) and keeps_type:
            if var_ty is None:
                var_ty = var.ty
            if not same_type(var_ty, unwrapped.ty):
                raise Unsupported("trivial binding that changes the type")
            if type(var_ty) in (ir.ShapeType, ir.PrimType):
                raise Unsupported("trivial binding of a shape or prim value")
            # the first non-trivial variable: the bindings before were planned already
            self.replace[h] = self.replace.get(key(unwrapped), unwrapped)
            removed = True
        if type(unwrapped) is ir.GenericConst:
            if var_ty is None:
                var_ty = var.ty
            if not same_type(var_ty, unwrapped.ty):
                raise Unsupported("constant binding that changes the type")
            self.constant[h] = unwrapped
        self.known[h] = unwrapped
        if removed:
            target = self.replace[h]
            return True, self.constant.get(key(target), target), var_ty
        constant = self.constant.get(h)
        return False, constant, None if constant is None else var_ty

    def plan_rebinding(self, var, value, h: int) -> tuple[object, object, object]:
        """:meth:`plan_binding` of ``var = value`` where ``value`` is a variable (the most
        common candidate: always trivial, so removed), written out for speed.

        As in TVM's CanonicalizePlanner (``canonicalize_bindings.cc:412-431``: a VarBinding
        is trivial whatever the two types), the two types are not compared here: where
        uses are rebuilt their types are re-derived from the replacement and checked (a
        call, a tuple or an item: :func:`_var_binding`; a scope's result: the rebuild
        compares its type), so a replacement of another type goes to the fallback only if
        it changes a type of TVM's output.

        Returns ``(replacement, variable's type, value's type)``.
        """
        var_ty, value_ty = var.ty, value.ty
        if type(var_ty) in _SHAPE_OR_PRIM or type(value_ty) in _SHAPE_OR_PRIM:
            raise Unsupported("trivial binding of a shape or prim value")
        target = self.replace.get(value.__chandle__() >> SHIFT, value)
        self.replace[h] = target
        self.known[h] = value
        constant = self.constant
        if constant:
            return constant.get(target.__chandle__() >> SHIFT, target), var_ty, value_ty
        return target, var_ty, value_ty

    def unwrap_var(self, expr):
        """Follow variables to their bound values (TVM's recursively_unwrap_var)."""
        while ir.is_var(expr):
            h = key(expr)
            nxt = self.known.get(h)
            if nxt is None:
                return _Opaque(h) if h in self.bound else expr
            if nxt is expr:
                return expr
            expr = nxt
        return expr

    def known_value(self, expr):
        """:meth:`unwrap_var` of ``expr`` where it ends at a value, else None (at a variable
        not bound to a known value): for the callers that look for a tuple or an item only,
        which a variable is not, opaque or not."""
        known = self.known
        while type(expr) is ir.Var or type(expr) is ir.DataflowVar:
            nxt = known.get(expr.__chandle__() >> SHIFT)
            if nxt is None or nxt is expr:
                return None
            expr = nxt
        return expr

    def unwrap(self, value):
        """TVM's UnwrapKnownValue: the field of a known tuple, or an earlier tuple."""
        kind = type(value)
        if kind is ir.TupleGetItem:
            tup = self.known_value(value.tuple_value)
            if type(tup) is ir.Tuple:
                return ir.array_get(tup.fields, value.index)
        elif kind is ir.Tuple:
            fields = value.fields
            if not ir.array_size(fields):
                return value
            first = self.known_value(ir.array_get(fields, 0))
            if type(first) is not ir.TupleGetItem:
                return value
            fields = ir.items(fields)
            ty = first.tuple_value.ty
            if not isinstance(ty, relax.TupleType):
                raise Unsupported("item of a non-tuple")
            if len(ty.fields) != len(fields):
                return value
            earlier = self.unwrap_var(first.tuple_value)
            for i, field_ in enumerate(fields):
                element = self.unwrap_var(field_)
                if type(element) is not ir.TupleGetItem or element.index != i:
                    return value
                if _ident(self.unwrap_var(element.tuple_value)) != _ident(earlier):
                    return value
            return earlier
        return value

    # -- apply --------------------------------------------------------------
    def apply_binding(self, binding, touched: bool, new_branches):
        """``binding`` with replaced variables; ``new_branches``: an If's rebuilt branches."""
        value = binding.value
        if type(value) is ir.If:
            cond = self.expr(value.cond) if touched else value.cond
            true_b, false_b = new_branches or (value.true_branch, value.false_branch)
            new_value = ir.make_if(cond, true_b, false_b, value.span)
            ir.update_type(new_value, value.ty)
        elif new_branches is not None:
            raise Unsupported("local function")
        else:
            new_value = self.expr(value)
            if new_value is value:
                return binding
        var = binding.var
        if type(binding) is ir.MatchCast:
            if not same_type(var.ty, binding.ty):  # rule 1: TVM re-types it to the target
                raise Unsupported("a match_cast whose variable is not of its target type")
            if not same_type(new_value.ty, value.ty):
                # a value replaced by one of another type (a rebinding of another type):
                # TVM's UnusedTrivialBindingRemover (kill_after_last_use.cc:53-58) would
                # then judge the match_cast trivial by the new type
                raise Unsupported("a match_cast whose value is replaced by another type")
            return ir.make_match_cast(var, new_value, binding.ty, binding.span)
        return _var_binding(var, new_value)

    def call_binding(self, rebuilt: tuple):
        """The binding of ``var`` to ``call`` with the arguments ``args``, from ``rebuilt =
        (call, op, var, args)``: what the sweep read of a call whose only change is
        variables replaced by variables.  :meth:`call` and :func:`_var_binding` written
        out, for the hot path of real IR (a third of a lowered decoder's bindings)."""
        call, op, var, args = rebuilt
        new = ir.make_call(_MISSING, op, args, call.attrs, call.ty_args, call.span)
        builder = self.builder
        if builder is None:
            builder = self._scope_builder()
        try:
            new = ir.normalize(builder, new)
        except Exception as exc:  # TVM's errors: the fallback raises them as TVM does
            raise Unsupported(f"TVM cannot normalize a rebuilt expression: {exc}") from None
        var_ty, ty = var.ty, new.ty
        if var_ty.__chandle__() != ty.__chandle__() and not _structural_equal(
            var_ty, ty, False, False
        ):
            raise Unsupported("a rebuilt value whose type is not the declared one")
        return ir.make_var_binding(var, new, None)

    def expr(self, expr):
        """``expr`` with replaced variables and inlined constants (itself if unchanged).

        As TVM's ExprMutator (``expr_functor.cc:518-528``), a call that changes is built
        with a missing type and inferred again (:meth:`call`): the input's type of a call
        may be its binding's annotation (the TVMScript parser puts it there), not what
        inference gives.  A tuple's type is made of its fields' by its constructor.
        """
        kind = type(expr)
        if kind is ir.Var or kind is ir.DataflowVar:
            new = self.replace.get(key(expr), expr)
            if ir.is_var(new):
                constant = self.constant.get(key(new))
                if constant is not None:
                    return constant
            return new
        if kind is ir.Call:
            op = expr.op
            new_op = self.expr(op) if type(op) is not ir.Op else op
            args = ir.items(expr.args)
            new_args = [self.expr(a) for a in args]
            if new_op is op and all(n is a for n, a in zip(new_args, args, strict=True)):
                return expr
            return self.call(expr, new_op, new_args)
        if kind is ir.Tuple:
            fields = ir.items(expr.fields)
            new_fields = [self.expr(f) for f in fields]
            if all(n is f for n, f in zip(new_fields, fields, strict=True)):
                return expr
            return _make_tuple(new_fields, expr.span)
        if kind is ir.TupleGetItem:
            tup = self.expr(expr.tuple_value)
            if tup is expr.tuple_value:
                return expr
            return self.normalize(relax.TupleGetItem(tup, expr.index, expr.span))
        return expr

    def call(self, call, op, args: list):
        """``call`` with callee ``op`` and arguments ``args``, its type inferred as TVM's
        Normalizer infers it (``block_builder.cc:664-667``)."""
        new = ir.make_call(_MISSING, op, args, call.attrs, call.ty_args, call.span)
        return self.normalize(new)

    def normalize(self, expr):
        """``expr`` normalized in a BlockBuilder scope of the function's parameters, as the
        one TVM's mutator normalizes in (its analyzer knows their symbolic variables are
        not negative); an error of TVM's goes to the fallback, which raises it as TVM does."""
        builder = self.builder
        if builder is None:
            builder = self._scope_builder()
        try:
            return ir.normalize(builder, expr)
        except Exception as exc:  # TVM's errors: the fallback raises them as TVM does
            raise Unsupported(f"TVM cannot normalize a rebuilt expression: {exc}") from None

    def _scope_builder(self):
        """The BlockBuilder of :meth:`normalize`, made at the first normalization."""
        builder = self.builder = relax.BlockBuilder()
        builder.begin_scope(self.params)  # the FFI Array itself: no conversion
        return builder
