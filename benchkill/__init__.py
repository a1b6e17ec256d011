"""benchkill: benchmarking and profiling of TVM Relax's KillAfterLastUse pass.

The public names below are imported lazily, on first access, so that ``import benchkill``
and ``benchkill --help`` import no TVM.  The package is layered (see the README's Layout
section): ``relax`` (TVM plumbing), ``passes``, ``analysis``, ``inputs``, ``execution``,
``fuzz``, ``bench``, ``results``, ``reporting``, ``cli``; ``errors``, ``files``,
``hooks``, ``stats`` and ``vocabulary`` (the names of kill variants, exec modes, suites...)
are imported by all of them.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

#: Public name -> the module that defines it.  No module of the package has the name
#: of an export (``tests/test_public_api.py``), so importing one cannot shadow another.
_EXPORTS = {
    "BenchkillError": "benchkill.errors",
    "KillAfterLastUse": "benchkill.passes.kill_after_last_use",
    "NaiveKillAfterLastUse": "benchkill.passes.naive",
    "build_pipeline": "benchkill.execution.pipeline",
    "generate": "benchkill.inputs.families",
    "FAMILIES": "benchkill.inputs.families",
    "measure_vm": "benchkill.execution.vm_measure",
    "VMResult": "benchkill.execution.vm_measure",
    "VMOptions": "benchkill.execution.vm_options",
    "estimate_memory": "benchkill.execution.estimate",
    "MemoryEstimate": "benchkill.analysis.liveness",
    "verify_kills": "benchkill.analysis.verifier",
    "Violation": "benchkill.analysis.kill_rules",
    "load_model": "benchkill.inputs.sources",
    "Workload": "benchkill.inputs.workload_spec",
    "explain_peak": "benchkill.execution.measured_peak",
    "PeakExplanation": "benchkill.execution.explain",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'benchkill' has no attribute {name!r}") from None
    value = getattr(import_module(module), name)
    globals()[name] = value  # later accesses skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
