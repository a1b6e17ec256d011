"""Step 0 of the pass: TVM's preprocessing, run only where it can change something.

TVM's KillAfterLastUse first runs CanonicalizeBindings and then removes trivial
bindings (``y = x``, or a match_cast of a variable to its own type) that nothing uses.
On a function without dataflow blocks, match_cast, trivial rebindings, constant
bindings, items of known tuples or local functions both steps are the identity;
the sweep (:mod:`.last_use`) tells which functions have none of these.

The others are canonicalized here, in Python, when they stay within what this
module reproduces exactly (:class:`_Canonicalizer`: trivial rebindings and
match_casts that keep their type, constants, items and copies of known tuples; no
dataflow blocks, local functions or match_casts that define symbolic variables);
anything else is handed to TVM's own CanonicalizeBindings.
"""

from __future__ import annotations

import tvm
import tvm_ffi
from tvm import relax

from . import ir


def canonicalize(func):
    """``func`` after TVM's CanonicalizeBindings and removal of unused trivial bindings."""
    result = _Canonicalizer().run(func)
    if result is not None:
        return result
    return canonicalize_with_tvm(func)


def canonicalize_with_tvm(func):
    """The same, computed by TVM's CanonicalizeBindings (any function)."""
    mod = relax.transform.CanonicalizeBindings()(tvm.IRModule({"f": func}))
    func = mod["f"]
    unused = _unused_trivial_bindings(func)
    if unused:
        func = _without_bindings(func, unused)
    return func


def _is_var(expr) -> bool:
    return type(expr) is ir.Var or type(expr) is ir.DataflowVar


def _unused_trivial_bindings(func) -> set[int]:
    """Handles of variables bound trivially (``y = x``) that nothing uses."""
    used: set[int] = set()
    trivial: set[int] = set()

    def visit(expr) -> None:
        kind = type(expr)
        if _is_var(expr):
            used.add(expr.__chandle__())
        elif kind is ir.Call:
            visit(expr.op)
            for arg in ir.items(expr.args):
                visit(arg)
        elif kind is ir.Tuple:
            for item in ir.items(expr.fields):
                visit(item)
        elif kind is ir.TupleGetItem:
            visit(expr.tuple_value)
        elif kind is ir.If:
            visit(expr.cond)
            visit(expr.true_branch)
            visit(expr.false_branch)
        elif kind is ir.Function:
            visit(expr.body)
        elif kind is ir.SeqExpr:
            for block in ir.items(expr.blocks):
                for binding in ir.items(block.bindings):
                    value = binding.value
                    if _is_var(value) and (
                        type(binding) is ir.VarBinding
                        or tvm_ffi.structural_equal(binding.var.ty, value.ty)
                    ):
                        trivial.add(binding.var.__chandle__())
                    visit(value)
            visit(expr.body)

    visit(func.body)
    return trivial - used


def _without_bindings(func, remove: set[int]):
    def scope(seq):
        blocks = []
        for block in ir.items(seq.blocks):
            kept = []
            for binding in ir.items(block.bindings):
                if binding.var.__chandle__() in remove:
                    continue
                value = binding.value
                if type(value) is ir.If:
                    new_value = ir.make_if(
                        value.cond, scope(value.true_branch), scope(value.false_branch), value.span
                    )
                    ir.update_type(new_value, value.ty)
                    binding = ir.make_var_binding(binding.var, new_value, binding.span)
                kept.append(binding)
            if kept:
                make = (
                    ir.make_dataflow_block
                    if type(block) is ir.DataflowBlock
                    else ir.make_binding_block
                )
                blocks.append(make(kept, None))
        new_seq = ir.make_seq_expr(blocks, seq.body, seq.span)
        ir.update_type(new_seq, seq.ty)
        return new_seq

    return ir.make_function(
        func.params, scope(func.body), func.ret_ty, func.is_pure, func.attrs, func.span
    )


class _Unsupported(Exception):
    """The function needs a canonicalization this module does not reproduce."""


_tir_vars_in_type = tvm_ffi.get_global_func("relax.analysis.TIRVarsInType")


class _Canonicalizer:
    """CanonicalizeBindings for the common cases, following TVM's CanonicalizePlanner.

    Plan (one traversal in TVM's visiting order): each binding's value is unwrapped
    (an item of a known tuple becomes that field; a tuple of all items of one earlier
    tuple becomes that tuple); a variable bound to a variable is a trivial binding,
    removed, its uses replaced by the first non-trivial variable; a variable bound
    to a constant has its uses replaced by the constant.  Apply: one rebuild.

    Only type-preserving replacements are done here, so no type is re-inferred
    differently from TVM's; any other case raises :class:`_Unsupported`.
    """

    def __init__(self) -> None:
        self.known: dict[int, object] = {}  # handle -> unwrapped bound value
        self.trivial: dict[int, object] = {}  # handle -> variable it is bound to
        self.constant: dict[int, object] = {}  # handle -> constant it is bound to
        self.replace: dict[int, object] = {}
        self.builder = relax.BlockBuilder()

    def run(self, func):
        try:
            self.plan(func.body)
            for h, target in self.trivial.items():
                while _is_var(target) and target.__chandle__() in self.trivial:
                    target = self.trivial[target.__chandle__()]
                self.replace[h] = target
            body = self.apply_scope(func.body)
        except _Unsupported:
            return None
        if body is func.body:
            return func
        return ir.make_function(func.params, body, func.ret_ty, func.is_pure, func.attrs, func.span)

    # -- plan ---------------------------------------------------------------
    def plan(self, seq) -> None:
        for block in ir.items(seq.blocks):
            if type(block) is ir.DataflowBlock:
                raise _Unsupported("dataflow block")
            for binding in ir.items(block.bindings):
                self.plan_binding(binding)

    def plan_binding(self, binding) -> None:
        var = binding.var
        value = binding.value
        kind = type(value)
        same_type = True
        if type(binding) is ir.MatchCast:
            if ir.array_size(_tir_vars_in_type(binding.ty)):
                raise _Unsupported("match_cast with symbolic variables")
            same_type = tvm_ffi.structural_equal(var.ty, value.ty)
        if kind is ir.Function or kind is ir.SeqExpr:
            raise _Unsupported("local function")
        unwrapped = self.unwrap(value)
        h = var.__chandle__()
        if _is_var(unwrapped) and same_type:
            if not _same_type(var, unwrapped):
                raise _Unsupported("trivial binding that changes the type")
            if type(var.ty) in (ir.ShapeType, ir.PrimType):
                raise _Unsupported("trivial binding of a shape or prim value")
            self.trivial[h] = unwrapped
        if type(unwrapped) is ir.GenericConst:
            if not tvm_ffi.structural_equal(var.ty, unwrapped.ty):
                raise _Unsupported("constant binding that changes the type")
            self.constant[h] = unwrapped
        self.known[h] = unwrapped
        if kind is ir.If:
            self.plan(value.true_branch)
            self.plan(value.false_branch)

    def unwrap_var(self, expr):
        while _is_var(expr):
            nxt = self.known.get(expr.__chandle__())
            if nxt is None or nxt is expr:
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
                raise _Unsupported("item of a non-tuple")
            if len(ty.fields) != len(fields):
                return value
            earlier = self.unwrap_var(first.tuple_value)
            for i, field_ in enumerate(fields):
                element = self.unwrap_var(field_)
                if type(element) is not ir.TupleGetItem or element.index != i:
                    return value
                if self.unwrap_var(element.tuple_value).__chandle__() != earlier.__chandle__():
                    return value
            return earlier
        return value

    # -- apply --------------------------------------------------------------
    def apply_scope(self, seq):
        changed = False
        blocks = []
        for block in ir.items(seq.blocks):
            bindings = []
            block_changed = False
            for binding in ir.items(block.bindings):
                if binding.var.__chandle__() in self.replace:
                    block_changed = True
                    continue
                new = self.apply_binding(binding)
                block_changed |= new is not binding
                bindings.append(new)
            if block_changed:
                changed = True
                if bindings:
                    blocks.append(ir.make_binding_block(bindings, None))
            else:
                blocks.append(block)
        body = self.expr(seq.body)
        if not changed and body is seq.body:
            return seq
        new_seq = ir.make_seq_expr(blocks, body, seq.span)
        ir.update_type(new_seq, seq.ty)
        return new_seq

    def apply_binding(self, binding):
        value = binding.value
        if type(value) is ir.If:
            cond = self.expr(value.cond)
            true_b = self.apply_scope(value.true_branch)
            false_b = self.apply_scope(value.false_branch)
            if cond is value.cond and true_b is value.true_branch and false_b is value.false_branch:
                return binding
            new_value = ir.make_if(cond, true_b, false_b, value.span)
            ir.update_type(new_value, value.ty)
        else:
            new_value = self.expr(value)
            if new_value is value:
                return binding
        if type(binding) is ir.MatchCast:
            return ir.make_match_cast(binding.var, new_value, binding.ty, binding.span)
        return ir.make_var_binding(binding.var, new_value, binding.span)

    def expr(self, expr):
        """``expr`` with replaced variables and inlined constants (itself if unchanged)."""
        kind = type(expr)
        if kind is ir.Var or kind is ir.DataflowVar:
            h = expr.__chandle__()
            new = self.replace.get(h, expr)
            return self.constant.get(new.__chandle__(), new) if _is_var(new) else new
        if kind is ir.Call:
            op = expr.op
            new_op = self.expr(op) if type(op) is not ir.Op else op
            args = ir.items(expr.args)
            new_args = [self.expr(a) for a in args]
            if new_op is op and all(n is a for n, a in zip(new_args, args, strict=True)):
                return expr
            call = ir.make_call(
                ir.missing_type(), new_op, new_args, expr.attrs, expr.ty_args, expr.span
            )
            return ir.normalize(self.builder, call)
        if kind is ir.Tuple:
            fields = ir.items(expr.fields)
            new_fields = [self.expr(f) for f in fields]
            if all(n is f for n, f in zip(new_fields, fields, strict=True)):
                return expr
            return ir.normalize(self.builder, relax.Tuple(new_fields, expr.span))
        if kind is ir.TupleGetItem:
            tup = self.expr(expr.tuple_value)
            if tup is expr.tuple_value:
                return expr
            return ir.normalize(self.builder, relax.TupleGetItem(tup, expr.index, expr.span))
        return expr


def _same_type(a, b) -> bool:
    return tvm_ffi.structural_equal(a.ty, b.ty)
