"""The answers a reader comes for, computed from records (pure; no measurement here).

- :func:`speedups`: TVM's pass time / benchkill's per family and size (above 1:
  benchkill is faster), from the interleaved ``speedup_vs_tvm`` rounds, or the ratio of
  the ``pass_time`` medians when a run has no such records;
- :func:`memory_saved`: per VM workload, exec mode and allocator, the peak of each kill
  variant and what benchkill's kills save against the build without kills;
- :func:`target_results`: every target of :mod:`benchkill.reporting.targets`, met, not
  met, or not measured by this run.

The report's headline section, ``benchkill run``'s closing summary and the speedup figure
use them.  ``records`` are stored ResultRecords (failed ones are skipped).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from benchkill.bench.model import OK
from benchkill.reporting import palette
from benchkill.reporting.targets import (
    EXPONENT_RANGE,
    EXPONENT_TARGET,
    REPORTED,
    RESOLUTION_BYTES,
    VM_TARGET_WORKLOADS,
    VM_TARGETS,
    benchkill_exponents,
    met,
    pass_targets,
    vm_targets,
)


@dataclass(frozen=True)
class Speedup:
    """TVM / benchkill at one size: the median and quartiles of the per-round ratios."""

    family: str
    bindings: int
    median: float
    q1: float
    q3: float


def _ok(records: Sequence[Any], metric: str, needs: Sequence[str]) -> list[Any]:
    return [
        r
        for r in records
        if r.metric == metric
        and r.status == OK
        and r.summary is not None
        and all(k in r.params for k in needs)
    ]


def speedups(records: Sequence[Any]) -> dict[str, list[Speedup]]:
    """family -> TVM / benchkill per size, smallest first; families in the suite's order."""
    out: dict[str, list[Speedup]] = defaultdict(list)
    for r in _ok(records, "speedup_vs_tvm", ("family", "bindings")):
        s = r.summary
        family = str(r.params["family"])
        out[family].append(Speedup(family, int(r.params["bindings"]), s.median, s.q1, s.q3))
    if not out:  # runs without interleaved ratios: the ratio of the medians
        times = {
            (str(r.params["family"]), int(r.params["bindings"]), r.params["impl"]): r.summary
            for r in _ok(records, "pass_time", ("family", "bindings", "impl"))
        }
        for (family, n, impl), s in times.items():
            tvm = times.get((family, n, "tvm"))
            if impl == "benchkill" and tvm is not None and s.median > 0:
                ratio = tvm.median / s.median
                out[family].append(Speedup(family, n, ratio, ratio, ratio))
    return {
        f: sorted(out[f], key=lambda p: p.bindings) for f in sorted(out, key=palette.family_rank)
    }


@dataclass(frozen=True)
class MemoryRow:
    """Peak memory (median bytes) of each kill variant of one workload, mode, allocator."""

    workload: str
    exec_mode: str
    memory_cfg: str
    peaks: dict[str, float]  # kill name ("none", "tvm", ...) -> bytes
    bound: float | None  # benchkill's liveness bound

    @property
    def resolved(self) -> bool:
        """Whether any peak is above what the measurement resolves."""
        return max(self.peaks.values(), default=0.0) >= RESOLUTION_BYTES

    def saved_bytes(self, kill: str = "benchkill") -> float | None:
        """No kills minus the peak with ``kill``'s kills."""
        if "none" in self.peaks and kill in self.peaks:
            return self.peaks["none"] - self.peaks[kill]
        return None

    def ratio(self, kill: str = "benchkill") -> float | None:
        """No kills / ``kill``'s kills (how many times less memory the kills need); None
        when no peak is above what the measurement resolves."""
        if self.resolved and self.peaks.get(kill) and "none" in self.peaks:
            return self.peaks["none"] / self.peaks[kill]
        return None


def memory_saved(records: Sequence[Any]) -> list[MemoryRow]:
    """One row per workload (in the order the suite ran them), exec mode and allocator."""
    needs = ("workload", "exec_mode", "kill")
    peaks: dict[tuple[str, str, str], dict[str, float]] = {}
    bounds: dict[tuple[str, str, str], float] = {}
    for r in _ok(records, "vm_peak_bytes", needs):
        key = (
            str(r.params["workload"]),
            str(r.params["exec_mode"]),
            str(r.params.get("memory_cfg", "pooled")),
        )
        peaks.setdefault(key, {})[palette.kill_name(r.params["kill"])] = r.summary.median
    for r in _ok(records, "liveness_bound_bytes", needs):
        if r.params["kill"] == "benchkill":
            key = (
                str(r.params["workload"]),
                str(r.params["exec_mode"]),
                str(r.params.get("memory_cfg", "pooled")),
            )
            bounds[key] = r.summary.median
    workloads = list(dict.fromkeys(key[0] for key in peaks))

    def order(key: tuple[str, str, str]) -> tuple[Any, ...]:
        return (workloads.index(key[0]), palette.mode_rank((key[1], key[2])))

    rows = []
    for key in sorted(peaks, key=order):
        ordered = dict(sorted(peaks[key].items(), key=lambda kv: palette.kill_rank(kv[0])))
        rows.append(MemoryRow(*key, ordered, bounds.get(key)))
    return rows


#: The VM targets in words.
VM_TARGET_WORDS = {
    "peak_over_bound": "peak with benchkill's kills / liveness bound",
    "none_over_kills": "peak without kills / with benchkill's kills",
}


@dataclass(frozen=True)
class TargetResult:
    """One target: what it is, the measured value (None: not measured) and whether met."""

    figure: str
    value: float | None
    target: str
    met: bool | None
    note: str = ""  # why a measured value is not judged


#: VM targets that depend on the workload's size: a --quick run's smaller workloads
#: (8 layers, not 24) cannot reach them, so they are shown but not judged.
SIZE_DEPENDENT = ("none_over_kills",)


def target_results(records: Sequence[Any], quick: bool = False) -> list[TargetResult]:
    """Every pass and VM target with its measured value and whether it is met; with
    ``quick`` (the records of a --quick run), size-dependent VM targets are not judged."""
    out = [
        TargetResult(row["figure"], row["value"], row["target"], row["met"])
        for row in pass_targets(records)
    ]
    lo, hi = EXPONENT_RANGE
    # every family's exponent; when none is measured (one size each), chain's as missing
    slopes: dict[str, float | None] = benchkill_exponents(records) or {"chain": None}
    out += [
        TargetResult(
            f"scaling exponent of benchkill, {family} {lo:,}-{hi:,} bindings",
            slope,
            f"<= {EXPONENT_TARGET:g}",
            met(slope, "<=", EXPONENT_TARGET),
        )
        for family, slope in slopes.items()
    ]
    rows = vm_targets(records)
    rows.sort(key=lambda r: (r["workload"], palette.mode_rank((r["exec_mode"], r["memory_cfg"]))))
    for row in rows:
        if row["workload"].split("-", 1)[0] not in VM_TARGET_WORKLOADS:
            continue
        where = f"{row['workload']} ({palette.mode_label((row['exec_mode'], row['memory_cfg']))})"
        for name, (sense, target) in VM_TARGETS.items():
            value = row.get(name)
            words = f"{VM_TARGET_WORDS.get(name, name)}, {where}"
            judged, note = met(value, sense, target), ""
            if quick and name in SIZE_DEPENDENT and value is not None:
                judged, note = None, "not judged: set for the full-size workload"
            out.append(TargetResult(words, value, f"{sense} {target:g}", judged, note))
    return out


def met_counts(results: Sequence[TargetResult]) -> tuple[int, int, int]:
    """(met, not met, not measured or not judged); figures only reported (no target) are
    in none of them."""
    return (
        sum(t.met is True for t in results),
        sum(t.met is False for t in results),
        sum(t.met is None and t.target != REPORTED for t in results),
    )


def _memory_lines(rows: Sequence[MemoryRow]) -> list[str]:
    """Per workload: no kills / benchkill's kills in each exec mode (and beyond's where
    it saves more)."""
    lines = []
    for workload in dict.fromkeys(r.workload for r in rows):
        parts = []
        for row in (r for r in rows if r.workload == workload):
            mode = palette.mode_label((row.exec_mode, row.memory_cfg))
            ratio, beyond = row.ratio(), row.ratio("beyond")
            if not row.resolved:
                parts.append(f"{mode}: peaks below 1 MiB")
            elif ratio:
                extra = f" (beyond {beyond:.2f}x)" if beyond and beyond > ratio * 1.05 else ""
                parts.append(f"{mode}: {ratio:.2f}x{extra}")
        lines.append(f"  {workload}: " + ", ".join(parts))
    return lines


def summary_lines(records: Sequence[Any], quick: bool = False) -> list[str]:
    """The headline in a few lines of text (``benchkill run``'s closing summary)."""
    lines = []
    table = speedups(records)
    if table:
        lines.append("pass time, TVM / benchkill (above 1: benchkill is faster):")
        for family, points in table.items():
            sizes = ", ".join(f"{p.bindings / 1000:g}k: {p.median:.2f}x" for p in points)
            lines.append(f"  {family}: {sizes}")
    rows = memory_saved(records)
    if rows:
        lines.append("VM peak memory, no kills / benchkill's kills:")
        lines += _memory_lines(rows)
    results = target_results(records, quick)
    met_, not_met, missing = met_counts(results)
    if met_ or not_met:
        text = f"targets: {met_} met, {not_met} not met"
        if missing:
            text += f", {missing} not measured or not judged (sizes of a full run)"
        lines.append(text)
        lines += [
            f"  not met: {t.figure}: {t.value:.3g}, wanted {t.target}"
            for t in results
            if t.met is False
        ]
    return lines
