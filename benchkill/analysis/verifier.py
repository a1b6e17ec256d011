"""Check the kills of a lowered Relax module: where each one is, and (optionally) none missing.

:func:`verify_kills` walks each Relax function and reports a :class:`Violation` for each
rule of :mod:`benchkill.analysis.kill_rules` that a kill, a use or a scope end breaks; the
variables CanonicalizeBindings merges count as one object, their *root* (see there).

The check is :class:`benchkill.analysis.kill_checker.KillChecker`: the symbolic VM of
:mod:`benchkill.analysis.vm_model` (the walk the liveness estimate and the trace's walker
share) following every path through the ``If`` branches of each function, in time linear
in the number of bindings times the ``If`` nesting depth.
"""

from __future__ import annotations

import tvm
from tvm import relax

from benchkill.analysis.kill_checker import KillChecker
from benchkill.analysis.kill_rules import RULES, Violation
from benchkill.errors import BenchkillError

__all__ = ["RULES", "Violation", "verify_kills"]


def verify_kills(mod: tvm.IRModule, expect_complete: bool = False) -> list[Violation]:
    """Every kill-rule violation in the Relax functions of ``mod``, function by function.

    Parameters
    ----------
    mod : tvm.IRModule
        A lowered module (typically the output of a KillAfterLastUse pass).
    expect_complete : bool
        Also report missed kills.  *Complete* means: every storage (a variable bound to
        ``R.memory.alloc_storage`` / ``R.vm.alloc_storage``) and every tensor (a TensorType
        variable that has a VM register) that is defined in a scope (the function body or an
        ``If`` branch), is used at least once, and is not part of that scope's result, is
        killed on every path before the scope ends.  Kills inside both branches of a nested
        ``If`` count; aliases count as the variable they rename.  A never-used variable has
        no last use and is not required to be killed; promptness (how soon after the last
        use) is not checked.
    """
    if not isinstance(mod, tvm.IRModule):
        raise BenchkillError(f"verify_kills expects a tvm.IRModule, got {type(mod).__name__}")
    violations: list[Violation] = []
    for gvar, func in mod.functions_items():
        if isinstance(func, relax.Function):
            checker = KillChecker(mod, gvar.name_hint, expect_complete)
            violations.extend(checker.check(func))
    return violations
