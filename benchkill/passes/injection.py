"""benchkill's test hooks: a deliberately worse pass, to check that the alerts catch it.

Two environment variables (named in :mod:`benchkill.hooks`), read when the pass is
made, off when unset, and nothing but one ``is None`` test per call when off:

``BENCHKILL_INJECT_SLOWDOWN=F`` (F > 0)
    After each function, the pass runs again on part of it: ``int(F)`` more times on
    the whole function, then once on a function made of its first ``round(frac(F) *
    N)`` top-level bindings (of N).  The extra work is the pass's own work on about F
    times the input, so instruction counts and time both grow by about F (measured:
    README, "trust"), and deterministically: the same input always gets the same
    extra work.  The output is the pass's ordinary output.
``BENCHKILL_INJECT_MISSED_KILLS=F`` (0 < F <= 1)
    The output loses that fraction of its kill bindings, evenly spaced and always the
    same ones: kill number ``i`` (0-based, in program order, ``If`` branches
    included) is dropped when ``floor((i + 1) * F) > floor(i * F)``; F = 0.25 drops
    every 4th.  The program still runs and computes the same values; it holds more
    memory, which the VM peak-memory alerts must report.

The pass applies them through :func:`from_env`; nothing else in benchkill calls this
module.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass

from tvm import relax

from benchkill.errors import BenchkillError
from benchkill.hooks import MISSED_KILLS_ENV, SLOWDOWN_ENV
from benchkill.relax import ffi as ir
from benchkill.relax import ops


@dataclass(frozen=True)
class Injection:
    """The test hooks in effect: extra work ``slowdown``, fraction ``missed_kills``."""

    slowdown: float = 0.0
    missed_kills: float = 0.0

    def apply(self, func, result, run: Callable):
        """``result`` (the pass's output for ``func``) with the hooks applied.

        ``run(f)`` is the pass on one function, with the pass's options.
        """
        if self.slowdown:
            slow_down(func, self.slowdown, run)
        if self.missed_kills:
            result = drop_kills(result, self.missed_kills)
        return result


def _fraction(name: str, low_open: float, high: float | None) -> float:
    raw = os.environ.get(name, "")
    try:
        value = float(raw)
    except ValueError:
        raise BenchkillError(f"{name}={raw!r} is not a number") from None
    if not (value > low_open and (high is None or value <= high)) or not math.isfinite(value):
        bound = f"in (0, {high:g}]" if high is not None else "> 0"
        raise BenchkillError(f"{name}={raw!r}: must be {bound}")
    return value


def from_env() -> Injection | None:
    """The hooks set in the environment, or None when none is (the usual case)."""
    if not os.environ.get(SLOWDOWN_ENV) and not os.environ.get(MISSED_KILLS_ENV):
        return None
    slowdown = _fraction(SLOWDOWN_ENV, 0.0, None) if os.environ.get(SLOWDOWN_ENV) else 0.0
    missed = _fraction(MISSED_KILLS_ENV, 0.0, 1.0) if os.environ.get(MISSED_KILLS_ENV) else 0.0
    return Injection(slowdown, missed)


# --- BENCHKILL_INJECT_SLOWDOWN -------------------------------------------------------


def slow_down(func, fraction: float, run: Callable) -> None:
    """The pass's own work on about ``fraction`` times ``func`` (results thrown away)."""
    whole = int(fraction)
    for _ in range(whole):
        run(func)
    part = fraction - whole
    if part > 0:
        prefix = prefix_function(func, round(part * count_top_level(func)))
        if prefix is not None:
            run(prefix)


def count_top_level(func) -> int:
    """Bindings of the function body's blocks (not those nested in ``If`` branches)."""
    return sum(ir.array_size(b.bindings) for b in ir.items(func.body.blocks))


def prefix_function(func, count: int):
    """A function of ``func``'s parameters and its first ``count`` top-level bindings
    (blocks keep their kind), returning ``()``; None when ``count`` is 0.  Reads only
    those bindings, so building it costs in proportion to ``count``."""
    if count <= 0:
        return None
    blocks = []
    for block in ir.items(func.body.blocks):
        size = ir.array_size(block.bindings)
        take = [ir.array_get(block.bindings, i) for i in range(min(size, count))]
        make = ir.make_dataflow_block if type(block) is ir.DataflowBlock else ir.make_binding_block
        blocks.append(make(take, None))
        count -= len(take)
        if count == 0:
            break
    unit = relax.TupleType([])
    body = ir.make_seq_expr(blocks, relax.Tuple([]), None)
    ir.update_type(body, unit)  # typed as TVM's BlockBuilder would, for the pass's checks
    return ir.make_function(func.params, body, unit, func.is_pure, func.attrs, None)


# --- BENCHKILL_INJECT_MISSED_KILLS ---------------------------------------------------


def drop_kills(func, fraction: float):
    """``func`` without the kills :data:`fraction` selects (see the module docstring)."""
    state = {"index": 0, "fraction": fraction, "kills": {ops.op_handle(k) for k in ops.KILLS}}
    body = _drop_in_seq(func.body, state)
    if body is None:
        return func
    return ir.make_function(func.params, body, func.ret_ty, func.is_pure, func.attrs, func.span)


def _is_kill(binding, kills: set) -> bool:
    value = binding.value
    return type(value) is ir.Call and type(value.op) is ir.Op and ir.handle(value.op) in kills


def _drop_in_seq(seq, state):
    """The SeqExpr with the selected kills removed, or None when nothing changed."""
    changed = False
    blocks = []
    for block in ir.items(seq.blocks):
        kept = []
        for binding in ir.items(block.bindings):
            if _is_kill(binding, state["kills"]):
                i, f = state["index"], state["fraction"]
                state["index"] = i + 1
                if math.floor((i + 1) * f) > math.floor(i * f):
                    changed = True
                    continue
            elif type(binding.value) is ir.If:
                rebuilt = _drop_in_if(binding, state)
                if rebuilt is not None:
                    binding, changed = rebuilt, True
            kept.append(binding)
        make = ir.make_dataflow_block if type(block) is ir.DataflowBlock else ir.make_binding_block
        blocks.append(make(kept, None))
    if not changed:
        return None
    new_seq = ir.make_seq_expr(blocks, seq.body, seq.span)
    ir.update_type(new_seq, seq.ty)
    return new_seq


def _drop_in_if(binding, state):
    """The If binding with kills dropped in its branches, or None when none was."""
    value = binding.value
    true_branch = _drop_in_seq(value.true_branch, state)
    false_branch = _drop_in_seq(value.false_branch, state)
    if true_branch is None and false_branch is None:
        return None
    new_if = ir.make_if(
        value.cond,
        true_branch or value.true_branch,
        false_branch or value.false_branch,
        value.span,
    )
    ir.update_type(new_if, value.ty)
    return ir.make_var_binding(binding.var, new_if, binding.span)
