"""Suite "vm": build, run and measure the VM workloads with each kill variant.

A case is one workload in one exec mode (and allocator).  It measures every kill
variant in its own child process (:func:`benchkill.measure_vm`), estimates each
variant's liveness bound (:func:`benchkill.estimate_memory`), and compares every
variant's outputs with those of the build without kills.  Records per variant
(params ``workload``, ``exec_mode``, ``memory_cfg``, ``kill``):

- ``vm_build_time`` (s), ``vm_run_time`` (s, the timed runs), ``vm_peak_bytes`` (bytes,
  one sample per measured run; ``extra`` holds the timelines: ``static_live_bytes``
  after each binding and, in bytecode mode, ``measured_bytes`` after each VM call);
- ``liveness_bound_bytes`` (bytes; ``extra["pooled_bytes"]`` is what the pooled
  allocator is predicted to hold) and ``peak_over_bound`` (ratio), except for the
  re-kill scenario, whose module the estimate does not lower.

A variant whose outputs differ from the reference is FAILED; the pre-fix
``kill="legacy"`` build of the re-kill scenario in compiled mode is EXPECTED_FAILURE.
The ``calibration`` case measures a known numpy allocation (the method's check).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from benchkill.bench.model import EXPECTED_FAILURE, FAILED, OK, CaseSpec, Record
from benchkill.inputs import workloads

NAME = "vm"

#: The kill variants measured for an ordinary workload; the first is the reference.
KILLS: tuple[str | None, ...] = (None, "tvm", "benchkill", "beyond")
#: The variants of the upstream re-kill scenario: pre-fix and fixed passes.
REKILL_KILLS: tuple[str | None, ...] = (None, "legacy", "benchkill", "tvm")

#: Relative tolerance of the calibration: measured / allocated within 1 +- this.
CALIBRATION_TOLERANCE = 0.05


def _spec(
    workload: str, exec_mode: str, memory_cfg: str = "pooled", quick: bool = False
) -> CaseSpec:
    params = workloads.WORKLOADS[workload].parameters(quick)
    return CaseSpec(
        NAME,
        workload,
        {"workload": workload, "exec_mode": exec_mode, "memory_cfg": memory_cfg, **params},
    )


def cases(quick: bool) -> list[CaseSpec]:
    """The cases of a full run, or a small set (4 MiB tensors, fewer modes) for --quick."""
    modes = ("bytecode", "compiled")
    if quick:
        return [
            CaseSpec(NAME, "calibration", {"mib": 64}),
            *(_spec("chain", m, quick=True) for m in modes),
            _spec("if_chain", "bytecode", quick=True),
            _spec("mlp", "bytecode", quick=True),
            _spec("upstream_rekill", "compiled", quick=True),
        ]
    specs = [CaseSpec(NAME, "calibration", {"mib": m}) for m in (64, 256)]
    for m in modes:
        specs += [_spec(name, m) for name in workloads.WORKLOADS]
    specs.append(_spec("chain", "bytecode", "naive"))
    return specs


def run_case(spec: CaseSpec) -> list[Record]:
    """Measure one case: its workload with each kill variant (``params["kills"]`` may
    narrow them, ``params["repeat"]`` set the timed runs), or the calibration."""
    if spec.name == "calibration":
        return _calibration(spec)
    params = dict(spec.params)
    workload = workloads.make_workload(params.get("workload"), params)
    default = REKILL_KILLS if workload.rekill else KILLS
    kills = tuple(params.get("kills", default))
    return measure_workload(
        workload, params["exec_mode"], params["memory_cfg"], kills, repeat=params.get("repeat", 5)
    )


def measure_workload(
    workload: workloads.Workload,
    exec_mode: str,
    memory_cfg: str,
    kills: Sequence[str | None],
    *,
    repeat: int = 5,
) -> list[Record]:
    """Records of every kill variant of one workload; ``kills[0]`` is the reference."""
    from benchkill.execution.estimate import estimate_memory
    from benchkill.execution.vm_measure import measure_vm

    records: list[Record] = []
    reference: tuple[np.ndarray, ...] | None = None
    for index, kill in enumerate(kills):
        base = {
            "workload": workload.name,
            "exec_mode": exec_mode,
            "memory_cfg": memory_cfg,
            "kill": kill,
        }
        result = measure_vm(
            workload.mod,
            list(workload.inputs),
            exec_mode=exec_mode,
            kill=kill,
            memory_cfg=memory_cfg,
            repeat=repeat,
            func=workload.func,
            rekill=workload.rekill,
        )
        if not result.ok:
            expected = workload.rekill and kill == "legacy" and exec_mode == "compiled"
            metric = "vm_build_time" if result.stage == "build" else "vm_run_time"
            status = EXPECTED_FAILURE if expected else FAILED
            records.append(_record(workload, base, metric, "s", (), status, result.error))
            continue
        if index == 0:
            reference = result.outputs
        status, error = _compare(result.outputs, reference, kills[0])
        estimate = None
        if not workload.rekill:
            estimate = estimate_memory(
                workload.mod,
                workload.input_shapes,
                kill=kill,
                func=workload.func,
                return_slot=exec_mode == "bytecode",
            )
        records += _variant_records(workload, base, result, estimate, status, error)
    return records


def _compare(
    outputs: tuple[np.ndarray, ...], reference: tuple[np.ndarray, ...] | None, ref_kill: Any
) -> tuple[str, str | None]:
    if reference is None:
        return OK, None  # the reference itself failed: nothing to compare with
    if len(outputs) != len(reference):
        return FAILED, f"{len(outputs)} outputs, the kill={ref_kill} build has {len(reference)}"
    for i, (got, want) in enumerate(zip(outputs, reference, strict=True)):
        if got.shape != want.shape or not np.allclose(got, want, rtol=1e-5, atol=1e-6):
            return FAILED, f"output {i} differs from the kill={ref_kill} build"
    return OK, None


def _record(
    workload: workloads.Workload,
    params: dict[str, Any],
    metric: str,
    unit: str,
    samples: Sequence[float],
    status: str = OK,
    error: str | None = None,
    extra: dict[str, Any] | None = None,
) -> Record:
    return Record(
        suite=NAME,
        name=workload.name,
        params=dict(params),
        metric=metric,
        unit=unit,
        samples=tuple(float(s) for s in samples),
        status=status,
        error=error,
        extra=extra or {},
    )


def _variant_records(
    workload: workloads.Workload,
    params: dict[str, Any],
    result: Any,
    estimate: Any,
    status: str,
    error: str | None,
) -> list[Record]:
    def rec(metric: str, unit: str, samples: Sequence[float], extra: Any = None) -> Record:
        return _record(workload, params, metric, unit, samples, status, error, extra)

    timeline = {
        "measured_bytes": [e.resident_bytes for e in result.timeline if not e.before],
        "measured_symbols": [e.symbol for e in result.timeline if not e.before],
        "floor_bytes": result.floor_bytes,
    }
    records = [
        rec("vm_build_time", "s", (result.build_seconds,)),
        rec("vm_run_time", "s", result.seconds),
    ]
    if estimate is None:
        records.append(rec("vm_peak_bytes", "bytes", result.peaks, timeline))
        return records
    timeline["static_live_bytes"] = [p.live_bytes for p in estimate.curve]
    timeline["static_points"] = [f"{p.function}:{p.var}" for p in estimate.curve]
    bound = estimate.liveness_peak_bytes
    records += [
        rec("vm_peak_bytes", "bytes", result.peaks, timeline),
        rec(
            "liveness_bound_bytes",
            "bytes",
            (bound,),
            {
                "total_bytes": estimate.total_bytes,
                "executed_bytes": estimate.executed_bytes,
                "pooled_bytes": estimate.pooled_bytes,
                "paths": estimate.paths,
                "exhaustive": estimate.exhaustive,
            },
        ),
    ]
    if bound > 0:
        records.append(rec("peak_over_bound", "ratio", [p / bound for p in result.peaks]))
    return records


def _calibration(spec: CaseSpec) -> list[Record]:
    from benchkill.execution.peak import measure_allocation

    nbytes = int(spec.params["mib"]) * workloads.MiB
    peaks = [measure_allocation(nbytes) for _ in range(3)]
    worst = max(abs(p / nbytes - 1) for p in peaks)
    status, error = OK, None
    if worst > CALIBRATION_TOLERANCE:
        status, error = FAILED, f"measured peak off by {worst:.1%} of {nbytes} bytes"
    return [
        Record(
            suite=NAME,
            name="calibration",
            params=dict(spec.params),
            metric="calibration_peak_bytes",
            unit="bytes",
            samples=tuple(float(p) for p in peaks),
            status=status,
            error=error,
            extra={"allocated_bytes": nbytes},
        )
    ]
