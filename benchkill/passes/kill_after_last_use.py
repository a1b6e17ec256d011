"""benchkill's KillAfterLastUse: TVM's pass, reimplemented for speed.

The steps, each in its own module:

0. :mod:`.canonicalize` -- TVM's CanonicalizeBindings preprocessing, only for
   functions where the sweep shows it can change something;
1. :mod:`.last_use` -- one forward sweep: last use of every variable, in dicts and sets;
2. :mod:`.plan` -- which kills go after which binding;
3. :mod:`.rewrite` -- one rebuild that reuses every unchanged binding and block.
"""

from __future__ import annotations

import gc

import tvm
from tvm import relax

from benchkill.errors import BenchkillError
from benchkill.passes import injection
from benchkill.passes.canonicalize import canonicalize
from benchkill.passes.last_use import sweep_function
from benchkill.passes.plan import plan_kills
from benchkill.passes.rewrite import rewrite_function
from benchkill.relax import ffi as ir


def kill_function(func, *, exclude_null_value: bool = True, tvm_compatible: bool = True):
    """Insert kills after last uses in one Relax function (see the module docstring).

    Python's cyclic garbage collector is paused meanwhile: the pass creates a few
    wrapper objects per binding and no reference cycles, and on large functions the
    collector's repeated full scans of those objects cost more than the pass itself.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _kill_after_last_use(func, exclude_null_value, tvm_compatible)
    finally:
        if was_enabled:
            gc.enable()


def _kill_after_last_use(func, exclude_null_value: bool, tvm_compatible: bool):
    sweep = sweep_function(func)
    if sweep.needs_canonicalize:
        func = canonicalize(func, sweep)
        sweep = sweep_function(func)
    plan = plan_kills(sweep, exclude_null_value=exclude_null_value, tvm_compatible=tvm_compatible)
    return rewrite_function(func, sweep.root, plan, ir.KillFactory())


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
