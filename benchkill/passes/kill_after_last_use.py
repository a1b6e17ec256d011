"""benchkill's KillAfterLastUse: TVM's pass, reimplemented for speed.

The steps, each in its own module:

1. :mod:`.last_use` -- one forward sweep: last use of every variable, in dicts and sets,
   with TVM's CanonicalizeBindings preprocessing (:mod:`.canonicalize`) planned on the
   way, so the tables describe the canonicalized function;
2. :mod:`.plan` -- which kills go after which binding, and the kill bindings;
3. :mod:`.rewrite` -- one rebuild that applies the canonicalization, inserts the kills
   and reuses every unchanged binding and block.

The sweep (and the plan and rebuild, for the rules they check) detects, cheaply, every
rule by which TVM's pass would rebuild a function differently (:mod:`.canonicalize` lists
them, with their TVM sources); such a function is handed, whole, to :mod:`.fallback`, which
computes TVM's result in every mode, exactly and whatever the caller's PassContext.
"""

from __future__ import annotations

import gc

import tvm
from tvm import relax

from benchkill.errors import BenchkillError
from benchkill.passes import fallback, injection
from benchkill.passes.canonicalize import Unsupported
from benchkill.passes.last_use import NeedsTVMCanonicalization, sweep_function
from benchkill.passes.plan import plan_kills
from benchkill.passes.rewrite import rewrite_function


def kill_function(func, *, exclude_null_value: bool = True, tvm_compatible: bool = True):
    """Insert kills after last uses in one Relax function (see the module docstring).

    Python's cyclic garbage collector is paused meanwhile: the pass creates a few
    wrapper objects per binding, and on large functions the collector's repeated scans
    of them would cost more than the pass itself.  Nothing the pass builds refers to
    itself, so all of it is freed by reference counting when the pass returns, and no
    collection is left pending for the first allocation after ``gc.enable()``.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _kill_after_last_use(func, exclude_null_value, tvm_compatible)
    finally:
        if was_enabled:
            gc.enable()


def _kill_after_last_use(func, exclude_null_value: bool, tvm_compatible: bool):
    try:
        sweep = sweep_function(func)
        plan = plan_kills(
            sweep, exclude_null_value=exclude_null_value, tvm_compatible=tvm_compatible
        )
        return rewrite_function(func, sweep, plan)
    except (NeedsTVMCanonicalization, Unsupported):
        return fallback.kill_function(
            func, exclude_null_value=exclude_null_value, tvm_compatible=tvm_compatible
        )


@relax.transform.function_pass(opt_level=0, name="benchkill.KillAfterLastUse")
class _KillAfterLastUsePass:
    """benchkill's KillAfterLastUse as a Relax function pass."""

    def __init__(self, exclude_null_value: bool, tvm_compatible: bool) -> None:
        self.exclude_null_value = exclude_null_value
        self.tvm_compatible = tvm_compatible
        self.injection = injection.from_env()  # the test hooks; None when unset

    def transform_function(self, func, _mod, _ctx):
        result = self._kill(func)
        return result if self.injection is None else self.injection.apply(func, result, self._kill)

    def _kill(self, func):
        return kill_function(
            func, exclude_null_value=self.exclude_null_value, tvm_compatible=self.tvm_compatible
        )


class _CheckedPass(_KillAfterLastUsePass):  # type: ignore[misc,valid-type]
    def __call__(self, mod):
        if not isinstance(mod, tvm.IRModule):
            raise BenchkillError(
                f"KillAfterLastUse expects a tvm.IRModule, got {type(mod).__name__}"
            )
        return super().__call__(mod)


def KillAfterLastUse(  # noqa: N802  (named like the TVM pass it replaces)
    exclude_null_value: bool = True, tvm_compatible: bool = True
) -> tvm.ir.transform.Pass:
    """A Relax function pass usable wherever ``relax.transform.KillAfterLastUse()`` is.

    Parameters
    ----------
    exclude_null_value : bool
        Never kill variables bound to ``R.null_value()`` (the upstream fix, TVM PR
        #20267).  False reproduces the pre-fix behaviour, whose ``R.vm.kill_object``
        on such a variable crashes ``exec_mode="compiled"`` code generation.
    tvm_compatible : bool
        Give exactly the output of TVM's C++ pass.  False goes beyond it: kills are
        kept after nested ``If`` bindings, so programs with control flow free memory.
    """
    return _CheckedPass(bool(exclude_null_value), bool(tvm_compatible))
