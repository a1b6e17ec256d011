"""Step 3 of the pass: rebuild the function with the planned kills and canonicalization.

Every binding and block that does not change is reused as it is, and runs of unchanged
bindings are copied as list slices: the Python work is per change (a kill, a
canonicalized or removed binding, a rebuilt ``If``), not per binding.  Like TVM's
ExprMutator and BlockBuilder, each SeqExpr drops empty binding blocks and merges
adjacent blocks of one kind.  New nodes are built with the raw FFI constructors.
"""

from __future__ import annotations

import bisect
from itertools import pairwise

from benchkill.passes.canonicalize import Unsupported, same_type
from benchkill.passes.last_use import OUTPUT, Scope, Sweep
from benchkill.relax import ffi as ir

_NEVER = 1 << 62  # a position after every binding


def rewrite_function(func, sweep: Sweep, plan: dict):
    """``func`` with the kills of ``plan`` inserted and the canonicalization of ``sweep``
    applied, or ``func`` itself if neither changes anything."""
    body = _rewrite_scope(sweep.root, plan, sweep.canonicalizer)
    if body is None:
        return func
    return ir.make_function(func.params, body, func.ret_ty, func.is_pure, func.attrs, func.span)


def _rewrite_scope(scope: Scope, plan: dict, canon):
    """The new SeqExpr of ``scope``, or None when nothing in it changes."""
    new_children = {}
    for pos, children in scope.children.items():
        rewritten = [_rewrite_scope(child, plan, canon) for child in children]
        # one or two children (an If's branches); ``is``, as ``==`` on IR nodes reads types
        if rewritten[0] is not None or rewritten[-1] is not None:
            new_children[pos] = [
                child.seq if r is None else r for child, r in zip(children, rewritten, strict=True)
            ]
    kill_pos, kills = plan.get(scope.index, ((), ()))
    touched, removed = scope.touched, scope.removed
    if len(scope.bindings) == 1:  # the commonest scope: one block, dropped if empty
        irregular = not scope.bindings[0]
    else:
        kinds = [
            dataflow
            for bindings, dataflow in zip(scope.bindings, scope.dataflow, strict=True)
            if bindings
        ]
        irregular = len(kinds) < len(scope.bindings) or any(a == b for a, b in pairwise(kinds))
    if not kills and not new_children and not touched and not removed and not irregular:
        return None

    # positions whose binding changes (kills only follow a binding)
    if touched or removed:
        special = sorted({*touched, *removed, *new_children} - {OUTPUT})
    else:  # the nested scopes only: ascending already, as the sweep found them
        special = list(new_children)
    n_kills, n_special = len(kill_pos), len(special)
    rebuilt_get = scope.rebuilt.get
    ki = si = 0
    # (dataflow, original block or None, bindings): adjacent blocks of one kind merged,
    # as TVM's BlockBuilder does when its ExprMutator rebuilds a SeqExpr
    merged: list[list] = []
    start = 0
    for block, bindings, dataflow in zip(scope.blocks, scope.bindings, scope.dataflow, strict=True):
        end = start + len(bindings)
        next_kill = kill_pos[ki] if ki < n_kills else _NEVER
        next_special = special[si] if si < n_special else _NEVER
        if next_kill >= end and next_special >= end:
            out = bindings
        elif next_special >= end:  # kills only: copy the runs between them as slices
            stop = bisect.bisect_left(kill_pos, end, ki)
            out = []
            extend, append = out.extend, out.append
            copied = 0  # bindings[:copied] are in ``out``
            for j in range(ki, stop):
                after = kill_pos[j] - start + 1
                if after > copied:
                    extend(bindings[copied:after])
                    copied = after
                append(kills[j])
            extend(bindings[copied:])
            ki = stop
            block = None
        else:
            out = []
            extend, append = out.extend, out.append
            copied = start  # bindings before this position are in ``out``
            while True:
                pos = next_kill if next_kill < next_special else next_special
                if pos >= end:
                    break
                if pos >= copied:
                    if pos > copied:
                        extend(bindings[copied - start : pos - start])
                    if pos != next_special:  # a kill follows an unchanged binding
                        append(bindings[pos - start])
                    else:
                        si += 1
                        next_special = special[si] if si < n_special else _NEVER
                        # a removed binding has nothing to append; a rebuilt call is the
                        # commonest change, the others are in _changed
                        if pos not in removed:
                            rebuilt = rebuilt_get(pos)
                            if rebuilt is not None:
                                append(canon.call_binding(rebuilt))
                            else:
                                append(
                                    _changed(
                                        bindings[pos - start],
                                        pos,
                                        scope,
                                        new_children.get(pos),
                                        canon,
                                    )
                                )
                    copied = pos + 1
                while next_kill == pos:
                    append(kills[ki])
                    ki += 1
                    next_kill = kill_pos[ki] if ki < n_kills else _NEVER
            extend(bindings[copied - start :])
            block = None
        start = end
        if not out:
            continue
        if merged and merged[-1][0] == dataflow:
            merged[-1][1] = None
            merged[-1][2] = merged[-1][2] + out
        else:
            merged.append([dataflow, block, out])
    if len(merged) == 1:  # the commonest scope: one block
        [(dataflow, block, out)] = merged
        if block is None:
            block = (ir.make_dataflow_block if dataflow else ir.make_binding_block)(out, None)
        blocks = [block]
    else:
        blocks = [
            block
            if block is not None
            else (ir.make_dataflow_block if dataflow else ir.make_binding_block)(out, None)
            for dataflow, block, out in merged
        ]
    seq = scope.seq
    body = seq.body
    if OUTPUT in touched:
        body = canon.expr(body)
        # TVM's rebuilt SeqExpr takes its result's type (rule 10), which the checks found
        # to be the scope's: so must the result with its replacements (a trivial
        # rebinding may replace a variable by one of another type)
        if not same_type(body.ty, seq.body.ty):
            raise Unsupported("a scope result replaced by a value of another type")
    new_seq = ir.make_seq_expr(blocks, body, seq.span)
    ir.update_type(new_seq, seq.ty)
    return new_seq


def _changed(binding, pos: int, scope: Scope, new_bodies, canon):
    """The binding at ``pos`` after canonicalization and its nested rebuild, for a binding
    neither removed nor a rebuilt call (the rebuild's loop handles those two)."""
    if pos in scope.touched:
        return canon.apply_binding(binding, True, new_bodies)
    return _rebuild_binding(binding, new_bodies)


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
    return ir.make_var_binding(binding.var, new_value, None)  # no span, as TVM re-emits it
