"""The issues' target figures, computed from results files (pure; no measurement here).

Pass suite (issue 16): benchkill / TVM time of every family at 3,000 bindings (<= 0.3)
and at every size from 30,000 on (<= 0.33; chain at 200,000: <= 0.15), of every size of
the ``model`` family (<= 0.5), the naive port over benchkill (reported, no target), and
the scaling exponent of benchkill on every family from 3,000 to 600,000 bindings
(least-squares slope of log time vs log bindings; <= 1.0).  Times are the minimum of the
raw samples of one run (the least disturbed estimate of a deterministic computation),
in CPU time when the records have it (``pass_cpu_time``: other jobs on a shared machine
do not add to it), else wall time; the samples of both implementations come from the
same interleaved rounds.  VM suite: the figures of
:func:`benchkill.bench.suites.vm_suite.target_figures`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from benchkill.bench.model import OK
from benchkill.stats import loglog_slope

#: benchkill / TVM targets: at 3,000 bindings, at 30,000 and more, chain at 200,000, model
SMALL, SMALL_TARGET = 3_000, 0.3
LARGE, LARGE_TARGET = 30_000, 0.33
CHAIN_200K_TARGET = 0.15
MODEL, MODEL_TARGET = "model", 0.5
#: Scaling exponent target of benchkill on every family, and its range of sizes.
EXPONENT_TARGET, EXPONENT_RANGE = 1.0, (3_000, 600_000)
#: The metric of the figures: CPU time when the records have it, else wall time.
METRICS = ("pass_cpu_time", "pass_time")


def _times(records: Iterable[Any], metric: str) -> dict[tuple[str, int, str], float]:
    out = {}
    for r in records:
        if r.suite == "pass" and r.metric == metric and r.status == OK and r.samples:
            p = r.params
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

    benchkill / TVM for every (family, size) with a target, and naive / benchkill (no
    target) for every size the naive port ran on.
    """
    metric = metric or pick_metric(records)
    times = _times(records, metric)
    # every measured (family, size), failed ones included (their figures are n/a)
    cases = {
        (r.params["family"], int(r.params["bindings"]))
        for r in records
        if r.suite == "pass" and r.metric == metric
    }
    rows = []
    for family, bindings in sorted(cases):
        pairs = [("benchkill", "tvm", _target(family, bindings)), ("naive", "benchkill", None)]
        for top, bottom, target in pairs:
            a, b = times.get((family, bindings, top)), times.get((family, bindings, bottom))
            if top == "benchkill" and target is None:
                continue
            if top == "naive" and a is None:
                continue
            value = a / b if a is not None and b else None
            met = None if value is None or target is None else value <= target
            rows.append(
                {
                    "figure": f"{top} / {bottom} time, {family} at {bindings:,} bindings",
                    "value": value,
                    "target": "reported" if target is None else f"<= {target:g}",
                    "met": met,
                }
            )
    return rows


def scaling_exponents(
    records: Sequence[Any],
    family: str = "chain",
    span: tuple[int, int] = EXPONENT_RANGE,
    metric: str | None = None,
) -> dict[str, float]:
    """Slope of log(min time) vs log(bindings) per implementation, sizes within ``span``."""
    points: dict[str, list[tuple[float, float]]] = {}
    for (fam, bindings, impl), seconds in _times(records, metric or pick_metric(records)).items():
        if fam == family and span[0] <= bindings <= span[1]:
            points.setdefault(impl, []).append((float(bindings), seconds))
    slopes = {}
    for impl, pts in sorted(points.items()):
        if len(pts) >= 2:
            xs, ys = zip(*sorted(pts), strict=True)
            slopes[impl] = loglog_slope(list(xs), list(ys))[0]
    return slopes


def format_targets(records: Sequence[Any]) -> str:
    """The pass and VM target figures of ``records`` as Markdown tables."""
    metric = pick_metric(records)
    lines = [f"| pass figure ({metric}) | measured | target | met |", "|---|---|---|---|"]
    rows = pass_targets(records, metric)
    if not rows:
        lines = []
    for row in rows:
        value = "n/a" if row["value"] is None else f"{row['value']:.3f}"
        met = {None: "", True: "yes", False: "**no**"}[row["met"]]
        if row["value"] is None and row["target"] != "reported":
            met = "n/a"
        lines.append(f"| {row['figure']} | {value} | {row['target']} | {met} |")
    lo, hi = EXPONENT_RANGE
    families = sorted({r.params["family"] for r in records if r.suite == "pass"})
    for family in families:
        for impl, slope in scaling_exponents(records, family, metric=metric).items():
            target = f"<= {EXPONENT_TARGET}" if impl == "benchkill" else "reported"
            met = ("yes" if slope <= EXPONENT_TARGET else "**no**") if impl == "benchkill" else ""
            lines.append(
                f"| scaling exponent of {impl}, {family} {lo:,}-{hi:,} bindings (sizes measured) "
                f"| {slope:.3f} | {target} | {met} |"
            )
    from benchkill.bench.suites.vm_suite import target_figures

    vm_rows = target_figures(records)
    if vm_rows:
        if lines:
            lines.append("")
        keys = [
            "peak_over_bound",
            "none_over_kills",
            "benchkill_over_tvm",
            "beyond_over_tvm",
            "kill_time_ratio",
            "compiled_over_bytecode",
        ]
        lines += ["| workload | exec mode | allocator | " + " | ".join(keys) + " |"]
        lines.append("|---" * (3 + len(keys)) + "|")
        for row in vm_rows:
            cells = [f"{row[k]:.3f}" if k in row else "" for k in keys]
            lines.append(
                f"| {row['workload']} | {row['exec_mode']} | {row['memory_cfg']} | "
                + " | ".join(cells)
                + " |"
            )
    return "\n".join(lines)
