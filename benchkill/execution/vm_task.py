"""The child's side of a VM measurement: build, run, time and measure one module.

Task ``"vm"`` of :mod:`benchkill.execution.child`.  The work directory holds ``module.py``
(the module as TVMScript, see :func:`benchkill.relax.text.module_text`) and ``inputs.npz``;
the task writes ``outputs.npz`` and returns the timings, peaks and timeline, or the error
of a failed build or run with its stage.  :mod:`benchkill.execution.vm_measure` is the
parent's side; :mod:`benchkill.execution.peak` says how the peak is measured.
"""

from __future__ import annotations

import gc
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchkill.execution.child import error_text, set_stage
from benchkill.execution.peak import VMEvent, peak_of, resident_bytes

#: Keep at most this many timeline events (a long program would flood the results).
MAX_EVENTS = 20000


def _build(request: dict[str, Any], work: Path) -> tuple[Any, float]:
    import tvm
    from tvm import relax

    from benchkill.execution.pipeline import build_pipeline, kill_pass

    mod = tvm.script.from_source((work / "module.py").read_text())
    kill, exec_mode = request["kill"], request["exec_mode"]
    t0 = time.perf_counter()
    if request["rekill"]:
        # The upstream #20200 scenario: TVM's default pipeline, then the kill pass again
        # on its output, then a build that lowers nothing more.
        target = tvm.target.Target("llvm")
        lowered = relax.get_default_pipeline(target)(mod)
        step = kill_pass(kill)
        if step is not None:
            lowered = step(lowered)
        ex = relax.build(lowered, target=target, relax_pipeline="zero", exec_mode=exec_mode)
    else:
        pipeline = build_pipeline(kill=kill)
        ex = relax.build(mod, target="llvm", relax_pipeline=pipeline, exec_mode=exec_mode)
    return ex, time.perf_counter() - t0


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
    import tvm

    gc.collect()
    tvm.get_global_func("vm.builtin.memory_manager.clear")()


def vm_task(request: dict[str, Any], work: Path) -> dict[str, Any]:
    """The child's side of :func:`benchkill.measure_vm` (task ``"vm"``)."""
    import tvm
    from tvm import relax

    result: dict[str, Any] = {}
    set_stage(work, "build")
    try:
        ex, result["build_seconds"] = _build(request, work)
    except Exception as exc:  # noqa: BLE001 - a failed build is a result
        return {"error": error_text(exc), "stage": "build"}

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
