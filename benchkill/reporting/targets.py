"""The issues' target figures, computed from results files (pure; no measurement here).

Pass suite (on the ``chain`` family): benchkill / TVM time at 3,000 and 200,000
bindings, naive / benchkill at 30,000, and the scaling exponent of each implementation
(least-squares slope of log time vs log bindings).  VM suite: the figures of
:func:`benchkill.bench.suites.vm_suite.target_figures`.  Times are the minimum of the raw
samples of one run (the least disturbed estimate of a deterministic computation);
the samples of both implementations come from the same interleaved rounds.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from benchkill.bench.model import OK
from benchkill.stats import loglog_slope

#: (metric, family, bindings, numerator impl, denominator impl, target, "<=" or ">=")
PASS_TARGETS = (
    ("pass_time", "chain", 3_000, "benchkill", "tvm", 1.0, "<="),
    ("pass_time", "chain", 200_000, "benchkill", "tvm", 0.33, "<="),
    ("pass_time", "chain", 30_000, "naive", "benchkill", 20.0, ">="),
)
#: Scaling exponent target of benchkill on chain, and its range of sizes.
EXPONENT_TARGET, EXPONENT_RANGE = 1.05, (3_000, 600_000)


def _times(records: Iterable[Any], metric: str) -> dict[tuple[str, int, str], float]:
    out = {}
    for r in records:
        if r.suite == "pass" and r.metric == metric and r.status == OK and r.samples:
            p = r.params
            out[(p["family"], int(p["bindings"]), p["impl"])] = min(r.samples)
    return out


def pass_targets(records: Sequence[Any], metric: str = "pass_time") -> list[dict[str, Any]]:
    """One row per pass target: the measured ratio, the target, and whether it is met."""
    times = _times(records, metric)
    rows = []
    for _metric, family, bindings, top, bottom, target, sense in PASS_TARGETS:
        a, b = times.get((family, bindings, top)), times.get((family, bindings, bottom))
        value = a / b if a is not None and b else None
        met = None if value is None else (value <= target if sense == "<=" else value >= target)
        rows.append(
            {
                "figure": f"{top} / {bottom} time, {family} at {bindings:,} bindings",
                "value": value,
                "target": f"{sense} {target:g}",
                "met": met,
            }
        )
    return rows


def scaling_exponents(
    records: Sequence[Any],
    family: str = "chain",
    span: tuple[int, int] = EXPONENT_RANGE,
    metric: str = "pass_time",
) -> dict[str, float]:
    """Slope of log(min time) vs log(bindings) per implementation, sizes within ``span``."""
    points: dict[str, list[tuple[float, float]]] = {}
    for (fam, bindings, impl), seconds in _times(records, metric).items():
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
    lines = ["| pass figure | measured | target | met |", "|---|---|---|---|"]
    rows = pass_targets(records)
    if all(row["value"] is None for row in rows):
        lines, rows = [], []
    for row in rows:
        value = "n/a" if row["value"] is None else f"{row['value']:.3f}"
        met = {None: "n/a", True: "yes", False: "**no**"}[row["met"]]
        lines.append(f"| {row['figure']} | {value} | {row['target']} | {met} |")
    slopes = scaling_exponents(records)
    lo, hi = EXPONENT_RANGE
    for impl, slope in slopes.items():
        target = f"<= {EXPONENT_TARGET}" if impl == "benchkill" else ""
        met = ("yes" if slope <= EXPONENT_TARGET else "**no**") if impl == "benchkill" else ""
        lines.append(
            f"| scaling exponent of {impl}, chain {lo:,}-{hi:,} bindings (sizes measured) "
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
