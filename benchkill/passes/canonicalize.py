"""TVM's preprocessing of the pass: CanonicalizeBindings, planned during the sweep.

TVM's KillAfterLastUse first runs CanonicalizeBindings and then removes trivial
bindings (``y = x``, or a match_cast of a variable to its own type) that nothing uses.
On a function without dataflow blocks, match_cast, trivial rebindings, constant
bindings, items of known tuples or local functions both steps are the identity.

The others are canonicalized here, in Python, when they stay within what this
module reproduces exactly (:class:`Canonicalizer`: trivial rebindings and
match_casts that keep their type, constants, items and copies of known tuples; no
dataflow blocks, local functions or match_casts that define symbolic variables);
anything else is handed to TVM's own CanonicalizeBindings (:func:`canonicalize_with_tvm`).

The work is split between the pass's two walks, so the function is swept once: the
sweep (:mod:`.last_use`) calls :meth:`Canonicalizer.plan_binding` on each binding it can
change and records uses of the replacements, and the rebuild (:mod:`.rewrite`) calls
:meth:`Canonicalizer.apply_binding` and :meth:`Canonicalizer.expr` on the bindings the
sweep marked.
"""

from __future__ import annotations

from typing import NamedTuple

import tvm
import tvm_ffi
from tvm import relax

from benchkill.relax import ffi as ir


def canonicalize_with_tvm(func):
    """The same, computed by TVM's CanonicalizeBindings (any function)."""
    mod = relax.transform.CanonicalizeBindings()(tvm.IRModule({"f": func}))
    func = mod["f"]
    unused = _unused_trivial_bindings(func)
    if unused:
        func = _without_bindings(func, unused)
    return func


def _unused_trivial_bindings(func) -> set[int]:
    """Handles of variables bound trivially (``y = x``) that nothing uses."""
    used: set[int] = set()
    trivial: set[int] = set()
    _visit_uses(func.body, used, trivial)
    return trivial - used


def _visit_uses(expr, used: set[int], trivial: set[int]) -> None:
    """Add the variables ``expr`` uses to ``used``, its trivially bound ones to ``trivial``.

    A module-level function, not a closure: a closure that calls itself is a reference
    cycle, left for the cyclic garbage collector.
    """
    kind = type(expr)
    if ir.is_var(expr):
        used.add(expr.__chandle__())
    elif kind is ir.Call:
        _visit_uses(expr.op, used, trivial)
        for arg in ir.items(expr.args):
            _visit_uses(arg, used, trivial)
    elif kind is ir.Tuple:
        for item in ir.items(expr.fields):
            _visit_uses(item, used, trivial)
    elif kind is ir.TupleGetItem:
        _visit_uses(expr.tuple_value, used, trivial)
    elif kind is ir.If:
        _visit_uses(expr.cond, used, trivial)
        _visit_uses(expr.true_branch, used, trivial)
        _visit_uses(expr.false_branch, used, trivial)
    elif kind is ir.Function:
        _visit_uses(expr.body, used, trivial)
    elif kind is ir.SeqExpr:
        for block in ir.items(expr.blocks):
            for binding in ir.items(block.bindings):
                value = binding.value
                if ir.is_var(value) and (
                    type(binding) is ir.VarBinding
                    or tvm_ffi.structural_equal(binding.var.ty, value.ty)
                ):
                    trivial.add(binding.var.__chandle__())
                _visit_uses(value, used, trivial)
        _visit_uses(expr.body, used, trivial)


def _without_bindings(func, remove: set[int]):
    body = _seq_without_bindings(func.body, remove)
    return ir.make_function(func.params, body, func.ret_ty, func.is_pure, func.attrs, func.span)


def _seq_without_bindings(seq, remove: set[int]):
    blocks = []
    for block in ir.items(seq.blocks):
        kept = []
        for binding in ir.items(block.bindings):
            if binding.var.__chandle__() in remove:
                continue
            value = binding.value
            if type(value) is ir.If:
                new_value = ir.make_if(
                    value.cond,
                    _seq_without_bindings(value.true_branch, remove),
                    _seq_without_bindings(value.false_branch, remove),
                    value.span,
                )
                ir.update_type(new_value, value.ty)
                binding = ir.make_var_binding(binding.var, new_value, binding.span)
            kept.append(binding)
        if kept:
            make = (
                ir.make_dataflow_block if type(block) is ir.DataflowBlock else ir.make_binding_block
            )
            blocks.append(make(kept, None))
    new_seq = ir.make_seq_expr(blocks, seq.body, seq.span)
    ir.update_type(new_seq, seq.ty)
    return new_seq


class Unsupported(Exception):
    """The function needs a canonicalization this module does not reproduce."""


_tir_vars_in_type = tvm_ffi.get_global_func("relax.analysis.TIRVarsInType")
_make_tuple = tvm_ffi.get_global_func("relax.Tuple")


class _Opaque(NamedTuple):
    """The value of a variable bound to an expression canonicalization cannot look into."""

    handle: int


def _ident(expr) -> tuple:
    return ("opaque", expr.handle) if isinstance(expr, _Opaque) else ("node", expr.__chandle__())


def _same_type(a, b) -> bool:
    """Structural equality of two types (one FFI comparison unless they are one object)."""
    return a.__chandle__() == b.__chandle__() or tvm_ffi.structural_equal(a, b)


class Canonicalizer:
    """CanonicalizeBindings for the common cases, following TVM's CanonicalizePlanner.

    Plan (:meth:`plan_binding`, called by the sweep on each candidate binding in TVM's
    visiting order): each value is unwrapped (an item of a known tuple becomes that
    field; a tuple of all items of one earlier tuple becomes that tuple); a variable
    bound to a variable is a trivial binding, removed, its uses replaced by the first
    non-trivial variable; a variable bound to a constant has its uses replaced by the
    constant.  Apply (:meth:`apply_binding`, :meth:`expr`, called by the rebuild): the
    bindings that use a replaced variable get the replacement.

    Only type-preserving replacements are done here, so no type is re-inferred
    differently from TVM's; any other case raises :class:`Unsupported`.
    """

    def __init__(self, bound: dict) -> None:
        self.bound = bound  # handle -> anything, for every variable bound so far
        self.known: dict[int, object] = {}  # handle -> unwrapped bound value
        self.replace: dict[int, object] = {}  # trivial handle -> first non-trivial variable
        self.constant: dict[int, object] = {}  # handle -> constant it is bound to
        self.builder = relax.BlockBuilder()
        self._inlined = False  # expr(): a constant replaced a variable in this expression

    # -- plan ---------------------------------------------------------------
    def plan_binding(self, binding, var, value, h: int) -> tuple[bool, object, object]:
        """Plan one binding (``var``, ``value`` and ``h``: its variable, value and the
        variable's handle, as the sweep read them); the bindings it reads must have been
        planned before.

        Returns ``(removed, replacement, type)``: whether the binding goes away (it is
        trivial), what every later use of its variable becomes (a variable, a constant,
        or None when uses stay as they are), and the type of the replacement (the
        variable's own type; None when there is no replacement).
        """
        same_type = True
        var_ty = None
        if type(binding) is ir.MatchCast:
            if ir.array_size(_tir_vars_in_type(binding.ty)):
                raise Unsupported("match_cast with symbolic variables")
            var_ty = var.ty
            same_type = _same_type(var_ty, value.ty)
        unwrapped = self.unwrap(value)
        removed = False
        if ir.is_var(unwrapped) and same_type:
            if var_ty is None:
                var_ty = var.ty
            if not _same_type(var_ty, unwrapped.ty):
                raise Unsupported("trivial binding that changes the type")
            if type(var_ty) in (ir.ShapeType, ir.PrimType):
                raise Unsupported("trivial binding of a shape or prim value")
            # the first non-trivial variable: the bindings before were planned already
            self.replace[h] = self.replace.get(unwrapped.__chandle__(), unwrapped)
            removed = True
        if type(unwrapped) is ir.GenericConst:
            if var_ty is None:
                var_ty = var.ty
            if not _same_type(var_ty, unwrapped.ty):
                raise Unsupported("constant binding that changes the type")
            self.constant[h] = unwrapped
        self.known[h] = unwrapped
        if removed:
            target = self.replace[h]
            return True, self.constant.get(target.__chandle__(), target), var_ty
        constant = self.constant.get(h)
        return False, constant, None if constant is None else var_ty

    def unwrap_var(self, expr):
        """Follow variables to their bound values (TVM's recursively_unwrap_var)."""
        while ir.is_var(expr):
            h = expr.__chandle__()
            nxt = self.known.get(h)
            if nxt is None:
                return _Opaque(h) if h in self.bound else expr
            if nxt is expr:
                return expr
            expr = nxt
        return expr

    def unwrap(self, value):
        """TVM's UnwrapKnownValue: the field of a known tuple, or an earlier tuple."""
        kind = type(value)
        if kind is ir.TupleGetItem:
            tup = self.unwrap_var(value.tuple_value)
            if type(tup) is ir.Tuple:
                return ir.array_get(tup.fields, value.index)
        elif kind is ir.Tuple:
            fields = ir.items(value.fields)
            if not fields:
                return value
            first = self.unwrap_var(fields[0])
            if type(first) is not ir.TupleGetItem:
                return value
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
        if type(binding) is ir.MatchCast:
            return ir.make_match_cast(binding.var, new_value, binding.ty, binding.span)
        return ir.make_var_binding(binding.var, new_value, binding.span)

    def expr(self, expr):
        """``expr`` with replaced variables and inlined constants (itself if unchanged).

        A call whose only changes are variables replaced by variables of the same type
        (every trivial binding is one) keeps its type, and so does a call of a function
        (a GlobalVar or ExternFunc: its type comes from the callee or the call's
        ``ty_args``); an operator call with an inlined constant is normalized again, since
        an operator's type inference may read a literal argument.
        """
        kind = type(expr)
        if kind is ir.Var or kind is ir.DataflowVar:
            h = expr.__chandle__()
            new = self.replace.get(h, expr)
            if ir.is_var(new):
                constant = self.constant.get(new.__chandle__())
                if constant is not None:
                    self._inlined = True
                    return constant
            return new
        if kind is ir.Call:
            outer = self._inlined
            self._inlined = False
            op = expr.op
            new_op = self.expr(op) if type(op) is not ir.Op else op
            args = ir.items(expr.args)
            new_args = [self.expr(a) for a in args]
            inlined = self._inlined
            self._inlined = outer or inlined
            if new_op is op and all(n is a for n, a in zip(new_args, args, strict=True)):
                return expr
            ty = None if inlined and type(op) is ir.Op else expr.ty
            if ty is not None:
                return ir.make_call(ty, new_op, new_args, expr.attrs, expr.ty_args, expr.span)
            call = ir.make_call(
                ir.missing_type(), new_op, new_args, expr.attrs, expr.ty_args, expr.span
            )
            return ir.normalize(self.builder, call)
        if kind is ir.Tuple:
            outer = self._inlined
            self._inlined = False
            fields = ir.items(expr.fields)
            new_fields = [self.expr(f) for f in fields]
            inlined = self._inlined
            self._inlined = outer or inlined
            if all(n is f for n, f in zip(new_fields, fields, strict=True)):
                return expr
            if not inlined:  # the constructor types a tuple of typed fields, as before
                return _make_tuple(new_fields, expr.span)
            return ir.normalize(self.builder, relax.Tuple(new_fields, expr.span))
        if kind is ir.TupleGetItem:
            tup = self.expr(expr.tuple_value)
            if tup is expr.tuple_value:
                return expr
            return ir.normalize(self.builder, relax.TupleGetItem(tup, expr.index, expr.span))
        return expr
