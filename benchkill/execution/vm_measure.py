"""Build a Relax module for LLVM, run it on the VM, and measure time and peak memory.

:func:`measure_vm` builds with ``relax.build(mod, "llvm",
relax_pipeline=build_pipeline(kill=...), exec_mode=...)`` in the caller's process and
exports the executable as a shared library (:mod:`benchkill.execution.vm_build`: no
module travels as text, so tensor constants and IR whose TVMScript does not round-trip
are measured too), then runs the function in a fresh child process that loads the library
(task ``"vm"`` of :mod:`benchkill.execution.child`, done by
:mod:`benchkill.execution.vm_task`): a warm-up run gives the outputs, ``repeat`` timed
runs follow with a warm allocator pool, then ``peak_repeat`` runs, each on a fresh VM with
an empty pool, give the peak (method in :mod:`benchkill.execution.peak`), and in bytecode
mode one more instrumented run gives the memory timeline.  A build or run failure, or a
crash of the child, is recorded in :attr:`VMResult.error`, never raised: the pre-fix
``kill="legacy"`` compiled build is expected to fail.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchkill.analysis.liveness import check_function
from benchkill.errors import BenchkillError
from benchkill.execution.attribution import summarize_trace
from benchkill.execution.child import read_result, run_task, work_dir
from benchkill.execution.peak import VMEvent
from benchkill.execution.pipeline import check_kill_variant
from benchkill.execution.trace import TraceEvent, TraceSummary
from benchkill.execution.vm_build import Built, build_library
from benchkill.execution.vm_options import VMOptions, merge_options
from benchkill.execution.vm_task import EXPORTED
from benchkill.files import copy_new


@dataclass(frozen=True, eq=False)
class VMResult:
    """What one :func:`measure_vm` call measured.

    ``seconds`` are the run times of the timed runs (after one warm-up); ``peaks`` the
    resident memory each of ``peak_repeat`` runs added at its peak, ``peak_bytes``
    their median; ``floor_bytes`` the same measurement around nothing (the method's
    floor); ``outputs`` the tensors of the result, tuples flattened; ``timeline`` the
    resident size at each VM call of one run (bytecode mode only; empty in compiled
    mode, which has no instrument hook).  ``build_seconds`` is the time of lowering and
    ``relax.build`` in the caller's process.  ``stage`` says where a failure happened:
    "build", "export" (the shared library, or the copy to ``export``), "load" (the child
    could not load the library), "run" or "child" (the child crashed or timed out).

    With ``trace=True``: ``trace`` holds the allocation trace of one more run, built and
    run in a child of its own (:class:`~benchkill.execution.trace.TraceEvent`: sequence
    number, kind, object, bytes, the storage it lives in, Relax function and variable),
    ``trace_summary`` its replayed peaks, the live set at its peak and the waste of each
    variable (:class:`~benchkill.execution.trace.TraceSummary`), ``trace_error`` why
    there is no trace when the traced child failed (the measurement is still valid).
    """

    ok: bool
    error: str | None
    exec_mode: str
    kill: str | None
    memory_cfg: str
    build_seconds: float | None = None
    seconds: tuple[float, ...] = ()
    peak_bytes: int | None = None
    peaks: tuple[int, ...] = ()
    floor_bytes: int | None = None
    outputs: tuple[np.ndarray, ...] = ()
    timeline: tuple[VMEvent, ...] = ()
    stage: str | None = None
    trace: tuple[TraceEvent, ...] = ()
    trace_summary: TraceSummary | None = None
    trace_error: str | None = None


def _input_specs(inputs: Sequence[Any]) -> tuple[list[dict[str, Any]], dict[str, np.ndarray]]:
    """JSON descriptions of the inputs and the arrays to store in inputs.npz."""
    specs: list[dict[str, Any]] = []
    arrays: dict[str, np.ndarray] = {}
    for i, value in enumerate(inputs):
        if isinstance(value, np.ndarray):
            specs.append({"kind": "array"})
            arrays[f"arg{i}"] = np.ascontiguousarray(value)
        elif isinstance(value, (bool, int, float)):
            specs.append({"kind": "scalar", "value": value})
        elif isinstance(value, np.generic):
            specs.append({"kind": "scalar", "value": value.item()})
        else:
            raise BenchkillError(
                f"input {i} is a {type(value).__name__}; expected a numpy array or a "
                "Python bool, int or float"
            )
    return specs, arrays


def measure_vm(
    mod: Any,
    inputs: Sequence[Any],
    options: VMOptions | None = None,
    *,
    kill: str | None = "benchkill",
    trace: bool = False,
    export: str | os.PathLike[str] | None = None,
    **deprecated: Any,
) -> VMResult:
    """Build ``mod`` for LLVM with the kill variant ``kill``, run ``func``, measure it.

    Invalid options raise BenchkillError; build and run failures are returned.  Building
    and exporting need a C compiler (``cc``, which ``export_library`` links with).

    Parameters
    ----------
    mod : tvm.IRModule
        A high-level Relax module: anything ``relax.build`` accepts, tensor constants
        included.  It is lowered and built here; a child process loads the exported
        library and runs it.
    inputs : sequence
        One per parameter of ``func``: numpy arrays, and Python scalars for PrimType
        parameters (such as an If condition).
    options : benchkill.VMOptions, optional
        Exec mode, allocator, timed and peak runs, the function, the timeline, the re-kill
        scenario, the timeout (default: ``VMOptions()``).  The same names as keywords
        (``exec_mode=...``) still work for one release, with a DeprecationWarning.
    kill : {"tvm", "benchkill", "beyond", "legacy", None}
        The kill step of :func:`benchkill.build_pipeline` (with ``rekill``: the pass run
        once more after TVM's default pipeline).
    trace : bool
        Also trace the allocations of one run, in a fresh child of its own that loads the
        same library (:mod:`benchkill.execution.trace`), after the measurement
        succeeded; the events are attributed to the lowered module here.
    export : path, optional
        Also put the measured executable there (the shared library the child loaded:
        ``tvm.runtime.load_module`` loads it) when the measurement succeeded.  An
        existing file is never replaced: it is an error before anything is built, and a
        file that appears at that path during the measurement makes the result an error
        (stage "export").
    """
    options = merge_options(options, deprecated, "measure_vm")
    check_kill_variant(kill)
    request = _request(mod, inputs, options)
    request.update(kill=kill, rekill=options.rekill)
    exec_mode, rekill, timeout = options.exec_mode, options.rekill, options.timeout
    if export is not None and os.path.lexists(export):
        raise BenchkillError(f"measure_vm: {os.fspath(export)} exists; it is never replaced")
    with work_dir("benchkill-vm-") as work:
        built = build_library(mod, kill, exec_mode, work / EXPORTED, rekill=rekill)
        if not built.ok:
            return _result(_failed(built), str, work, request, export, {})
        _write_inputs(inputs, work)
        outcome = run_task("benchkill.execution.vm_task:vm_task", request, work, timeout)
        result = outcome.result
        if result is not None:
            result["build_seconds"] = built.seconds
        traced: dict[str, Any] = {}
        if trace and result is not None and result.get("error") is None:
            traced = _trace(request, work, timeout, built)
        return _result(result, outcome.failure, work, request, export, traced)


def measure_vm_variants(
    mod: Any,
    inputs: Sequence[Any],
    kills: Sequence[str | None],
    options: VMOptions | None = None,
    *,
    exports: Sequence[str | os.PathLike[str] | None] | None = None,
    **deprecated: Any,
) -> list[VMResult]:
    """:func:`measure_vm` of each kill variant of ``kills`` (``exports[i]``: variant
    ``i``'s ``export``), one after the other in one child process (task
    :func:`~benchkill.execution.vm_task.variants_task`, ``timeout`` seconds per variant);
    one :class:`VMResult` per variant, in order.  No trace.

    The same measurement as one child per variant, without the interpreter and TVM started again
    for each (about 1.2 s a child here).  Every variant is built here and loaded in the child
    before any runs; each peak run is still on a fresh VM with an emptied pool and trimmed heap,
    as each of a child's peak runs is.  Measured on the asv suite's 8 quick (workload, exec
    mode) pairs, twice: every peak within 20 KiB of the one measured in a child of its own, well
    within the method's resolution (:mod:`.peak`); the first variant run read up to 20 KiB
    higher than the others on the 1.3 MiB conv net. But a variant's build time then includes no
    first-build costs that an earlier variant paid: for build times, use :func:`measure_vm`.  A
    crash of the child fails the variants without a result (stage "child"; the error says where
    it was).
    """
    options = merge_options(options, deprecated, "measure_vm_variants")
    exec_mode, rekill, timeout = options.exec_mode, options.rekill, options.timeout
    exports = [None] * len(kills) if exports is None else list(exports)
    if len(exports) != len(kills):
        raise BenchkillError(f"measure_vm_variants: {len(kills)} kills but {len(exports)} exports")
    for kill in kills:
        check_kill_variant(kill)
    for export in exports:
        if export is not None and os.path.lexists(export):
            raise BenchkillError(f"measure_vm: {os.fspath(export)} exists; it is never replaced")
    request = _request(mod, inputs, options)
    task = "benchkill.execution.vm_task:variants_task"
    with work_dir("benchkill-vm-") as work:
        built: list[Built] = []
        for i, kill in enumerate(kills):
            (work / f"v{i}").mkdir()
            path = work / f"v{i}" / EXPORTED
            built.append(build_library(mod, kill, exec_mode, path, rekill=rekill))
        request.update(
            rekill=bool(rekill),
            variants=[{"kill": k, "built": b.ok} for k, b in zip(kills, built, strict=True)],
        )
        _write_inputs(inputs, work)
        outcome = None
        if any(b.ok for b in built):
            outcome = run_task(task, request, work, timeout * max(1, len(kills)))
        crashed = (outcome.stage if outcome is not None else None) or ""  # "variant K"
        results = []
        for i, (variant, export) in enumerate(zip(request["variants"], exports, strict=True)):
            sub = work / f"v{i}"
            if not built[i].ok:
                failed = _failed(built[i])
                results.append(_result(failed, str, sub, {**request, **variant}, export, {}))
                continue
            result, stage = read_result(sub)
            if result is not None:
                result["build_seconds"] = built[i].seconds

            def failure(i: int = i, stage: str = stage or "start") -> str:
                what = outcome.describe() or (outcome.result or {}).get("error")
                what = what or "child process left no result"
                if crashed == f"variant {i}":
                    return f"{what} (during {stage})"
                return f"{what} (during {crashed or 'start'}, before variant {i} ran)"

            results.append(_result(result, failure, sub, {**request, **variant}, export, {}))
        return results


def _failed(built: Built) -> dict[str, Any]:
    """The result of a variant whose build or export failed."""
    return {"error": built.error, "stage": built.stage}


def _request(mod: Any, inputs: Sequence[Any], options: VMOptions) -> dict[str, Any]:
    """The options of a VM child (all but the kill variant's)."""
    check_function(mod, options.func, "measure_vm")
    return {
        "exec_mode": options.exec_mode,
        "memory_cfg": options.memory_cfg,
        "repeat": options.repeat,
        "peak_repeat": options.peak_repeat,
        "func": options.func,
        "timeline": bool(options.timeline),
        "inputs": _input_specs(inputs)[0],
    }


def _write_inputs(inputs: Sequence[Any], work: Path) -> None:
    """The child's input file ``inputs.npz`` (the executable is already there)."""
    np.savez(work / "inputs.npz", **_input_specs(inputs)[1])


def _result(
    result: dict[str, Any] | None,
    failure: Any,
    work: Path,
    request: dict[str, Any],
    export: str | os.PathLike[str] | None,
    traced: dict[str, Any],
) -> VMResult:
    """The VMResult of a child's ``result`` (None: it left none, ``failure()`` says why),
    its outputs read from ``work`` and its executable put at ``export``."""
    base = {k: request[k] for k in ("exec_mode", "kill", "memory_cfg")}
    if result is None:
        return VMResult(ok=False, error=failure(), stage="child", **base)
    outputs: tuple[np.ndarray, ...] = ()
    if "n_outputs" in result:
        with np.load(work / "outputs.npz") as saved:
            outputs = tuple(saved[f"arr_{i}"] for i in range(result["n_outputs"]))
    if export is not None and result.get("error") is None:
        try:
            copy_new(work / EXPORTED, Path(export))
        except OSError as exc:
            result.update(error=f"export to {os.fspath(export)}: {exc}", stage="export")
    error = result.get("error")
    peaks = tuple(int(p) for p in result.get("peaks", ()))
    return VMResult(
        ok=error is None,
        error=error,
        build_seconds=result.get("build_seconds"),
        seconds=tuple(result.get("seconds", ())),
        peak_bytes=int(np.median(peaks)) if peaks else None,
        peaks=peaks,
        floor_bytes=result.get("floor_bytes"),
        outputs=outputs,
        timeline=tuple(VMEvent(*e) for e in result.get("timeline", ())),
        stage=result.get("stage"),
        **traced,
        **base,
    )


def _trace(request: dict[str, Any], work: Any, timeout: float, built: Built) -> dict[str, Any]:
    """Run the trace child (task ``trace_task``) on the library of ``work``; the
    ``trace``, ``trace_summary`` or ``trace_error`` fields of the VMResult, the events
    attributed here to ``built.lowered`` (the module the library was built from)."""
    from tvm import relax

    lowered = built.lowered
    names = sorted(
        gv.name_hint for gv, f in lowered.functions_items() if isinstance(f, relax.Function)
    )
    task = "benchkill.execution.vm_task:trace_task"
    outcome = run_task(task, {**request, "relax_functions": names}, work, timeout)
    result = outcome.result
    if result is None:
        return {"trace_error": outcome.failure()}
    if result.get("error"):
        return {"trace_error": f"{result['error']} (during {result.get('stage')})"}
    events, summary = summarize_trace(
        lowered,
        built.kill_input,
        result["events"],
        request["func"],
        request["exec_mode"],
        request["memory_cfg"],
        traced_run_peak=result["traced_run_peak_bytes"],
        truncated=result["truncated"],
    )
    return {"trace": tuple(TraceEvent(*e) for e in events), "trace_summary": summary}
