"""The parent's side of a VM measurement: lower, build and export, in the caller's process.

No module travels as text: :func:`build_library` applies the build pipeline (kill step
chosen by name) to the module the caller holds, builds it with ``relax.build`` and
exports the executable as a shared library (``export_library``, which links with the
system's C compiler); the measuring child (:mod:`benchkill.execution.vm_task`) loads that
library and runs it.  So any module ``relax.build`` accepts here can be measured,
including tensor constants (the executable's constant pool carries them) and IR whose
TVMScript does not round-trip (TVM 0.27 prints ``-inf`` as ``R.const("-inf", ...)``,
which its parser rejects).  The lowered module, the one ``relax.build`` compiled, stays
in the parent: the trace is attributed to it there (:mod:`.attribution`).

A build or export failure is a result (:class:`Built` with an error), never raised: the
pre-fix ``kill="legacy"`` compiled build is expected to fail.  A crash inside TVM's build
would take the caller down with it: the runs, where crashes of real programs happen (a
freed buffer read), stay in the child.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchkill.execution.child import error_text
from benchkill.relax.native_log import tvm_log_captured


@dataclass(frozen=True)
class Built:
    """What :func:`build_library` made: ``lowered`` is the module ``relax.build`` compiled
    (None if lowering failed), ``seconds`` the time of lowering and building (not the
    export); ``error`` and ``stage`` ("build" or "export") say why there is no library;
    ``kill_input`` the module the kill step received (None in the re-kill scenario)."""

    lowered: Any = None
    seconds: float | None = None
    error: str | None = None
    stage: str | None = None
    kill_input: Any = None

    @property
    def ok(self) -> bool:
        return self.error is None


def lower(mod: Any, kill: str | None, rekill: bool = False) -> tuple[Any, Any, Any]:
    """``mod`` lowered as ``relax.build`` lowers it with the kill step ``kill`` (the stages
    of :func:`benchkill.build_pipeline` under the target), the module the kill step
    received (None with ``rekill``), and the target: what the VM codegen compiles."""
    import tvm
    from tvm import relax

    from benchkill.execution.pipeline import kill_pass
    from benchkill.relax.lowering import after_kill, before_kill

    target = tvm.target.Target("llvm")
    step = kill_pass(kill)
    if rekill:
        # The upstream #20200 scenario: TVM's default pipeline, then the kill pass again
        # on its output, then a build that lowers nothing more ("zero").
        lowered = relax.get_default_pipeline(target)(mod)
        if step is not None:
            lowered = step(lowered)
        with target:
            return relax.get_pipeline("zero")(lowered), None, target
    with target:
        kill_input = tvm.transform.Sequential(before_kill())(mod)
        killed = kill_input if step is None else step(kill_input)
        return tvm.transform.Sequential(after_kill())(killed), kill_input, target


def build_library(
    mod: Any, kill: str | None, exec_mode: str, path: Path, *, rekill: bool = False
) -> Built:
    """Lower and build ``mod`` for LLVM in ``exec_mode``, export the executable to
    ``path``; failures are returned (module docstring)."""
    from tvm import relax

    t0 = time.perf_counter()
    try:
        with tvm_log_captured():
            lowered, kill_input, target = lower(mod, kill, rekill)
            ex = relax.build(lowered, target=target, relax_pipeline=None, exec_mode=exec_mode)
    except Exception as exc:  # noqa: BLE001 - a failed build is a result
        return Built(error=error_text(exc), stage="build")
    seconds = time.perf_counter() - t0
    try:
        ex.export_library(str(path))
    except Exception as exc:  # noqa: BLE001 - e.g. no C compiler: a result too
        what = "exporting the executable as a shared library (it links with a C compiler)"
        return Built(lowered, seconds, f"{what}: {error_text(exc)}", "export", kill_input)
    return Built(lowered, seconds, kill_input=kill_input)
