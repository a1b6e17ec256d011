"""The fallback: TVM's result for a function the fast path does not reproduce, in every mode.

The sweep hands a function here when it meets one of the rules of :mod:`.canonicalize` that
benchkill does not reproduce.  What this module returns is exact by construction and does
not depend on the caller's PassContext:

**Default mode** (``exclude_null_value=True, tvm_compatible=True``) is TVM's own
``relax.transform.KillAfterLastUse()`` applied to ``IRModule({"f": func})`` inside a fresh
``tvm.transform.PassContext()``.  The pass is a function pass whose C++
(``src/relax/transform/kill_after_last_use.cc:256-271``) reads nothing but the function:
its ExprMutators start from an empty BlockBuilder, so a one-function module gives what the
whole module gives.  A Pass called directly runs whatever the context's ``opt_level`` or
``disabled_pass`` say (only ``Sequential`` asks ``PassEnabled``,
``src/ir/transform.cc:547-556``), and inside the fresh context no instrument of the
caller's can veto or see it.  Its inner canonicalization is the expression-level
``CanonicalizeBindings`` (``canonicalize_bindings.cc:628-632``), not the module pass
``relax.transform.CanonicalizeBindings`` that ``PassContext(opt_level=0)`` skips.

**The other modes** (``tvm_compatible=False``, ``exclude_null_value=False``) differ from
TVM's pass only in the kills they plan, never in the canonicalization.  TVM's output is
``O = K(C(func))``: ``C`` the canonicalizer and the unused-trivial-binding remover, ``K``
the KillInserter, which rebuilds ``C(func)`` and emits each kill it decides on with a new
variable ``_`` (``kill_after_last_use.cc:230-248``).  A kill that was in the input keeps
its variable through every mutator: ``ReEmitBinding`` keeps a binding's variable unless
its type changes (``WithType``, ``expr_functor.cc:1035-1052``), and a kill's type is void
before and after (a kill whose variable is not void is refused here).  So the kills ``K``
inserted are exactly the kill bindings of ``O`` whose variable the input does not bind;
removing them leaves ``S``, ``K``'s rebuild of ``C(func)``: the canonicalized function
TVM's kill inserter decided on.  :func:`kill_function` then sweeps ``S`` as it is (no
canonicalization again) and checks that benchkill's plan of ``S`` in default mode, applied
by its rebuild, gives ``O`` back (one structural comparison), which shows that the ``S``
benchkill plans on is the function TVM planned on; the plan of ``S`` in the requested mode,
applied, is the result.  If the check fails, a BenchkillError says so: never a module that
differs silently.

Errors: where TVM's pass raises (e.g. rule 5, an ill-formed ``call_tir_inplace``), the
fallback raises too, in every mode: a BenchkillError with TVM's reason.
"""

from __future__ import annotations

from functools import cache

import tvm
import tvm_ffi
from tvm import relax

from benchkill.errors import BenchkillError, one_line
from benchkill.passes.last_use import NeedsTVMCanonicalization, sweep_function
from benchkill.passes.plan import plan_kills
from benchkill.passes.rewrite import rewrite_function
from benchkill.relax import ffi as ir
from benchkill.relax import ops


@cache
def _tvm_pass() -> tvm.ir.transform.Pass:
    return relax.transform.KillAfterLastUse()


@cache
def _kill_ops() -> frozenset[int]:
    return frozenset(ops.op_handle(name) for name in ops.KILLS)


def tvm_kill(func):
    """TVM's KillAfterLastUse of ``func`` alone, whatever PassContext the caller is in.

    Where TVM's pass raises, this raises a BenchkillError with TVM's one-line reason (the
    input is malformed; TVM's exception is its ``__cause__``).
    """
    try:
        with tvm.transform.PassContext():
            return _tvm_pass()(tvm.IRModule({"f": func}))["f"]
    except Exception as exc:  # TVM raises its own error classes, ValueError, ...
        # (a pass's error is its reason, then "Error in pass: ..." and the function's text)
        reason = str(exc).partition("\n\nError in pass:")[0]
        raise BenchkillError(f"TVM's KillAfterLastUse rejects it: {one_line(reason)}") from exc


def kill_function(func, *, exclude_null_value: bool, tvm_compatible: bool):
    """``func`` with the kills TVM's pass gives it, planned in the requested mode (see the
    module docstring for why this is exact)."""
    out = tvm_kill(func)
    if exclude_null_value and tvm_compatible:
        return out
    kept = _input_kills(func)
    stripped = _without_new_kills(out, kept)
    try:
        sweep = sweep_function(stripped, canonicalize=False)
        again = rewrite_function(
            stripped, sweep, plan_kills(sweep, exclude_null_value=True, tvm_compatible=True)
        )
        if not tvm_ffi.structural_equal(again, out, map_free_vars=True):
            raise BenchkillError(
                "cannot plan this function exactly: benchkill's kills on TVM's canonicalized "
                "function differ from TVM's (please report it)"
            )
        plan = plan_kills(
            sweep, exclude_null_value=exclude_null_value, tvm_compatible=tvm_compatible
        )
        return rewrite_function(stripped, sweep, plan)
    except NeedsTVMCanonicalization:
        raise BenchkillError(
            "cannot plan this function exactly in this mode: TVM's canonicalized function has "
            "a use benchkill's plan does not reproduce (please report it)"
        ) from None


def _input_kills(func) -> set[int]:
    """Handles of the variables of the kill bindings ``func`` already has."""
    found: set[int] = set()
    _collect_kills(func.body, _kill_ops(), relax.TupleType([]), found)
    return found


def _collect_kills(seq, kills: frozenset[int], void, found: set[int]) -> None:
    """(A module-level function, not a closure: a closure that calls itself is a reference
    cycle, left for the cyclic garbage collector.)"""
    for block in ir.items(seq.blocks):
        for binding in ir.items(block.bindings):
            value = binding.value
            kind = type(value)
            if kind is ir.Call and type(value.op) is ir.Op and value.op.__chandle__() in kills:
                if not tvm_ffi.structural_equal(binding.var.ty, void):
                    raise BenchkillError(
                        "cannot plan this function exactly in this mode: a kill bound to a "
                        f"variable of type {binding.var.ty} (not void) is not told apart "
                        "from TVM's own kills"
                    )
                found.add(binding.var.__chandle__())
            elif kind is ir.If:
                _collect_kills(value.true_branch, kills, void, found)
                _collect_kills(value.false_branch, kills, void, found)
            elif kind is ir.Function:
                _collect_kills(value.body, kills, void, found)
            elif kind is ir.SeqExpr:
                _collect_kills(value, kills, void, found)


def without_kills(func):
    """``func`` without any kill binding."""
    return _without_new_kills(func, frozenset())


def _without_new_kills(func, kept):
    """``func`` without the kill bindings whose variable is not in ``kept``."""
    body = _strip_scope(func.body, kept, _kill_ops())
    if body is None:
        return func
    return ir.make_function(func.params, body, func.ret_ty, func.is_pure, func.attrs, func.span)


def _strip_scope(seq, kept, kills: frozenset[int]):
    """The SeqExpr without the new kills, or None when it has none."""
    changed = False
    blocks = []
    for block in ir.items(seq.blocks):
        bindings = []
        block_changed = False
        for binding in ir.items(block.bindings):
            value = binding.value
            kind = type(value)
            if (
                kind is ir.Call
                and type(value.op) is ir.Op
                and value.op.__chandle__() in kills
                and binding.var.__chandle__() not in kept
            ):
                block_changed = True
                continue
            new_value = None
            if kind is ir.If:
                true_b = _strip_scope(value.true_branch, kept, kills)
                false_b = _strip_scope(value.false_branch, kept, kills)
                if true_b is not None or false_b is not None:
                    new_value = ir.make_if(
                        value.cond,
                        value.true_branch if true_b is None else true_b,
                        value.false_branch if false_b is None else false_b,
                        value.span,
                    )
                    ir.update_type(new_value, value.ty)
            elif kind is ir.Function:
                body = _strip_scope(value.body, kept, kills)
                if body is not None:
                    new_value = ir.make_function(
                        value.params, body, value.ret_ty, value.is_pure, value.attrs, value.span
                    )
            if new_value is not None:
                block_changed = True
                binding = (
                    ir.make_match_cast(binding.var, new_value, binding.ty, binding.span)
                    if type(binding) is ir.MatchCast
                    else ir.make_var_binding(binding.var, new_value, binding.span)
                )
            bindings.append(binding)
        if block_changed:
            changed = True
            make = (
                ir.make_dataflow_block if type(block) is ir.DataflowBlock else ir.make_binding_block
            )
            block = make(bindings, block.span)
        if bindings:
            blocks.append(block)
    if not changed:
        return None
    new_seq = ir.make_seq_expr(blocks, seq.body, seq.span)
    ir.update_type(new_seq, seq.ty)
    return new_seq
