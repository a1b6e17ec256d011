"""Figures of benchmark results, written as PNG and SVG files (never shown on screen).

Each figure reads the records it needs from the newest run that has them (``history``
reads all runs); when those records are absent the figure is skipped with a note, so a
run of one suite still plots what it has.  Figures are drawn on
``matplotlib.figure.Figure`` with the Agg canvas: no pyplot state, no window, safe in
tests and on headless machines.

Record names the figures read (from ``benchkill/bench/suites/pass_suite.py`` and
``vm_suite.py``):

- ``pass_time`` (seconds), params ``impl``, ``family``, ``bindings`` (``extra["bindings_actual"]``
  when present);
- ``vm_peak_bytes`` and ``liveness_bound_bytes`` (bytes), params ``workload``,
  ``exec_mode``, ``kill`` (None: no kills) and ``memory_cfg``;
- memory timelines in ``Record.extra`` of ``vm_peak_bytes`` records: ``static_live_bytes``
  (bytes live after each binding) and ``measured_bytes`` (resident bytes after each VM
  call, bytecode mode only);
- ``vm_run_time`` (seconds), same params.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from benchkill.bench.model import OK, label
from benchkill.errors import BenchkillError
from benchkill.results.store import ResultRecord, Results
from benchkill.stats import loglog_slope

#: Most lines a legend lists before it is left out (it would hide the plot).
MAX_LEGEND = 16


@dataclass(frozen=True)
class PlotOutput:
    """Files written (PNG and SVG of each figure) and why any figure was skipped."""

    paths: tuple[Path, ...]
    notes: tuple[str, ...]


class Skip(Exception):
    """A figure cannot be drawn from these results; the message says why."""


def _figure(ncols: int = 1, width: float = 6.4, height: float = 4.4):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width * ncols, height), layout="constrained")
    FigureCanvasAgg(fig)
    axes = [fig.add_subplot(1, ncols, i + 1) for i in range(ncols)]
    return fig, axes


def _save(fig: Any, out_dir: Path, stem: str) -> list[Path]:
    paths = [out_dir / f"{stem}.png", out_dir / f"{stem}.svg"]
    fig.savefig(paths[0], dpi=110)
    fig.savefig(paths[1], metadata={"Date": None})
    return paths


def _ok(run: Results, metric: str, needs: Sequence[str] = ()) -> list[ResultRecord]:
    return [
        r
        for r in run.records
        if r.metric == metric
        and r.status == OK
        and r.summary is not None
        and all(k in r.params for k in needs)
    ]


def _newest(runs: Sequence[Results], metric: str) -> Results:
    """The newest run with OK records of ``metric`` (runs are sorted by start time), so
    that a pass run and a later vm run given together each give their figures."""
    for run in reversed(runs):
        if _ok(run, metric):
            return run
    return runs[-1]


def _mib(value: float) -> float:
    return value / 2**20


# --- the figures ---------------------------------------------------------------------


def _bindings(r: ResultRecord) -> float:
    """The module's real size when the suite measured it, else the nominal one."""
    return float(r.extra.get("bindings_actual", r.params["bindings"]))


def pass_time_scaling(runs: Sequence[Results], out_dir: Path) -> list[Path]:
    """Pass time vs bindings, log-log, one line per implementation with its fitted slope."""
    records = _ok(_newest(runs, "pass_time"), "pass_time", ("impl", "bindings"))
    if not records:
        raise Skip("no pass_time records with params impl and bindings")
    by_family: dict[str, dict[str, list[ResultRecord]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        by_family[str(r.params.get("family", "all"))][str(r.params["impl"])].append(r)
    fig, axes = _figure(len(by_family))
    for ax, (family, impls) in zip(axes, sorted(by_family.items()), strict=True):
        for impl, recs in sorted(impls.items()):
            recs.sort(key=_bindings)
            x = [_bindings(r) for r in recs]
            y = [r.summary.median for r in recs]
            err = [
                [r.summary.median - r.summary.q1 for r in recs],
                [r.summary.q3 - r.summary.median for r in recs],
            ]
            fitted = len(set(x)) >= 2 and min(y) > 0
            label = impl
            if fitted:
                slope, intercept = loglog_slope(x, y)
                label = f"{impl} (slope {slope:.2f})"
            line = ax.errorbar(x, y, yerr=err, marker="o", capsize=3, label=label)
            if fitted:
                fit = [math.exp(intercept) * v**slope for v in (min(x), max(x))]
                ax.plot([min(x), max(x)], fit, ls="--", lw=0.8, color=line[0].get_color())
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("bindings")
        ax.set_ylabel("pass time (s), median and IQR")
        ax.set_title(f"KillAfterLastUse time, family {family}")
        ax.legend(fontsize="small")
    return _save(fig, out_dir, "pass_time_scaling")


def _kill(value: Any) -> str:
    return "none" if value is None else str(value)


def _variant(r: ResultRecord, with_mode: bool = True) -> str:
    """A VM record's variant: kill, exec mode and (when not the default) allocator."""
    parts = [f"kill={_kill(r.params.get('kill'))}"]
    if with_mode:
        parts.append(str(r.params["exec_mode"]))
    if r.params.get("memory_cfg", "pooled") != "pooled":
        parts.append(f"{r.params['memory_cfg']} allocator")
    return ", ".join(parts)


def _grouped_bars(
    ax: Any, groups: list[str], series: dict[str, dict[str, float]]
) -> dict[tuple[str, str], tuple[float, float]]:
    """Bars of each series side by side per group; returns (series, group) -> (x, width)."""
    width = 0.8 / max(len(series), 1)
    where = {}
    for i, (name, values) in enumerate(sorted(series.items())):
        offset = (i - (len(series) - 1) / 2) * width
        present = [(g, group) for g, group in enumerate(groups) if group in values]
        ax.bar(
            [g + offset for g, _ in present],
            [values[group] for _, group in present],
            width=width,
            label=name,
        )
        where.update({(name, group): (g + offset, width) for g, group in present})
    ax.set_xticks(range(len(groups)), groups, rotation=20, ha="right")
    return where


def vm_peak_memory(runs: Sequence[Results], out_dir: Path) -> list[Path]:
    """Peak VM memory per workload for each kill variant and exec mode, each bar with
    the liveness bound of the same variant."""
    run = _newest(runs, "vm_peak_bytes")
    records = _ok(run, "vm_peak_bytes", ("workload", "kill", "exec_mode"))
    if not records:
        raise Skip("no vm_peak_bytes records with params workload, kill and exec_mode")
    groups = sorted({str(r.params["workload"]) for r in records})
    series: dict[str, dict[str, float]] = defaultdict(dict)
    for r in records:
        series[_variant(r)][str(r.params["workload"])] = _mib(r.summary.median)
    fig, (ax,) = _figure(width=max(6.4, 1.4 * len(groups) + 3))
    where = _grouped_bars(ax, groups, series)
    label = "liveness bound"
    for b in _ok(run, "liveness_bound_bytes", ("workload", "kill", "exec_mode")):
        spot = where.get((_variant(b), str(b.params["workload"])))
        if spot is not None:
            x, width = spot
            bound = _mib(b.summary.median)
            ax.hlines(
                bound,
                x - width / 2,
                x + width / 2,
                colors="black",
                linewidths=2,
                zorder=3,
                label=label,
            )
            label = None
    ax.set_ylabel("peak memory (MiB), median")
    ax.set_title("VM peak memory per variant (black: liveness bound)")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _save(fig, out_dir, "vm_peak_memory")


def memory_timeline(runs: Sequence[Results], out_dir: Path) -> list[Path]:
    """Per workload: static live bytes per binding and the measured bytecode-mode curve,
    one line per kill variant."""
    records = [
        r
        for r in _ok(_newest(runs, "vm_peak_bytes"), "vm_peak_bytes", ("workload", "kill"))
        if r.extra.get("static_live_bytes") or r.extra.get("measured_bytes")
    ]
    if not records:
        raise Skip("no vm_peak_bytes records with static_live_bytes/measured_bytes in extra")
    # per workload and variant, prefer the bytecode record: only it has a measured curve
    chosen: dict[str, dict[str, ResultRecord]] = defaultdict(dict)
    for r in sorted(records, key=lambda r: r.params.get("exec_mode") != "bytecode"):
        chosen[str(r.params["workload"])].setdefault(_variant(r, with_mode=False), r)
    paths = []
    for workload, variants in sorted(chosen.items()):
        fig, (static, measured) = _figure(2)
        for variant, r in sorted(variants.items()):
            if r.extra.get("static_live_bytes"):
                static.plot(
                    [_mib(v) for v in r.extra["static_live_bytes"]],
                    label=variant,
                    drawstyle="steps-post",
                )
            curve = r.extra.get("measured_bytes") or []
            if curve:
                low = min(curve)
                measured.plot([_mib(v - low) for v in curve], label=variant, drawstyle="steps-post")
        static.set_xlabel("binding")
        static.set_ylabel("live tensor bytes (MiB)")
        static.set_title(f"{workload}: static live bytes")
        measured.set_xlabel("VM call")
        measured.set_ylabel("resident memory above the run's lowest (MiB)")
        measured.set_title(f"{workload}: measured, bytecode mode")
        for ax in (static, measured):
            if ax.lines:
                ax.legend(fontsize="small")
            else:
                ax.text(0.5, 0.5, "not measured", ha="center", transform=ax.transAxes)
        paths += _save(fig, out_dir, f"memory_timeline_{_slug(workload)}")
    return paths


def run_time_modes(runs: Sequence[Results], out_dir: Path) -> list[Path]:
    """VM run time per workload and kill variant: bytecode vs compiled side by side."""
    records = _ok(_newest(runs, "vm_run_time"), "vm_run_time", ("workload", "exec_mode"))
    if not records:
        raise Skip("no vm_run_time records with params workload and exec_mode")

    def group(r: ResultRecord) -> str:
        return f"{r.params['workload']}, kill={_kill(r.params.get('kill'))}"

    def mode(r: ResultRecord) -> str:
        cfg = r.params.get("memory_cfg", "pooled")
        return str(r.params["exec_mode"]) + ("" if cfg == "pooled" else f", {cfg} allocator")

    groups = sorted({group(r) for r in records})
    series: dict[str, dict[str, float]] = defaultdict(dict)
    for r in records:
        series[mode(r)][group(r)] = r.summary.median * 1e3
    fig, (ax,) = _figure(width=max(6.4, 0.9 * len(groups) + 3))
    _grouped_bars(ax, groups, series)
    ax.set_ylabel("run time (ms), median")
    ax.set_title("VM run time: bytecode vs compiled")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _save(fig, out_dir, "vm_run_time")


def _when(run: Results) -> datetime:
    try:
        return datetime.fromisoformat(run.settings.started_at)
    except ValueError:
        raise BenchkillError(
            f"run of {run.machine.name}: bad start time {run.settings.started_at!r}"
        ) from None


def history(runs: Sequence[Results], out_dir: Path) -> list[Path]:
    """Each benchmark's median over the runs, relative to its first value, per metric."""
    if len(runs) < 2:
        raise Skip("history needs two or more results files")
    series: dict[tuple[str, str], dict[str, list[tuple[datetime, float]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for run in runs:
        when = _when(run)
        for r in run.records:
            if r.status == OK and r.summary is not None and r.summary.median > 0:
                case = label(r.suite, r.name, r.params)
                series[(r.suite, r.metric)][case].append((when, r.summary.median))
    paths = []
    for (suite, metric), lines in sorted(series.items()):
        lines = {k: sorted(v) for k, v in lines.items() if len(v) >= 2}
        if not lines:
            continue
        fig, (ax,) = _figure(width=8)
        for case, points in sorted(lines.items()):
            first = points[0][1]
            ax.plot([t for t, _ in points], [v / first for _, v in points], marker="o", label=case)
        ax.axhline(1.0, color="gray", lw=0.8)
        ax.set_ylabel(f"{metric} relative to its first run")
        ax.set_title(f"history of {suite} {metric}")
        if len(lines) <= MAX_LEGEND:
            ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
        fig.autofmt_xdate()
        paths += _save(fig, out_dir, f"history_{_slug(suite)}_{_slug(metric)}")
    if not paths:
        raise Skip("no benchmark appears in two or more runs")
    return paths


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in text)


#: Figure name -> function; each returns the files it wrote or raises Skip.
FIGURES: dict[str, Callable[[Sequence[Results], Path], list[Path]]] = {
    "pass time scaling": pass_time_scaling,
    "VM peak memory": vm_peak_memory,
    "memory timeline": memory_timeline,
    "VM run time by exec mode": run_time_modes,
    "history": history,
}


def plot_results(runs: Sequence[Results], out_dir: Path) -> PlotOutput:
    """Draw every figure the runs have records for; runs are ordered by start time."""
    if not runs:
        raise BenchkillError("no results to plot")
    runs = sorted(runs, key=_when)
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BenchkillError(f"{out_dir}: cannot create directory: {exc.strerror}") from None
    paths: list[Path] = []
    notes: list[str] = []
    for name, draw in FIGURES.items():
        try:
            paths += draw(runs, out_dir)
        except Skip as skip:
            notes.append(f"skipped {name}: {skip}")
    return PlotOutput(tuple(paths), tuple(notes))
