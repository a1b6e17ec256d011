"""Step 0 of the pass: TVM's preprocessing, run only where it can change something.

TVM's KillAfterLastUse first runs CanonicalizeBindings and then removes trivial
bindings (``y = x``, or a match_cast of a variable to its own type) that nothing uses.
On a function without dataflow blocks, match_cast, trivial rebindings, constant
bindings, items of known tuples or local functions both steps are the identity;
the sweep (:mod:`.last_use`) tells which functions have none of these, and only the
others are handed to TVM's CanonicalizeBindings here.
"""

from __future__ import annotations

import tvm
import tvm_ffi
from tvm import relax

from . import ir


def canonicalize(func):
    """``func`` after TVM's CanonicalizeBindings and removal of unused trivial bindings."""
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
                make = ir.make_dataflow_block if type(block) is ir.DataflowBlock else ir.make_binding_block
                blocks.append(make(kept, None))
        new_seq = ir.make_seq_expr(blocks, seq.body, seq.span)
        ir.update_type(new_seq, seq.ty)
        return new_seq

    return ir.make_function(func.params, scope(func.body), func.ret_ty, func.is_pure, func.attrs, func.span)
