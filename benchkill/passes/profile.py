"""Where benchkill's pass spends its time: CPU time per binding of each step.

Runs the steps of :func:`.kill_after_last_use.kill_function` one by one on a
function, several times, and reports the minimum CPU time (``time.process_time``, which
other jobs on a shared machine disturb far less than wall time) of each step divided by
the number of bindings.  The steps: the sweep (with canonicalization's plan), the plan
(deciding the kills and making them), the rebuild (with canonicalization's rewrite),
freeing the sweep's tables and wrappers as the pass returns; a function the sweep hands
to the fallback (:mod:`.fallback`, TVM's pass) has the sweep and the fallback.

:func:`floor_work` is the floor of any exact Python pass on a function: the FFI work it
cannot skip (reads, re-inferred calls, kill bindings);
:func:`benchkill.bench.suites.pass_suite.time_floor` times it beside TVM's and benchkill's
pass.
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass

from tvm import relax

from benchkill.passes import fallback
from benchkill.passes.canonicalize import Unsupported, _structural_equal
from benchkill.passes.last_use import NeedsTVMCanonicalization, sweep_function
from benchkill.passes.plan import kill_recipes, plan_kills
from benchkill.passes.rewrite import rewrite_function
from benchkill.relax import ffi as ir

STEPS = ("sweep", "plan", "rebuild", "free", "fallback")


@dataclass(frozen=True)
class StepProfile:
    """Minimum CPU seconds of each step over the repeats, for ``bindings`` bindings."""

    bindings: int
    seconds: dict[str, float]

    def per_binding_us(self) -> dict[str, float]:
        return {step: s / self.bindings * 1e6 for step, s in self.seconds.items()}


def profile_function(func, bindings: int, repeats: int = 3, clock=time.process_time) -> StepProfile:
    """Time each step of the pass on ``func`` (a Relax function with ``bindings`` bindings)."""
    best: dict[str, float] = {}
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            times = {}
            t = clock()
            try:
                sweep = sweep_function(func)
                times["sweep"] = clock() - t
                t = clock()
                plan = plan_kills(sweep, exclude_null_value=True, tvm_compatible=True)
                times["plan"] = clock() - t
                t = clock()
                result = rewrite_function(func, sweep, plan)
                times["rebuild"] = clock() - t
                t = clock()
                del sweep, plan  # what the pass frees when it returns
                times["free"] = clock() - t
                del result
            except (NeedsTVMCanonicalization, Unsupported):  # handed to the fallback
                times.setdefault("sweep", clock() - t)  # (when the sweep handed it)
                t = clock()
                fallback.kill_function(func, exclude_null_value=True, tvm_compatible=True)
                times["fallback"] = clock() - t
            for step, seconds in times.items():
                best[step] = min(best.get(step, seconds), seconds)
    finally:
        if was_enabled:
            gc.enable()
    return StepProfile(bindings, {s: best[s] for s in STEPS if s in best})


# -- the floor ------------------------------------------------------------------------
@dataclass(frozen=True)
class FloorWork:
    """The FFI work an exact Python pass cannot skip on one function (see :func:`floor_work`)."""

    func: object
    scopes: tuple  # the SeqExprs, the function body first
    trivial: int  # bindings canonicalization removes (trivial rebindings ``lv = alloc``, ...)
    rebuilt: tuple  # (call, op, var, new arguments) of each call rebuilt and re-inferred
    kills: tuple  # (kill operator, variable, whether its type is read) of each kill inserted

    def run(self):
        """Do that work once (its result is a function, never used), with the collector
        paused as the pass pauses it."""
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return _floor(self)
        finally:
            if was_enabled:
                gc.enable()


def floor_work(func) -> FloorWork:
    """What benchkill's pass must do through the FFI on ``func``, whatever its Python around
    it: read every binding (the item, ``.var``, ``.value``, a call's ``.op`` and each
    argument, handles), rebuild and re-infer every call whose arguments canonicalization
    substitutes (as TVM's ``ReEmitBinding`` does, rule 1 of :mod:`.canonicalize`), read
    the type of each variable killed but a storage (the kill's kind follows it, rule 7),
    build the kill bindings, then
    one block per scope and the function.  Found by running the pass's own sweep and plan
    (outside any timing); a function the sweep hands to the fallback raises
    :class:`NeedsTVMCanonicalization` or :class:`Unsupported`."""
    sweep = sweep_function(func)
    plan = plan_kills(sweep, exclude_null_value=True, tvm_compatible=True, make_kills=kill_recipes)
    kills = [kill for _, scope_kills in plan.values() for kill in scope_kills]
    rebuilt = tuple(entry for scope in sweep.scopes for entry in scope.rebuilt.values())
    return FloorWork(
        func,
        tuple(scope.seq for scope in sweep.scopes),
        sum(len(scope.removed) for scope in sweep.scopes),
        rebuilt,
        tuple(kills),
    )


def _floor(work: FloorWork):
    from benchkill.passes.plan import _kill_makers

    void, _, empty, new_var, _, new_call, new_binding = _kill_makers()
    array_get, array_size = ir.array_get, ir.array_size
    equal, missing = _structural_equal, ir.missing_type()
    func = work.func
    builder = relax.BlockBuilder()
    builder.begin_scope(func.params)
    made = []  # the rebuilt calls' and the kills' bindings
    for call, op, var, args in work.rebuilt:
        new = ir.make_call(missing, op, args, call.attrs, call.ty_args, call.span)
        new = ir.normalize(builder, new)
        a, b = var.ty, new.ty
        if a.__chandle__() != b.__chandle__():
            equal(a, b, False, False)
        made.append(ir.make_var_binding(var, new, None))
    for op, var, typed in work.kills:
        if typed:  # the kill's kind follows the variable's type (rule 7)
            _ = var.ty
        call = new_call(void, op, (var,), None, empty, None)
        made.append(new_binding(new_var("_", void, None), call, None))
    body = None
    for seq in reversed(work.scopes):  # the function body last, with what was made
        out = []
        for block in ir.items(seq.blocks):
            bindings = ir.items(block.bindings)
            for binding in bindings:
                value, var = binding.value, binding.var
                var.__chandle__()
                kind = type(value)
                if kind is ir.Call:
                    op = value.op
                    if type(op) is ir.Op:
                        op.__chandle__()
                    args = value.args
                    for i in range(array_size(args)):
                        arg = array_get(args, i)
                        if type(arg) is ir.Var:
                            arg.__chandle__()
            out.extend(bindings)
        if seq is work.scopes[0]:
            out.extend(made)
        body = ir.make_seq_expr([ir.make_binding_block(out, None)], seq.body, None)
        ir.update_type(body, seq.ty)
    return ir.make_function(func.params, body, func.ret_ty, func.is_pure, func.attrs, func.span)
