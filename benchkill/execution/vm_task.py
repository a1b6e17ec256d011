"""The child's side of a VM measurement: build, run, time and measure one module.

Task ``"vm"`` of :mod:`benchkill.execution.child`.  The work directory holds ``module.py``
(the module as TVMScript, see :func:`benchkill.relax.text.module_text`) and ``inputs.npz``;
the task writes ``outputs.npz`` and returns the timings, peaks and timeline, or the error
of a failed build or run with its stage.  :mod:`benchkill.execution.vm_measure` is the
parent's side; :mod:`benchkill.execution.peak` says how the peak is measured.  Task
:func:`variants_task` measures several kill variants of one module in one process.
"""

from __future__ import annotations

import gc
import os
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from benchkill.execution.child import error_text, set_stage, write_result
from benchkill.execution.peak import VMEvent, peak_of, resident_bytes

#: The file of the work directory ``measure_vm(..., export=...)`` exports the executable to.
EXPORTED = "executable.so"
#: Keep at most this many timeline events (a long program would flood the results).
MAX_EVENTS = 20000


def _lower(request: dict[str, Any], work: Path) -> tuple[Any, Any]:
    """The module of ``module.py`` lowered as ``relax.build`` lowers it (its Relax
    pipeline under the target), and the target: what the VM codegen compiles."""
    import tvm
    from tvm import relax

    from benchkill.execution.pipeline import build_pipeline, kill_pass

    mod = tvm.script.from_source((work / "module.py").read_text())
    kill = request["kill"]
    target = tvm.target.Target("llvm")
    if request["rekill"]:
        # The upstream #20200 scenario: TVM's default pipeline, then the kill pass again
        # on its output, then a build that lowers nothing more ("zero").
        lowered = relax.get_default_pipeline(target)(mod)
        step = kill_pass(kill)
        if step is not None:
            lowered = step(lowered)
        pipeline = relax.get_pipeline("zero")
    else:
        lowered, pipeline = mod, build_pipeline(kill=kill)
    with target:
        return pipeline(lowered), target


def _build(request: dict[str, Any], work: Path) -> tuple[Any, float, Any]:
    """Lower and build; the executable, the seconds it took, the lowered module."""
    from tvm import relax

    t0 = time.perf_counter()
    lowered, target = _lower(request, work)
    ex = relax.build(lowered, target=target, relax_pipeline=None, exec_mode=request["exec_mode"])
    return ex, time.perf_counter() - t0, lowered


def _inputs(request: dict[str, Any], work: Path) -> list[Any]:
    import tvm

    arrays = np.load(work / "inputs.npz")
    args: list[Any] = []
    for i, spec in enumerate(request["inputs"]):
        if spec["kind"] == "array":
            args.append(tvm.runtime.tensor(arrays[f"arg{i}"], device=tvm.cpu()))
        else:
            args.append(spec["value"])
    return args


def _flatten(value: Any, out: list[np.ndarray]) -> None:
    """Append the tensors and scalars of a VM result (tuples flattened depth-first)."""
    from collections.abc import Sequence

    import tvm

    if isinstance(value, tvm.runtime.Tensor):
        out.append(value.numpy())
    elif isinstance(value, Sequence) and not isinstance(value, str):
        for item in value:
            _flatten(item, out)
    else:
        out.append(np.asarray(value))


def _clear_pool() -> None:
    """Empty the VM allocators' pools, then give glibc's free heap pages back to the
    system (``malloc_trim``): a buffer below the mmap threshold comes from the heap, and
    without the trim it could land on pages already resident, which a peak does not see."""
    import tvm

    gc.collect()
    tvm.get_global_func("vm.builtin.memory_manager.clear")()
    _malloc_trim()


def _malloc_trim() -> None:
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        libc.malloc_trim(0)
    except (OSError, AttributeError, TypeError):  # not glibc: nothing to trim
        pass


def vm_task(request: dict[str, Any], work: Path) -> dict[str, Any]:
    """The child's side of :func:`benchkill.measure_vm` (task ``"vm"``)."""
    ex, result = _executable(request, work)
    return result if ex is None else _run(request, work, ex, result)


def _executable(request: dict[str, Any], work: Path) -> tuple[Any, dict[str, Any]]:
    """The built executable and the result so far; (None, the error) if the build failed."""
    import tvm

    set_stage(work, "build")
    try:
        ex, seconds, _ = _build(request, work)
        if request.get("export"):
            # run what is exported: the library, loaded (LLVM compiles the module once,
            # for the export, and not once more for an in-memory run)
            ex.export_library(str(work / EXPORTED))
            ex = tvm.runtime.load_module(str(work / EXPORTED))
    except Exception as exc:  # noqa: BLE001 - a failed build is a result
        return None, {"error": error_text(exc), "stage": "build"}
    return ex, {"build_seconds": seconds}


def _run(request: dict[str, Any], work: Path, ex: Any, result: dict[str, Any]) -> dict[str, Any]:
    """Runs of ``ex``: outputs, timed runs, peaks, timeline (``result`` updated)."""
    import tvm
    from tvm import relax

    set_stage(work, "run")
    func, cfg, repeat = request["func"], request["memory_cfg"], int(request["repeat"])
    args = _inputs(request, work)

    def new_vm() -> Any:
        return relax.VirtualMachine(ex, tvm.cpu(), memory_cfg=cfg)

    try:
        # 1. warm-up (first-call effects), outputs, then timed runs with a warm pool
        vm = new_vm()
        out = vm[func](*args)
        outputs: list[np.ndarray] = []
        _flatten(out, outputs)
        del out
        seconds = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            out = vm[func](*args)
            seconds.append(time.perf_counter() - t0)
            del out
        # 2. peak of one run, measured peak_repeat times: each on a fresh VM (an old one
        # holds its last result in its return slot) with an empty pool, so every buffer
        # the run needs is new memory
        del vm
        _, floor = peak_of(lambda: None)
        peaks = []
        for _ in range(int(request["peak_repeat"])):
            _clear_pool()
            vm = new_vm()
            out, peak = peak_of(lambda: vm[func](*args))  # noqa: B023 - called at once
            peaks.append(peak)
            del out, vm
        # 3. timeline of one run (bytecode only: the compiled VM has no instrument hook)
        events: list[VMEvent] = []
        if request["timeline"] and request["exec_mode"] == "bytecode":
            _clear_pool()
            vm = new_vm()
            base = resident_bytes()

            def instrument(_func: Any, symbol: str, before: bool, _ret: Any, *_args: Any) -> int:
                if len(events) < MAX_EVENTS:
                    events.append(VMEvent(str(symbol), bool(before), resident_bytes() - base))
                return 0  # VMInstrumentReturnKind.kNoOp

            vm.set_instrument(instrument)
            out = vm[func](*args)
            del out, vm
    except Exception as exc:  # noqa: BLE001 - a failed run is a result
        result.update(error=error_text(exc), stage="run")
        return result

    np.savez(work / "outputs.npz", *outputs)
    result.update(
        seconds=seconds,
        peaks=peaks,
        floor_bytes=floor,
        timeline=[list(e) for e in events],
        n_outputs=len(outputs),
    )
    return result


def variants_task(request: dict[str, Any], work: Path) -> dict[str, Any]:
    """The child's side of :func:`benchkill.execution.vm_measure.measure_vm_variants`:
    :func:`vm_task` of each of ``request["variants"]`` (options that replace the
    request's, such as ``kill``), in this one process.  Variant ``i`` works in the
    subdirectory ``v<i>`` (the module and inputs linked into it).  Every variant is
    built (and kept) before any runs, so that each variant's runs find the process as
    the others' do (all code built and loaded), whatever its place in the list.  Each
    result is written as soon as its runs end: a crash loses only the variants that
    have none yet."""
    variants = [
        ({**request, **variant}, work / f"v{i}") for i, variant in enumerate(request["variants"])
    ]
    built = []
    for i, (options, sub) in enumerate(variants):
        sub.mkdir()
        for name in ("module.py", "inputs.npz"):
            os.link(work / name, sub / name)
        set_stage(work, f"variant {i}")
        built.append(_executable(options, sub))
    for i, ((options, sub), (ex, result)) in enumerate(zip(variants, built, strict=True)):
        set_stage(work, f"variant {i}")
        if ex is not None:
            result = _run(options, sub, ex, result)
        write_result(sub, result)
    return {"variants": len(variants)}


def trace_task(request: dict[str, Any], work: Path) -> dict[str, Any]:
    """The child's side of ``measure_vm(..., trace=True)``: one traced run.

    The tracer (:mod:`benchkill.execution.trace`) is installed before the module is
    built and the VM created (compiled code caches each builtin's handle at its first
    call, so the override must come first: this is a build of its own, in a child of its
    own, never the one timed).  After a warm-up run that is not recorded, the traced
    run is on a fresh VM with an empty pool, like the peak runs, and its own VmHWM peak
    is measured too; then the output and the VM are
    released, still recording.  The events are attributed to the lowered module
    (:mod:`benchkill.execution.attribution`) and replayed through the allocator models.
    """
    import tvm
    from tvm import relax

    from benchkill.execution import trace as tracer
    from benchkill.execution.attribution import attribute
    from benchkill.execution.replay import replay

    tracer.install()
    set_stage(work, "build")
    try:
        ex, _, lowered = _build(request, work)
    except Exception as exc:  # noqa: BLE001 - a failed build is a result
        return {"error": error_text(exc), "stage": "build"}
    set_stage(work, "run")
    func, exec_mode = request["func"], request["exec_mode"]
    args = _inputs(request, work)
    try:
        # a warm-up run, not recorded, as before measure_vm's peak runs: first-call
        # effects (the kernels' workspace pool, ...) stay out of the traced run's peak
        warm = relax.VirtualMachine(ex, tvm.cpu(), memory_cfg=request["memory_cfg"])
        out = warm[func](*args)
        del out, warm
        _clear_pool()
        vm = relax.VirtualMachine(ex, tvm.cpu(), memory_cfg=request["memory_cfg"])
        if exec_mode == "bytecode":
            names = {
                gv.name_hint for gv, f in lowered.functions_items() if isinstance(f, relax.Function)
            }
            vm.set_instrument(tracer.instrument(names))
        call = partial(vm[func], *args)
        tracer.start()
        out, peak = peak_of(call)
        tracer.mark("run_end")
        del out
        gc.collect()
        tracer.mark("output_released")
        del call, vm
        gc.collect()
        tracer.mark("vm_released")
    except Exception as exc:  # noqa: BLE001 - a failed run is a result
        tracer.stop()
        return {"error": error_text(exc), "stage": "run"}
    events, truncated = tracer.stop()
    set_stage(work, "attribute")
    replayed = replay(events)
    found = attribute(lowered, events, func, exec_mode, replayed.live_peak_seq)
    error = found.error
    if truncated:
        error = f"the trace stopped at {tracer.MAX_EVENTS} events"
    pooled = request["memory_cfg"] == "pooled"
    return {
        "events": [tracer.public_event(e) for e in events],
        "summary": {
            "live_peak_bytes": replayed.live_peak,
            "pooled_peak_bytes": replayed.pooled_peak,
            "naive_peak_bytes": replayed.naive_peak,
            "predicted_peak_bytes": replayed.pooled_peak if pooled else replayed.naive_peak,
            "rss_peak_bytes": replayed.rss_peak,
            "traced_run_peak_bytes": peak,
            "allocated_bytes": replayed.allocated,
            "peak_seq": replayed.live_peak_seq,
            "attributed": found.matched,
            "program_events": found.program_events,
            "attribution_error": error,
            "at_peak": [h.as_dict() for h in found.at_peak],
            "waste": [w.as_dict() for w in found.waste],
            "live_curve": [list(p) for p in replayed.curve],
        },
    }
