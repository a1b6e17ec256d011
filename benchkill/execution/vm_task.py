"""The child's side of a VM measurement: load, run, time and measure one executable.

Task ``"vm"`` of :mod:`benchkill.execution.child`.  The work directory holds
``executable.so`` (the executable the parent built and exported,
:mod:`benchkill.execution.vm_build`) and ``inputs.npz``; the task loads the library, writes
``outputs.npz`` and returns the timings, peaks and timeline, or the error of a failed run
with its stage.  :mod:`benchkill.execution.vm_measure` is the parent's side;
:mod:`benchkill.execution.peak` says how the peak is measured.  Task :func:`variants_task`
measures several kill variants of one module in one process; :func:`trace_task` records
the allocation trace of one run (the parent attributes it to the lowered module it holds).
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

#: The file of the work directory the parent exports the executable to.
EXPORTED = "executable.so"
#: Keep at most this many timeline events (a long program would flood the results).
MAX_EVENTS = 20000


def _load(work: Path) -> Any:
    """The executable the parent exported into ``work``."""
    import tvm

    return tvm.runtime.load_module(str(work / EXPORTED))


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
    ex, result = _executable(work)
    return result if ex is None else _run(request, work, ex, result)


def _executable(work: Path) -> tuple[Any, dict[str, Any]]:
    """The loaded executable and the result so far; (None, the error) if it did not load."""
    set_stage(work, "load")
    try:
        return _load(work), {}
    except Exception as exc:  # noqa: BLE001 - a failed load is a result
        return None, {"error": error_text(exc), "stage": "load"}


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
    request's, such as ``kill``) the parent built, in this one process.  Variant ``i``
    works in the subdirectory ``v<i>`` (its executable there, the inputs linked into it);
    a variant whose build failed (``"built": false``) is the parent's to report.  Every
    executable is loaded (and kept) before any runs, so that each variant's runs find the
    process as the others' do (all code loaded), whatever its place in the list.  Each
    result is written as soon as its runs end: a crash loses only the variants that have
    none yet."""
    variants = [
        ({**request, **variant}, work / f"v{i}") for i, variant in enumerate(request["variants"])
    ]
    loaded = []
    for i, (options, sub) in enumerate(variants):
        if not options.get("built", True):
            loaded.append((None, None))
            continue
        os.link(work / "inputs.npz", sub / "inputs.npz")
        set_stage(work, f"variant {i}")
        loaded.append(_executable(sub))
    for i, ((options, sub), (ex, result)) in enumerate(zip(variants, loaded, strict=True)):
        if result is None:
            continue
        set_stage(work, f"variant {i}")
        if ex is not None:
            result = _run(options, sub, ex, result)
        write_result(sub, result)
    return {"variants": len(variants)}


def trace_task(request: dict[str, Any], work: Path) -> dict[str, Any]:
    """The child's side of ``measure_vm(..., trace=True)``: one traced run, its raw events.

    The tracer (:mod:`benchkill.execution.trace`) is installed before the library is
    loaded and the VM created (compiled code caches each builtin's handle at its first
    call, so the override must come first: a library loaded in this fresh process has
    called nothing yet).  After a warm-up run that is not recorded, the traced run is on
    a fresh VM with an empty pool, like the peak runs, and its own VmHWM peak is measured
    too; then the output and the VM are released, still recording.  The parent attributes
    the events to the lowered module it holds and replays them
    (:func:`benchkill.execution.vm_measure.summarize_trace`).
    """
    import tvm
    from tvm import relax

    from benchkill.execution import trace as tracer

    tracer.install()
    set_stage(work, "load")
    try:
        ex = _load(work)
    except Exception as exc:  # noqa: BLE001 - a failed load is a result
        return {"error": error_text(exc), "stage": "load"}
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
            vm.set_instrument(tracer.instrument(set(request["relax_functions"])))
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
    return {"events": events, "truncated": truncated, "traced_run_peak_bytes": peak}
