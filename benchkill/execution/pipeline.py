"""TVM's default Relax build pipeline with its kill step chosen by name.

``relax.build(mod, "llvm", relax_pipeline=build_pipeline(kill=...), exec_mode=...)``
compiles ``mod`` exactly as ``relax_pipeline="default"`` does in apache-tvm 0.27
(``tvm.relax.pipeline.default_build_pipeline``), except for the KillAfterLastUse step.
"""

from __future__ import annotations

import tvm
from tvm import relax

from benchkill.errors import BenchkillError
from benchkill.relax.lowering import after_kill, before_kill
from benchkill.relax.lowering import lower_to_kill_input as lower_to_kill_input
from benchkill.relax.native_log import tvm_log_captured
from benchkill.vocabulary import KILLS, kill_arg

#: The values ``kill=`` takes: the names of :data:`benchkill.vocabulary.KILL_VARIANTS`,
#: None for the build without a kill step.
KILL_VARIANTS = tuple(kill_arg(name) for name in KILLS)


def check_kill_variant(kill: object) -> None:
    """Raise BenchkillError unless ``kill`` names a kill variant (:data:`KILL_VARIANTS`)."""
    if kill not in KILL_VARIANTS:
        names = ", ".join(repr(k) for k in KILL_VARIANTS)
        raise BenchkillError(f"unknown kill variant {kill!r}; expected one of {names}")


def kill_pass(kill: str | None) -> tvm.ir.transform.Pass | None:
    """The pass that stands for the kill variant ``kill`` (None: no kill step)."""
    check_kill_variant(kill)
    if kill is None:
        return None
    if kill == "tvm":
        return relax.transform.KillAfterLastUse()
    from benchkill.passes import KillAfterLastUse

    if kill == "benchkill":
        return KillAfterLastUse()
    if kill == "beyond":
        return KillAfterLastUse(tvm_compatible=False)
    return KillAfterLastUse(exclude_null_value=False)


def build_pipeline(kill: str | None = "benchkill") -> tvm.ir.transform.Pass:
    """TVM's default build pipeline of this version with its kill step replaced.

    Parameters
    ----------
    kill : {"tvm", "benchkill", "beyond", "legacy", None}
        Which KillAfterLastUse to run after LowerAllocTensor; None runs none.
    """
    step = kill_pass(kill)
    middle = [] if step is None else [step]

    @tvm.transform.module_pass(opt_level=0, name=f"benchkill_pipeline_{kill}")
    def _pipeline(mod: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:
        with tvm_log_captured():
            return tvm.transform.Sequential(before_kill() + middle + after_kill())(mod)

    return _pipeline
