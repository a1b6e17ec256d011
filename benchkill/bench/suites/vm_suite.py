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
  re-kill scenario, whose module the estimate does not lower;
- ``trace_peak_bytes`` (bytes, one sample): the allocation trace of one more run
  (``measure_vm(..., trace=True)``, in a build and child of its own) replayed through
  the model of the allocator the case uses; FAILED when the trace could not be taken.

Who holds the peak, for figures to label it (lists are compact: the largest
:data:`TOP` entries, sites as text such as ``"main binding 7 (gv6)"``):

- ``vm_peak_bytes.extra``: ``peak_holders``, the live set at the peak, largest first,
  each ``{"var", "bytes", "defined_at", "last_used_at", "released_at", "killed_at",
  "reason"}`` (``killed_at`` None: never killed, ``reason`` says why), from the trace
  when there is one, else from the static model (``peak_holders_source``: "trace" or
  "static"); ``waste_by_function`` ({function: bytes x bindings held after last use}) and
  ``waste_top`` (``{"function", "var", "bytes", "bindings", "reason"}``) from the same
  source; ``static_peak_index``, the index of the peak in ``static_live_bytes``;
  ``trace_live_bytes`` (live bytes of the traced run after each allocation or release
  of a buffer, both exec modes) and ``trace_peak_index``, the index of its peak.
- ``liveness_bound_bytes.extra``: ``at_peak``, ``waste_by_function`` and ``waste_top`` of
  the static model, in the same form.
- ``trace_peak_bytes.extra``: ``live_peak_bytes``, ``pooled_peak_bytes``,
  ``naive_peak_bytes``, ``rss_peak_bytes`` (resident memory sampled at the events),
  ``traced_run_peak_bytes`` (VmHWM of the traced run), ``trace_over_measured`` (the
  sample over the median measured peak), ``events``, ``attributed`` of
  ``program_events`` (recorded calls paired with the IR) and ``attribution_error``.

A variant whose outputs differ from the reference or its framework's is FAILED; the pre-fix
``kill="legacy"`` compiled build of the re-kill scenario is EXPECTED_FAILURE.  The
``calibration`` case measures a known numpy allocation; the real models' cases: :mod:`.vm_real`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import tvm_ffi

from benchkill.analysis.holders import compact_holders
from benchkill.bench.model import EXPECTED_FAILURE, FAILED, OK, CaseSpec, Record
from benchkill.bench.suites.vm_real import real_cases
from benchkill.errors import BenchkillError
from benchkill.execution.outputs import compare_outputs
from benchkill.files import link_or_copy_new
from benchkill.inputs import workloads
from benchkill.vocabulary import COMPARED_KILLS, EXEC_MODES, NO_KILLS, kill_arg

NAME = "vm"

#: The kill variants measured for an ordinary workload; the first is the reference.
KILLS: tuple[str | None, ...] = tuple(kill_arg(name) for name in COMPARED_KILLS)
#: The variants of the upstream re-kill scenario: pre-fix and fixed passes.
REKILL_KILLS: tuple[str | None, ...] = tuple(
    kill_arg(name) for name in (NO_KILLS, "legacy", "benchkill", "tvm")
)

#: Relative tolerance of the calibration: measured / allocated within 1 +- this.
CALIBRATION_TOLERANCE = 0.05

#: Case settings of a full run by workload: the full GPT-2 takes ~20 s a run here.
FULL_SETTINGS: dict[str, dict[str, Any]] = {"gpt2": {"repeat": 1}}
#: How many peak holders and waste entries a record keeps.
TOP = 10


def _spec(
    workload: str, exec_mode: str, memory_cfg: str = "pooled", quick: bool = False
) -> CaseSpec:
    params = workloads.WORKLOADS[workload].parameters(quick)
    if not quick:
        params.update(FULL_SETTINGS.get(workload, {}))
    return CaseSpec(
        NAME,
        workload,
        {"workload": workload, "exec_mode": exec_mode, "memory_cfg": memory_cfg, **params},
    )


def cases(quick: bool) -> list[CaseSpec]:
    """The cases of a full run, or a small set (4 MiB tensors, fewer modes) for --quick."""
    modes = EXEC_MODES
    if quick:
        return [
            CaseSpec(NAME, "calibration", {"mib": 64}),
            *(_spec("chain", m, quick=True) for m in modes),
            _spec("if_chain", "bytecode", quick=True),
            _spec("mlp", "bytecode", quick=True),
            _spec("gpt2", "compiled", quick=True),
            _spec("convnet", "bytecode", quick=True),
            _spec("upstream_rekill", "compiled", quick=True),
            *real_cases(quick=True),
        ]
    specs = [CaseSpec(NAME, "calibration", {"mib": m}) for m in (64, 256)]
    real = set(workloads.REAL_MODELS)  # their cases: benchkill.bench.suites.vm_real
    for m in modes:
        specs += [_spec(name, m) for name in workloads.WORKLOADS if name not in real]
    specs.append(_spec("chain", "bytecode", "naive"))
    return specs + real_cases(quick=False)


def run_case(spec: CaseSpec) -> list[Record]:
    """Measure one case: its workload with each kill variant (``params``: ``kills``,
    ``repeat``, ``reuse_equal_programs`` of :func:`measure_workload`), or the calibration."""
    if spec.name == "calibration":
        return _calibration(spec)
    params = dict(spec.params)
    workload = workloads.make_workload(params.get("workload"), params)
    default = REKILL_KILLS if workload.rekill else KILLS
    kills = tuple(params.get("kills", default))
    options = {k: params[k] for k in ("repeat", "reuse_equal_programs") if k in params}
    return measure_workload(workload, params["exec_mode"], params["memory_cfg"], kills, **options)


def measure_workload(
    workload: workloads.Workload,
    exec_mode: str,
    memory_cfg: str,
    kills: Sequence[str | None],
    *,
    repeat: int = 5,
    trace: bool = True,
    export_dir: Path | None = None,
    reuse_equal_programs: bool = False,
    one_child: bool = False,
) -> list[Record]:
    """Records of every kill variant of one workload; ``kills[0]`` is the reference.
    ``trace`` also traces one run of each variant (``trace_peak_bytes``); ``export_dir``
    gets each executable too (named by :func:`library_path`).  ``reuse_equal_programs``:
    a variant whose kill step gives a module structurally equal to one measured before
    (benchkill's and TVM's always do) is not built and run again; that measurement stands
    for it, its library is a hard link to the other's, and its records name the other in
    ``extra["same_program_as"]`` (never in the re-kill scenario).  ``one_child``: the
    variants measured are measured in one child process
    (:func:`~benchkill.execution.vm_measure.measure_vm_variants`: for memory; its build
    times are not each variant's own), with no trace."""
    from benchkill.analysis.liveness import estimate_lowered
    from benchkill.execution.pipeline import kill_pass, lower_to_kill_input
    from benchkill.execution.vm_measure import VMOptions, measure_vm, measure_vm_variants

    if one_child and trace:
        raise BenchkillError("measure_workload: one_child measures no trace")
    kill_input = None if workload.rekill else _or_none(lower_to_kill_input, workload.mod)
    bases = [
        {"workload": workload.name, "exec_mode": exec_mode, "memory_cfg": memory_cfg, "kill": k}
        for k in kills
    ]
    # 1. each variant's killed module (None also when lowering fails: the measurement
    # records the failure), and the earlier variant whose program it is, if any
    killed: list[Any] = []
    same: list[int | None] = []
    for kill in kills:
        step = kill_pass(kill)
        module = kill_input if kill_input is None or step is None else _or_none(step, kill_input)
        equal = None
        if reuse_equal_programs and module is not None:
            equal = next(
                (
                    j
                    for j, other in enumerate(killed)
                    if same[j] is None
                    and other is not None
                    and tvm_ffi.structural_equal(other, module, map_free_vars=True)
                ),
                None,
            )
        killed.append(module)
        same.append(equal)
    # 2. measure the others
    own = [i for i in range(len(kills)) if same[i] is None]
    own_kills = [kills[i] for i in own]
    exports = [None if export_dir is None else library_path(export_dir, bases[i]) for i in own]
    args = (workload.mod, list(workload.inputs))
    options = VMOptions(exec_mode, memory_cfg, repeat, func=workload.func, rekill=workload.rekill)
    if one_child:
        results = measure_vm_variants(*args, own_kills, options, exports=exports)
    else:
        results = [
            measure_vm(*args, options, kill=k, trace=trace, export=e)
            for k, e in zip(own_kills, exports, strict=True)
        ]
    measured = dict(zip(own, results, strict=True))
    # 3. the records
    records: list[Record] = []
    reference: tuple[np.ndarray, ...] | None = None
    for index, (kill, base) in enumerate(zip(kills, bases, strict=True)):
        result = measured[index if same[index] is None else same[index]]
        if same[index] is not None and export_dir is not None and result.ok:
            other = library_path(export_dir, bases[same[index]])
            link_or_copy_new(other, library_path(export_dir, base))
        if not result.ok:
            expected = workload.rekill and kill == "legacy" and exec_mode == "compiled"
            metric = "vm_build_time" if result.stage in ("build", "export") else "vm_run_time"
            status = EXPECTED_FAILURE if expected else FAILED
            records.append(_record(workload, base, metric, "s", (), status, result.error))
            continue
        if index == 0:
            reference = result.outputs
        status, error = _compare(result.outputs, reference, kills[0])
        if status == OK and workload.expected:  # a real model: its framework's outputs
            error = compare_outputs(result.outputs, workload.expected, reference=workload.reference)
            status = OK if error is None else FAILED
        estimate = None
        if killed[index] is not None:  # as estimate_memory(workload.mod, ..., kill=kill) lowers it
            estimate = estimate_lowered(
                killed[index],
                workload.input_shapes,
                func=workload.func,
                return_slot=exec_mode == "bytecode",
                kill=kill,
            )
        variant = _variant_records(workload, base, result, estimate, status, error)
        if trace:
            variant.append(_trace_record(workload, base, result, status, error))
        if same[index] is not None:
            for record in variant:
                record.extra["same_program_as"] = kills[same[index]]
        records += variant
    return records


def _or_none(f: Any, mod: Any) -> Any:
    try:
        return f(mod)
    except Exception:  # noqa: BLE001 - the child's build fails too, and is recorded
        return None


def library_path(export_dir: Path, params: dict[str, Any]) -> Path:
    """Where :func:`measure_workload` exports the executable of the variant ``params``
    (``workload``, ``exec_mode``, ``memory_cfg``, ``kill``) in ``export_dir``."""
    kill = "none" if params["kill"] is None else params["kill"]
    name = f"{params['workload']}-{params['exec_mode']}-{params['memory_cfg']}-{kill}.so"
    return Path(export_dir) / name


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
    summary = result.trace_summary
    if summary is not None:
        curve = [live for _, live in summary.live_curve]
        timeline["trace_live_bytes"] = curve
        timeline["trace_peak_index"] = curve.index(max(curve)) if curve else None
        traced = compact_holders(summary.at_peak, summary.waste, TOP)
        timeline.update(traced, peak_holders_source="trace")
    if estimate is None:
        records.append(rec("vm_peak_bytes", "bytes", result.peaks, timeline))
        return records
    static_curve = [p.live_bytes for p in estimate.curve]
    timeline["static_live_bytes"] = static_curve
    timeline["static_points"] = [f"{p.function}:{p.var}" for p in estimate.curve]
    timeline["static_peak_index"] = static_curve.index(max(static_curve)) if static_curve else None
    static = compact_holders(estimate.at_peak, estimate.waste, TOP)
    if summary is None:
        timeline.update(static, peak_holders_source="static")
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
                "at_peak": static["peak_holders"],
                "waste_by_function": static["waste_by_function"],
                "waste_top": static["waste_top"],
            },
        ),
    ]
    if bound > 0:
        records.append(rec("peak_over_bound", "ratio", [p / bound for p in result.peaks]))
    return records


def _trace_record(
    workload: workloads.Workload,
    params: dict[str, Any],
    result: Any,
    status: str,
    error: str | None,
) -> Record:
    """``trace_peak_bytes`` of one variant: the trace's replayed peak (see the docstring)."""
    summary = result.trace_summary
    if summary is None:
        why = result.trace_error or "no trace"
        return _record(workload, params, "trace_peak_bytes", "bytes", (), FAILED, why)
    measured = result.peak_bytes
    extra = {
        "live_peak_bytes": summary.live_peak_bytes,
        "pooled_peak_bytes": summary.pooled_peak_bytes,
        "naive_peak_bytes": summary.naive_peak_bytes,
        "rss_peak_bytes": summary.rss_peak_bytes,
        "traced_run_peak_bytes": summary.traced_run_peak_bytes,
        "trace_over_measured": summary.predicted_peak_bytes / measured if measured else None,
        "events": len(result.trace),
        "attributed": summary.attributed,
        "program_events": summary.program_events,
        "attribution_error": summary.attribution_error,
    }
    if summary.attribution_error is not None and status == OK:
        status, error = FAILED, f"attribution: {summary.attribution_error}"
    samples = (summary.predicted_peak_bytes,)
    return _record(workload, params, "trace_peak_bytes", "bytes", samples, status, error, extra)


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
