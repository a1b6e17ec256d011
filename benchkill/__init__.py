"""benchkill: benchmarking and profiling of TVM Relax's KillAfterLastUse pass."""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

# Public names and the module that owns each.  Imported lazily so that
# ``import benchkill`` (and ``benchkill --help``) stays cheap and a broken
# optional part cannot break the rest.
_EXPORTS = {
    "BenchkillError": "benchkill.errors",
    "KillAfterLastUse": "benchkill.passes",
    "NaiveKillAfterLastUse": "benchkill.passes",
    "build_pipeline": "benchkill.execution.pipeline",
    "generate": "benchkill.inputs.families",
    "FAMILIES": "benchkill.inputs.families",
    "measure_vm": "benchkill.execution.vm_measure",
    "VMResult": "benchkill.execution.vm_measure",
    "estimate_memory": "benchkill.execution.estimate",
    "MemoryEstimate": "benchkill.analysis.liveness",
    "verify_kills": "benchkill.analysis.verifier",
    "Violation": "benchkill.analysis.kill_rules",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'benchkill' has no attribute {name!r}") from None
    return getattr(import_module(module), name)
