"""Step 3 of the pass: rebuild the function with the planned kills.

Every binding and block that does not change is reused as it is.  Like TVM's
ExprMutator and BlockBuilder, each SeqExpr drops empty binding blocks and merges
adjacent blocks of one kind.  New nodes are built
with the raw FFI constructors; the kills are typed by :meth:`KillFactory.finish`.
"""

from __future__ import annotations

from itertools import pairwise

from benchkill.passes.last_use import Scope
from benchkill.relax import ffi as ir


def rewrite_function(func, root: Scope, plan: dict, kill_factory: ir.KillFactory):
    """``func`` with the kills of ``plan`` inserted, or ``func`` itself if none."""
    body = _rewrite_scope(root, plan, kill_factory)
    if body is None:
        return func
    kill_factory.finish()
    return ir.make_function(func.params, body, func.ret_ty, func.is_pure, func.attrs, func.span)


def _rewrite_scope(scope: Scope, plan: dict, make_kill: ir.KillFactory):
    """The new SeqExpr of ``scope``, or None when nothing in it changes."""
    new_children = {}
    for pos, children in scope.children.items():
        rewritten = [_rewrite_scope(child, plan, make_kill) for child in children]
        if any(r is not None for r in rewritten):
            new_children[pos] = [
                child.seq if r is None else r for child, r in zip(children, rewritten, strict=True)
            ]
    kills = plan.get(id(scope), {})
    kinds = [
        dataflow
        for bindings, dataflow in zip(scope.bindings, scope.dataflow, strict=True)
        if bindings
    ]
    irregular = len(kinds) < len(scope.bindings) or any(a == b for a, b in pairwise(kinds))
    if not kills and not new_children and not irregular:
        return None

    # (dataflow, original block or None, bindings): adjacent blocks of one kind merged,
    # as TVM's BlockBuilder does when its ExprMutator rebuilds a SeqExpr
    merged: list[list] = []
    pos = 0
    for block, bindings, dataflow in zip(scope.blocks, scope.bindings, scope.dataflow, strict=True):
        if not bindings:
            continue
        end = pos + len(bindings)
        if not any(p in kills or p in new_children for p in range(pos, end)):
            out = bindings
            pos = end
        else:
            out = []
            append = out.append
            for binding in bindings:
                if pos in new_children:
                    binding = _rebuild_binding(binding, new_children[pos])
                append(binding)
                group = kills.get(pos)
                if group is not None:
                    out.extend(make_kill.kills(group, dataflow))
                pos += 1
            block = None
        if merged and merged[-1][0] == dataflow:
            merged[-1][1] = None
            merged[-1][2] = merged[-1][2] + out
        else:
            merged.append([dataflow, block, out])
    blocks = [
        block
        if block is not None
        else (ir.make_dataflow_block if dataflow else ir.make_binding_block)(out, None)
        for dataflow, block, out in merged
    ]
    seq = scope.seq
    new_seq = ir.make_seq_expr(blocks, seq.body, seq.span)
    ir.update_type(new_seq, seq.ty)
    return new_seq


def _rebuild_binding(binding, new_bodies: list):
    value = binding.value
    if type(value) is ir.If:
        new_value = ir.make_if(value.cond, new_bodies[0], new_bodies[1], value.span)
        ir.update_type(new_value, value.ty)
    elif type(value) is ir.Function:
        new_value = ir.make_function(
            value.params, new_bodies[0], value.ret_ty, value.is_pure, value.attrs, value.span
        )
    else:  # a SeqExpr bound directly
        new_value = new_bodies[0]
    return ir.make_var_binding(binding.var, new_value, binding.span)
