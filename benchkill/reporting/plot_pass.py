"""Figures of the pass suite: pass time vs bindings, and the speedup TVM / benchkill.

Records read: ``pass_time`` (seconds; params ``family``, ``bindings``, ``impl``; the
module's real size in ``extra["bindings_actual"]`` when present) and ``speedup_vs_tvm``
(ratio, the interleaved TVM / benchkill of each round; without it the speedup is the
ratio of the two medians).  One panel per family, families in the suite's order.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from benchkill.reporting import palette
from benchkill.reporting.headline import speedups
from benchkill.reporting.plot_base import (
    REFERENCE,
    FigureData,
    Series,
    Skip,
    bar_handle,
    draw_bars,
    grid,
    legend,
    line_handle,
    newest,
    ok_records,
    save,
    short_number,
)
from benchkill.results.store import ResultRecord, Results
from benchkill.stats import loglog_slope


def _bindings(r: ResultRecord) -> float:
    """The module's real size when the suite measured it, else the nominal one."""
    return float(r.extra.get("bindings_actual", r.params["bindings"]))


def scaling_series(records: Sequence[ResultRecord]) -> list[Series]:
    """Per family and implementation: median time vs bindings with the IQR."""
    by: dict[tuple[str, str], list[ResultRecord]] = defaultdict(list)
    for r in records:
        by[(str(r.params.get("family", "all")), str(r.params["impl"]))].append(r)
    out = []
    for family, impl in sorted(
        by, key=lambda k: (palette.family_rank(k[0]), palette.impl_rank(k[1]))
    ):
        recs = sorted(by[(family, impl)], key=_bindings)
        out.append(
            Series(
                panel=family,
                label=palette.IMPL_LABELS.get(impl, impl),
                colour=palette.colour(impl),
                x=tuple(_bindings(r) for r in recs),
                y=tuple(r.summary.median for r in recs),
                kind="line",
                low=tuple(r.summary.q1 for r in recs),
                high=tuple(r.summary.q3 for r in recs),
            )
        )
    return out


def pass_time_scaling(runs: Sequence[Results], out_dir: Path) -> list[FigureData]:
    """Pass time vs bindings, log-log, one panel per family, one line per implementation
    with the IQR as error bars and its fitted slope."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    records = ok_records(newest(runs, "pass_time"), "pass_time", ("impl", "bindings"))
    if not records:
        raise Skip("no pass_time records with params impl and bindings")
    series = scaling_series(records)
    panels = tuple(dict.fromkeys(s.panel for s in series))
    fig, axes = grid(len(panels), panel_height=2.8)
    handles = {}
    for ax, panel in zip(axes, panels, strict=True):
        slopes = []
        for s in (s for s in series if s.panel == panel):
            err = [
                [y - lo for y, lo in zip(s.y, s.low, strict=True)],
                [hi - y for y, hi in zip(s.y, s.high, strict=True)],
            ]
            ax.errorbar(s.x, s.y, yerr=err, color=s.colour, marker="o", ms=4, capsize=2)
            handles.setdefault(s.label, line_handle(s.label, s.colour, marker="o"))
            if len(set(s.x)) >= 2 and min(s.y) > 0:
                slope, intercept = loglog_slope(list(s.x), list(s.y))
                ends = (min(s.x), max(s.x))
                fit = [math.exp(intercept) * v**slope for v in ends]
                ax.plot(ends, fit, ls=":", lw=0.8, color=s.colour)
                slopes.append((s, slope))
        for i, (s, slope) in enumerate(slopes):
            ax.text(
                0.03,
                0.95 - 0.1 * i,
                f"{s.label}: slope {slope:.2f}",
                color=s.colour,
                transform=ax.transAxes,
                fontsize=8,
                va="top",
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        # ticks at 1 and 3 times each power of ten, labelled 300, 1k, 3k...: over one
        # decade (the model family) matplotlib labels its minor ticks, on top of each other
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 3.0)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: short_number(x)))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_title(f"family {panel}", fontsize="medium")
        ax.set_xlabel("bindings", fontsize="small")
        ax.set_ylabel("seconds", fontsize="small")
        ax.tick_params(labelsize=8)
    title = "KillAfterLastUse pass time: median of the samples, IQR bars, dotted: fit"
    legend(fig, list(handles.values()), title)
    paths = save(fig, out_dir, "pass_time_scaling")
    return [FigureData("pass_time_scaling", title, panels, tuple(series), paths=paths)]


def speedup_series(run: Results) -> list[Series]:
    """Per family: TVM / benchkill per size (the interleaved ratio's median and IQR)."""
    return [
        Series(
            panel=family,
            label="TVM / benchkill",
            colour=palette.colour("benchkill"),
            x=tuple(short_number(p.bindings) for p in points),
            y=tuple(p.median for p in points),
            low=tuple(p.q1 for p in points),
            high=tuple(p.q3 for p in points),
        )
        for family, points in speedups(run.records).items()
    ]


def pass_speedup(runs: Sequence[Results], out_dir: Path) -> list[FigureData]:
    """TVM's pass time / benchkill's per family and size (above 1: benchkill faster)."""
    run = newest(runs, "speedup_vs_tvm")
    if not ok_records(run, "speedup_vs_tvm"):
        run = newest(runs, "pass_time")
    series = speedup_series(run)
    if not series:
        raise Skip("no speedup_vs_tvm records and no pass_time of both benchkill and tvm")
    fig, axes = grid(len(series), panel_height=2.6)
    for ax, s in zip(axes, series, strict=True):
        bars = [
            Series(s.panel, s.label, s.colour, (x,), (y,), low=(lo,), high=(hi,))
            for x, y, lo, hi in zip(s.x, s.y, s.low, s.high, strict=True)
        ]
        draw_bars(ax, bars, group_gap=0.0)
        ax.axhline(1.0, color=REFERENCE, lw=0.8, ls="--")
        ax.set_title(f"family {s.panel}", fontsize="medium")
        ax.set_xlabel("bindings", fontsize="small")
        ax.set_ylabel("TVM time / benchkill", fontsize="small")
        ax.tick_params(labelsize=8)
    title = "Speedup of benchkill over TVM's C++ pass (median of interleaved rounds, IQR bars)"
    handles = [
        bar_handle("TVM / benchkill (above 1: benchkill is faster)", palette.colour("benchkill")),
        line_handle("equal time", REFERENCE, "--"),
    ]
    legend(fig, handles, title)
    paths = save(fig, out_dir, "pass_speedup")
    panels = tuple(s.panel for s in series)
    return [FigureData("pass_speedup", title, panels, tuple(series), paths=paths)]
