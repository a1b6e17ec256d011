"""TVM's default Relax build pipeline (apache-tvm 0.27), split at its kill step.

``tvm.relax.pipeline.default_build_pipeline`` runs :func:`before_kill`, then
``KillAfterLastUse``, then :func:`after_kill`.  The stage lists are pure TVM plumbing;
:mod:`benchkill.execution.pipeline` puts a chosen kill pass between them and the
``model`` input family (:mod:`benchkill.inputs.models`) stops before the kill.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tvm


def before_kill() -> list[tvm.ir.transform.Pass]:
    """The default pipeline's passes before KillAfterLastUse, in order."""
    from tvm import relax

    transform = relax.transform
    return [
        relax.backend.DispatchSampling(),
        relax.backend.DispatchSortScan(),
        transform.LegalizeOps(),
        transform.RewriteDataflowReshape(),
        transform.ToNonDataflow(),
        transform.RemovePurityChecking(),
        transform.CallTIRRewrite(),
        transform.StaticPlanBlockMemory(),
        transform.RewriteCUDAGraph(),
        transform.LowerAllocTensor(),
    ]


def after_kill() -> list[tvm.ir.transform.Pass]:
    """The default pipeline's passes after KillAfterLastUse, in order."""
    from tvm import relax

    transform = relax.transform
    return [
        transform.LowerRuntimeBuiltin(),
        transform.ComputePrimValue(),
        transform.VMShapeLower(),
        transform.AttachGlobalSymbol(),
    ]


def lower_to_kill_input(mod: tvm.IRModule) -> tvm.IRModule:
    """``mod`` lowered by the default pipeline up to (not including) its kill step.

    This is the form KillAfterLastUse sees inside ``relax.build``.
    """
    import tvm

    from benchkill.relax.native_log import tvm_log_captured

    with tvm_log_captured():
        return tvm.transform.Sequential(before_kill())(mod)
