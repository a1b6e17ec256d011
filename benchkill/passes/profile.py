"""Where benchkill's pass spends its time: CPU time per binding of each step.

Runs the steps of :func:`.kill_after_last_use.kill_function` one by one on a
function, several times, and reports the minimum CPU time (``time.process_time``, which
other jobs on a shared machine disturb far less than wall time) of each step divided by
the number of bindings.  The steps: the sweep (with canonicalization's plan), the plan
(deciding the kills and making them), the rebuild (with canonicalization's rewrite),
freeing the sweep's tables and wrappers as the pass returns; a function the sweep hands
to the fallback (:mod:`.fallback`, TVM's pass) has the sweep and the fallback.
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass

from benchkill.passes import fallback
from benchkill.passes.canonicalize import Unsupported
from benchkill.passes.last_use import NeedsTVMCanonicalization, sweep_function
from benchkill.passes.plan import plan_kills
from benchkill.passes.rewrite import rewrite_function

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
