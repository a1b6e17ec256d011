"""The project's target figures, computed from records (pure; no measurement here).

Pass suite: benchkill / TVM time of every family at 3,000 bindings (<= 0.3)
and at every size from 30,000 on (<= 0.33; chain at 200,000: <= 0.15), of every size of
the ``model`` family (<= 0.5), the naive port over benchkill (reported, no target),
benchkill over its floor (the FFI work an exact Python pass cannot skip, where the run
timed it; reported beside each benchkill / TVM figure: how much of the pass is its own
Python, a ratio that depends less on the CPU and the interpreter than the one to TVM), and
the scaling exponent of benchkill on every family from 3,000 to 600,000 bindings
(least-squares slope of log time vs log bindings; <= 1.0).  Times are the minimum of the
raw samples of one run (the least disturbed estimate of a deterministic computation),
in CPU time when the records have it (``pass_cpu_time``: other jobs on a shared machine
do not add to it), else wall time; the samples of both implementations come from the
same interleaved rounds.

VM suite, per workload, exec mode and allocator: ratios of medians of the peaks and run
times of the kill variants (:data:`VM_FIGURES`); on the chain workloads the targets are
:data:`VM_TARGETS` (kills keep the peak at the liveness bound and far below the build
without kills).  Every target is printed with whether it is met.

``records`` are suites' Records or stored ResultRecords (anything with ``suite``,
``params``, ``metric``, ``status``, ``samples``); failed ones are skipped.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from typing import Any

from benchkill.bench.model import FLOOR, OK
from benchkill.stats import scaling_exponents

#: benchkill / TVM targets: at 3,000 bindings, at 30,000 and more, chain at 200,000, model
SMALL, SMALL_TARGET = 3_000, 0.3
LARGE, LARGE_TARGET = 30_000, 0.33
CHAIN_200K_TARGET = 0.15
MODEL, MODEL_TARGET = "model", 0.5
#: Scaling exponent target of benchkill on every family, and its range of sizes.
EXPONENT_TARGET, EXPONENT_RANGE = 1.0, (3_000, 600_000)
#: The ``target`` of a figure shown with no target (e.g. naive / benchkill).
REPORTED = "reported"
#: The metric of the figures: CPU time when the records have it, else wall time.
METRICS = ("pass_cpu_time", "pass_time")

#: VM figure -> (numerator, denominator), each (kill variant, metric); ratios of medians.
VM_FIGURES: dict[str, tuple[tuple[str | None, str], tuple[str | None, str]]] = {
    "peak_over_bound": (("benchkill", "vm_peak_bytes"), ("benchkill", "liveness_bound_bytes")),
    "none_over_kills": ((None, "vm_peak_bytes"), ("benchkill", "vm_peak_bytes")),
    "benchkill_over_tvm": (("benchkill", "vm_peak_bytes"), ("tvm", "vm_peak_bytes")),
    "beyond_over_tvm": (("beyond", "vm_peak_bytes"), ("tvm", "vm_peak_bytes")),
    "kill_time_ratio": (("benchkill", "vm_run_time"), (None, "vm_run_time")),
}
#: benchkill's median run time, compiled / bytecode (on the compiled row).
COMPILED_OVER_BYTECODE = "compiled_over_bytecode"
#: The VM targets: peak with kills / liveness bound at most 1.10, and peak without
#: kills / peak with kills at least 6, on the workloads of :data:`VM_TARGET_WORKLOADS`.
VM_TARGETS = {"peak_over_bound": ("<=", 1.10), "none_over_kills": (">=", 6.0)}
#: The kinds of workload the VM targets are set for (a workload is named ``kind-size``).
VM_TARGET_WORKLOADS = ("chain", "symbolic_chain")
#: Peaks below this are within the measurement's slack: no ratio is made of them.
RESOLUTION_BYTES = 1 << 20


def met(value: float | None, sense: str, target: float) -> bool | None:
    """Whether ``value`` meets ``sense target`` (``"<="`` or ``">="``); None without a value."""
    if value is None:
        return None
    return value <= target if sense == "<=" else value >= target


# --- pass suite ----------------------------------------------------------------------


_PASS_PARAMS = ("family", "bindings", "impl")


def _times(records: Iterable[Any], metric: str) -> dict[tuple[str, int, str], float]:
    """(family, bindings, impl) -> the least sample, over the OK pass records of ``metric``."""
    out = {}
    for r in records:
        if r.suite == "pass" and r.metric == metric and r.status == OK and r.samples:
            p = r.params
            if all(k in p for k in _PASS_PARAMS):
                out[(p["family"], int(p["bindings"]), p["impl"])] = min(r.samples)
    return out


def pick_metric(records: Sequence[Any]) -> str:
    """The first of :data:`METRICS` that some pass record has (wall time if none)."""
    present = {r.metric for r in records if r.suite == "pass"}
    return next((m for m in METRICS if m in present), METRICS[-1])


def _target(family: str, bindings: int) -> float | None:
    if family == MODEL:
        return MODEL_TARGET
    if family == "chain" and bindings == 200_000:
        return CHAIN_200K_TARGET
    if bindings >= LARGE:
        return LARGE_TARGET
    if bindings == SMALL:
        return SMALL_TARGET
    return None


def pass_targets(records: Sequence[Any], metric: str | None = None) -> list[dict[str, Any]]:
    """One row per pass figure: the measured ratio, the target, and whether it is met.

    benchkill / TVM for every (family, size) with a target, benchkill / floor (no target)
    beside it where the floor was timed, and naive / benchkill (no target) for every size
    the naive port ran on.
    """
    metric = metric or pick_metric(records)
    times = _times(records, metric)
    # every measured (family, size), failed ones included (their figures are n/a)
    cases = {
        (r.params["family"], int(r.params["bindings"]))
        for r in records
        if r.suite == "pass" and r.metric == metric and all(k in r.params for k in _PASS_PARAMS)
    }
    rows = []
    for family, bindings in sorted(cases):
        target = _target(family, bindings)
        pairs = [("benchkill", "tvm", target), ("benchkill", FLOOR, None)]
        pairs = pairs if target is not None else []
        pairs.append(("naive", "benchkill", None))
        for top, bottom, target in pairs:
            a, b = times.get((family, bindings, top)), times.get((family, bindings, bottom))
            subject = a if top == "naive" else b  # what a figure with no target is about
            if target is None and subject is None:
                continue  # reported only where it ran
            value = a / b if a is not None and b else None
            rows.append(
                {
                    "figure": f"{top} / {bottom} time, {family} at {bindings:,} bindings",
                    "value": value,
                    "target": REPORTED if target is None else f"<= {target:g}",
                    "met": None if target is None else met(value, "<=", target),
                }
            )
    return rows


def family_exponents(
    records: Sequence[Any],
    family: str = "chain",
    span: tuple[int, int] = EXPONENT_RANGE,
    metric: str | None = None,
) -> dict[str, float]:
    """Scaling exponent (:func:`benchkill.stats.scaling_exponents` of the least times) per
    implementation of ``family``, over the sizes (nominal bindings) within ``span``;
    implementations with one size are left out."""
    points: dict[str, list[tuple[float, float]]] = {}
    for (fam, bindings, impl), seconds in _times(records, metric or pick_metric(records)).items():
        if fam == family and span[0] <= bindings <= span[1]:
            points.setdefault(impl, []).append((float(bindings), seconds))
    return scaling_exponents(dict(sorted(points.items())))


def pass_families(records: Sequence[Any]) -> list[str]:
    """The families of the pass records, sorted."""
    return sorted(
        {r.params["family"] for r in records if r.suite == "pass" and "family" in r.params}
    )


def benchkill_exponents(
    records: Sequence[Any], metric: str | None = None
) -> dict[str, float | None]:
    """Family -> scaling exponent of benchkill over :data:`EXPONENT_RANGE`, for every pass
    family measured at two sizes or more in that range (the target holds on each)."""
    out = {}
    for family in pass_families(records):
        slope = family_exponents(records, family, metric=metric).get("benchkill")
        if slope is not None:
            out[family] = slope
    return out


# --- vm suite ------------------------------------------------------------------------


def vm_targets(records: Sequence[Any]) -> list[dict[str, Any]]:
    """The VM figures per workload, exec mode and allocator, from vm records.

    Each row has ``workload``, ``exec_mode``, ``memory_cfg``, the figures of
    :data:`VM_FIGURES` the records allow (and :data:`COMPILED_OVER_BYTECODE` on a compiled
    row), and ``met``: whether the row meets :data:`VM_TARGETS` (None when no target is
    set for the workload or its figures are missing).  A ratio of two peaks both under
    :data:`RESOLUTION_BYTES` is not made.
    """
    value: dict[tuple[Any, ...], float] = {}
    groups: set[tuple[str, str, str]] = set()
    for r in records:
        if r.suite != "vm" or r.status != OK or not r.samples:
            continue
        if not all(k in r.params for k in ("workload", "exec_mode", "memory_cfg")):
            continue
        p = r.params
        group = (p["workload"], p["exec_mode"], p["memory_cfg"])
        groups.add(group)
        value[(group, p.get("kill"), r.metric)] = statistics.median(r.samples)

    def ratio(group: tuple[str, str, str], a: tuple[Any, str], b: tuple[Any, str]) -> Any:
        top, bottom = value.get((group, *a)), value.get((group, *b))
        if top is None or not bottom:
            return None
        if "bytes" in a[1] and max(top, bottom) < RESOLUTION_BYTES:
            return None  # both below what the peak measurement resolves
        return top / bottom

    rows = []
    for group in sorted(groups):
        workload, exec_mode, memory_cfg = group
        figures = {name: ratio(group, a, b) for name, (a, b) in VM_FIGURES.items()}
        run = "vm_run_time"
        bytecode = value.get(((workload, "bytecode", memory_cfg), "benchkill", run))
        compiled = value.get((group, "benchkill", run))
        if exec_mode == "compiled" and bytecode and compiled is not None:
            figures[COMPILED_OVER_BYTECODE] = compiled / bytecode
        row: dict[str, Any] = {"workload": workload, "exec_mode": exec_mode}
        row["memory_cfg"] = memory_cfg
        row.update({k: v for k, v in figures.items() if v is not None})
        row["met"] = None
        if workload.split("-", 1)[0] in VM_TARGET_WORKLOADS:
            checks = [met(figures[k], *target) for k, target in VM_TARGETS.items()]
            row["met"] = None if None in checks else all(checks)
        rows.append(row)
    return rows


# --- printing ------------------------------------------------------------------------

_MET = {None: "", True: "yes", False: "**no**"}


def _pass_lines(records: Sequence[Any]) -> list[str]:
    metric = pick_metric(records)
    rows = pass_targets(records, metric)
    if not rows:
        return []
    lines = [f"| pass figure ({metric}) | measured | target | met |", "|---|---|---|---|"]
    for row in rows:
        value = "n/a" if row["value"] is None else f"{row['value']:.3f}"
        result = _MET[row["met"]]
        if row["value"] is None and row["target"] != REPORTED:
            result = "n/a"
        lines.append(f"| {row['figure']} | {value} | {row['target']} | {result} |")
    lo, hi = EXPONENT_RANGE
    for family in pass_families(records):
        for impl, slope in family_exponents(records, family, metric=metric).items():
            target = f"<= {EXPONENT_TARGET}" if impl == "benchkill" else REPORTED
            result = _MET[met(slope, "<=", EXPONENT_TARGET)] if impl == "benchkill" else ""
            lines.append(
                f"| scaling exponent of {impl}, {family} {lo:,}-{hi:,} bindings (sizes measured) "
                f"| {slope:.3f} | {target} | {result} |"
            )
    return lines


def _vm_lines(records: Sequence[Any]) -> list[str]:
    rows = vm_targets(records)
    if not rows:
        return []
    keys = [*VM_FIGURES, COMPILED_OVER_BYTECODE]
    targets = ", ".join(f"{k} {sense} {t:g}" for k, (sense, t) in VM_TARGETS.items())
    lines = [f"VM targets on the {' and '.join(VM_TARGET_WORKLOADS)} workloads: {targets}.", ""]
    lines.append("| workload | exec mode | allocator | " + " | ".join(keys) + " | met |")
    lines.append("|---" * (4 + len(keys)) + "|")
    for row in rows:
        cells = []
        for k in keys:
            cell = f"{row[k]:.3f}" if k in row else ""
            if k in row and k in VM_TARGETS and row["met"] is not None:
                cell = cell if met(row[k], *VM_TARGETS[k]) else f"**{cell}**"
            cells.append(cell)
        lines.append(
            f"| {row['workload']} | {row['exec_mode']} | {row['memory_cfg']} | "
            + " | ".join(cells)
            + f" | {_MET[row['met']]} |"
        )
    return lines


def format_targets(records: Sequence[Any]) -> str:
    """The pass and VM target figures of ``records`` as Markdown tables."""
    sections = [lines for lines in (_pass_lines(records), _vm_lines(records)) if lines]
    return "\n\n".join("\n".join(lines) for lines in sections)
