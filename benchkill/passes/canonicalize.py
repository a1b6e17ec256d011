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

from typing import NamedTuple

import tvm
import tvm_ffi
from tvm import relax

from benchkill.passes.last_use import OUTPUT, Scope, Sweep
from benchkill.relax import ffi as ir


def canonicalize(func, sweep: Sweep):
    """``func`` after TVM's CanonicalizeBindings and removal of unused trivial bindings.

    ``sweep`` is :func:`.last_use.sweep_function` of ``func``: it lists the bindings
    canonicalization can change, so only those are looked at again.
    """
    result = _Canonicalizer(sweep).run(func)
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


def _unused_trivial_bindings(func) -> set[int]:
    """Handles of variables bound trivially (``y = x``) that nothing uses."""
    used: set[int] = set()
    trivial: set[int] = set()

    def visit(expr) -> None:
        kind = type(expr)
        if ir.is_var(expr):
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
                    if ir.is_var(value) and (
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


class _Opaque(NamedTuple):
    """The value of a variable bound to an expression canonicalization cannot look into."""

    handle: int


def _ident(expr) -> tuple:
    return ("opaque", expr.handle) if isinstance(expr, _Opaque) else ("node", expr.__chandle__())


class _Canonicalizer:
    """CanonicalizeBindings for the common cases, following TVM's CanonicalizePlanner.

    Plan, over the sweep's candidate bindings in TVM's visiting order: each value is
    unwrapped (an item of a known tuple becomes that field; a tuple of all items of one
    earlier tuple becomes that tuple); a variable bound to a variable is a trivial
    binding, removed, its uses replaced by the first non-trivial variable; a variable
    bound to a constant has its uses replaced by the constant.  Apply: rebuild only the
    bindings the sweep saw using a candidate variable.

    Only type-preserving replacements are done here, so no type is re-inferred
    differently from TVM's; any other case raises :class:`_Unsupported`.
    """

    def __init__(self, sweep: Sweep) -> None:
        self.sweep = sweep
        self.known: dict[int, object] = {}  # handle -> unwrapped bound value
        self.trivial: dict[int, object] = {}  # handle -> variable it is bound to
        self.constant: dict[int, object] = {}  # handle -> constant it is bound to
        self.replace: dict[int, object] = {}
        self.removed: set[tuple[int, int]] = set()  # (id(scope), position)
        self.builder = relax.BlockBuilder()

    def run(self, func):
        sweep = self.sweep
        if sweep.has_dataflow or sweep.has_local_function:
            return None
        try:
            for binding, scope, pos in sweep.canon_sites:
                self.plan_binding(binding, scope, pos)
            for h, target in self.trivial.items():
                while ir.is_var(target) and target.__chandle__() in self.trivial:
                    target = self.trivial[target.__chandle__()]
                self.replace[h] = target
            body = self.apply_scope(sweep.root)
        except _Unsupported:
            return None
        if body is None:
            return func
        return ir.make_function(func.params, body, func.ret_ty, func.is_pure, func.attrs, func.span)

    # -- plan ---------------------------------------------------------------
    def plan_binding(self, binding, scope: Scope, pos: int) -> None:
        var = binding.var
        value = binding.value
        same_type = True
        if type(binding) is ir.MatchCast:
            if ir.array_size(_tir_vars_in_type(binding.ty)):
                raise _Unsupported("match_cast with symbolic variables")
            same_type = tvm_ffi.structural_equal(var.ty, value.ty)
        unwrapped = self.unwrap(value)
        h = var.__chandle__()
        if ir.is_var(unwrapped) and same_type:
            if not tvm_ffi.structural_equal(var.ty, unwrapped.ty):
                raise _Unsupported("trivial binding that changes the type")
            if type(var.ty) in (ir.ShapeType, ir.PrimType):
                raise _Unsupported("trivial binding of a shape or prim value")
            self.trivial[h] = unwrapped
            self.removed.add((id(scope), pos))
        if type(unwrapped) is ir.GenericConst:
            if not tvm_ffi.structural_equal(var.ty, unwrapped.ty):
                raise _Unsupported("constant binding that changes the type")
            self.constant[h] = unwrapped
        self.known[h] = unwrapped

    def unwrap_var(self, expr):
        """Follow variables to their bound values (TVM's recursively_unwrap_var)."""
        while ir.is_var(expr):
            h = expr.__chandle__()
            nxt = self.known.get(h)
            if nxt is None:
                return _Opaque(h) if h in self.sweep.bound else expr
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
                raise _Unsupported("item of a non-tuple")
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
    def apply_scope(self, scope: Scope):
        """The new SeqExpr of ``scope``, or None when nothing in it changes."""
        sid = id(scope)
        touched = self.sweep.touched
        new_children = {}
        for pos, children in scope.children.items():
            rewritten = [self.apply_scope(child) for child in children]
            if any(r is not None for r in rewritten):
                new_children[pos] = [
                    child.seq if r is None else r
                    for child, r in zip(children, rewritten, strict=True)
                ]
        changed = False
        blocks = []
        pos = 0
        for block, bindings in zip(scope.blocks, scope.bindings, strict=True):
            kept = []
            block_changed = False
            for binding in bindings:
                key = (sid, pos)
                if key in self.removed:
                    block_changed = True
                elif key in touched or pos in new_children:
                    kept.append(self.apply_binding(binding, key in touched, new_children.get(pos)))
                    block_changed = True
                else:
                    kept.append(binding)
                pos += 1
            if block_changed:
                changed = True
                if kept:
                    blocks.append(ir.make_binding_block(kept, None))
            else:
                blocks.append(block)
        seq = scope.seq
        body = self.expr(seq.body) if (sid, OUTPUT) in touched else seq.body
        if not changed and body is seq.body:
            return None
        new_seq = ir.make_seq_expr(blocks, body, seq.span)
        ir.update_type(new_seq, seq.ty)
        return new_seq

    def apply_binding(self, binding, touched: bool, new_branches):
        value = binding.value
        if type(value) is ir.If:
            cond = self.expr(value.cond) if touched else value.cond
            true_b, false_b = new_branches or (value.true_branch, value.false_branch)
            new_value = ir.make_if(cond, true_b, false_b, value.span)
            ir.update_type(new_value, value.ty)
        elif new_branches is not None:
            raise _Unsupported("local function")
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
            return self.constant.get(new.__chandle__(), new) if ir.is_var(new) else new
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
