"""History figures: each metric across several runs, in commit order.

One figure per suite and metric that has a case in two or more runs.  The x axis is the
runs in the order they were started, labelled with their short commit ("q": a quick run;
"#2": a second run of one commit).  One panel per family (pass suite) or workload (vm
suite); one line per implementation or kill variant in the palette's colours (exec mode
and allocator as line style): the geometric mean over the panel's cases (the sizes of a
family) of median / the case's median in its first run (1: no change), with the range
over the cases shaded; memory (in MiB) and ratios (the speedup) as the medians themselves.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchkill.bench.model import OK, canonical_unit, params_text
from benchkill.reporting import palette
from benchkill.reporting.plot_base import (
    REFERENCE,
    FigureData,
    Series,
    Skip,
    draw_lines,
    grid,
    legend,
    line_handle,
    mib,
    save,
    slug,
)
from benchkill.results.store import ResultRecord, Results

#: Units drawn as values (axis label, conversion), not relative to the first run: memory
#: and ratios such as the speedup mean more as they are.
ABSOLUTE: dict[str, tuple[str, Callable[[float], float]]] = {
    "bytes": ("MiB", mib),
    "ratio": ("ratio", float),
}
#: Most x tick labels shown; with more runs every k-th is labelled.
MAX_TICKS = 12
#: The metrics of benchkill's own suites that get a history (others: secondary figures
#: such as build time; records of other suites, e.g. asv's, all get one).
HISTORY_METRICS = {
    "pass": ("pass_time", "speedup_vs_tvm", "time_over_floor", "pass_instructions"),
    "vm": ("vm_peak_bytes", "vm_run_time"),
}


def run_labels(runs: Sequence[Results]) -> list[str]:
    """Short commit per run, ``q`` for a quick run, ``#k`` for repeated commits."""
    labels, seen = [], defaultdict(int)
    for run in runs:
        commit = (run.machine.git_commit or "nogit")[:7]
        seen[commit] += 1
        text = commit + (f" #{seen[commit]}" if seen[commit] > 1 else "")
        labels.append(text + (" q" if run.settings.quick else ""))
    return labels


#: First item of the sort key of a line that has no implementation or kill variant (told
#: apart by its parameters alone: :data:`palette.OTHER_LINES`).
_NO_VARIANT = 2


def _panel_variant(r: ResultRecord) -> tuple[str, str, str, str, tuple[Any, ...]]:
    """(panel, variant label, colour, line style, sort key) of a record."""
    p = r.params
    if "impl" in p:
        impl = str(p["impl"])
        panel = str(p.get("family", r.name))
        label = palette.IMPL_LABELS.get(impl, impl)
        if r.metric == "speedup_vs_tvm":
            label = "TVM / benchkill"
        elif r.metric == "time_over_floor":
            label = "benchkill / floor"
        return panel, label, palette.colour(impl), "-", (0, palette.impl_rank(impl))
    if "kill" in p and "exec_mode" in p:
        mode = (str(p["exec_mode"]), str(p.get("memory_cfg", "pooled")))
        kill = palette.kill_name(p["kill"])
        label = f"{palette.KILL_LABELS.get(kill, kill)}, {palette.mode_label(mode)}"
        key = (1, palette.mode_rank(mode), palette.kill_rank(kill))
        return (
            str(p.get("workload", r.name)),
            label,
            palette.colour(kill),
            palette.linestyle(mode),
            key,
        )
    return (
        r.name,
        params_text(p) or r.name,
        palette.OTHER_COLOUR,
        "-",
        (_NO_VARIANT, params_text(p)),
    )


def _line_order(line: tuple[Any, ...], first_seen: dict[str, int]) -> tuple[Any, ...]:
    """Panels in the suite's order (families by the palette), lines by their rank."""
    panel = line[0]
    family = palette.family_rank(panel) if panel in palette.FAMILY_ORDER else (99, "")
    return (family, first_seen[panel], line[1])


def history_series(runs: Sequence[Results]) -> dict[tuple[str, str, str], list[Series]]:
    """(suite, metric, unit) -> its lines in drawing order.  x: run index; y: the
    geometric mean over the line's cases of median / the case's first median (unit
    ""), or for the units of :data:`ABSOLUTE` of the medians themselves; low/high: their
    range over the cases."""
    firsts: dict[tuple[Any, ...], float] = {}
    counts: dict[tuple[Any, ...], int] = defaultdict(int)
    for run in runs:
        for r in run.records:
            if r.status == OK and r.summary is not None and r.summary.median > 0:
                counts[r.key] += 1
    points: dict[tuple[str, str], dict[tuple[Any, ...], dict[int, list[float]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    styles: dict[tuple[Any, ...], tuple[str, str]] = {}
    for index, run in enumerate(runs):
        for r in run.records:
            key = r.key
            if r.status != OK or r.summary is None or r.summary.median <= 0 or counts[key] < 2:
                continue
            if r.metric not in HISTORY_METRICS.get(r.suite, (r.metric,)):
                continue
            first = firsts.setdefault(key, r.summary.median)
            panel, label, colour, style, rank = _panel_variant(r)
            line = (panel, rank, label)
            styles[line] = (colour, style)
            unit = canonical_unit(r.unit)
            absolute = ABSOLUTE.get(unit)
            value = absolute[1](r.summary.median) if absolute else r.summary.median / first
            points[(r.suite, r.metric, unit if absolute else "")][line][index].append(value)
    out = {}
    for figure, lines in sorted(points.items()):
        series = []
        first_seen = {panel: i for i, panel in enumerate(dict.fromkeys(k[0] for k in lines))}
        others: dict[str, int] = defaultdict(int)  # panel -> its lines of no variant so far
        for line in sorted(lines, key=lambda k, seen=first_seen: _line_order(k, seen)):
            panel, rank, label = line
            by_run = sorted(lines[line].items())
            colour, style = styles[line]
            if rank[0] == _NO_VARIANT:
                colour, style = palette.OTHER_LINES[others[panel] % len(palette.OTHER_LINES)]
                others[panel] += 1
            series.append(
                Series(
                    panel,
                    label,
                    colour,
                    x=tuple(i for i, _ in by_run),
                    y=tuple(math.exp(sum(map(math.log, v)) / len(v)) for _, v in by_run),
                    kind="line",
                    style=style,
                    low=tuple(min(v) for _, v in by_run),
                    high=tuple(max(v) for _, v in by_run),
                )
            )
        out[figure] = series
    return out


#: Colour and line style of a change point's mark (``benchkill history --plot``).
CHANGE_STYLE = (REFERENCE, ":")


def _change_marks(
    changes: Sequence[Any], suite: str, metric: str, runs: Sequence[Results], used: list[int]
) -> list[Series]:
    """One vertical mark per change point of this figure: at the first drawn run of the
    commit where the new level starts, in the panel of the changed case."""
    marks = {}
    for c in changes:
        r = c.record
        if r.suite != suite or r.metric != metric:
            continue
        at = next((i for i, index in enumerate(used) if _short(runs[index]) == c.commit[:7]), None)
        if at is not None:
            panel = _panel_variant(r)[0]
            marks[(panel, at)] = Series(
                panel, f"change {c.commit[:7]}", CHANGE_STYLE[0], (at,), (), "change", ":"
            )
    return list(marks.values())


def _short(run: Results) -> str:
    return (run.machine.git_commit or "nogit")[:7]


def history(
    runs: Sequence[Results], out_dir: Path, changes: Sequence[Any] = ()
) -> list[FigureData]:
    """Each metric's medians across the runs, relative to each case's first run;
    ``changes`` (:class:`~benchkill.reporting.changepoints.ChangePoint`) are marked by a
    dotted vertical line at the run where the new level starts."""
    if len(runs) < 2:
        raise Skip("history needs two or more results files")
    figures = []
    for (suite, metric, unit), by_index in history_series(runs).items():
        absolute = ABSOLUTE.get(unit)
        # the x axis: only the runs that measured this metric, in order
        used = sorted({x for s in by_index for x in s.x})
        position = {index: i for i, index in enumerate(used)}
        labels = run_labels([runs[i] for i in used])
        series = [replace(s, x=tuple(position[x] for x in s.x)) for s in by_index]
        step = max(1, -(-len(used) // MAX_TICKS))
        panels = list(dict.fromkeys(s.panel for s in series))
        marks = _change_marks(changes, suite, metric, runs, used)
        fig, axes = grid(len(panels), panel_height=2.6)
        handles = {}
        for ax, panel in zip(axes, panels, strict=True):
            lines = [s for s in series if s.panel == panel]
            draw_lines(ax, lines, marker="o", ms=3)
            for s in lines:
                if s.high != s.low:
                    ax.fill_between(s.x, s.low, s.high, color=s.colour, alpha=0.12, lw=0)
                handles.setdefault(s.label, line_handle(s.label, s.colour, s.style or "-"))
            if not absolute:
                ax.axhline(1.0, color=REFERENCE, lw=0.6)
            for m in (m for m in marks if m.panel == panel):
                ax.axvline(m.x[0] - 0.5, color=m.colour, ls=m.style, lw=1.2)
                handles.setdefault("change point", line_handle("change point", *CHANGE_STYLE))
            ticks = list(range(0, len(used), step))
            ax.set_xticks(ticks, [labels[i] for i in ticks], rotation=45, ha="right", fontsize=7)
            ax.set_xlim(-0.3, len(used) - 0.7)
            ax.set_title(panel, fontsize="medium")
            ax.set_ylabel(absolute[0] if absolute else "relative to first run", fontsize="small")
            ax.tick_params(axis="y", labelsize=8)
        what = f"median ({absolute[0]})" if absolute else "median / the case's first run"
        title = f"History of {suite} {metric}: {what}, runs in commit order"
        legend(fig, list(handles.values()), title, ncols=4)
        stem = f"history_{slug(suite)}_{slug(metric)}"
        paths = save(fig, out_dir, stem)
        figures.append(
            FigureData(
                stem,
                title,
                tuple(panels),
                (*series, *marks),
                paths=paths,
                xlabels=tuple(labels),
            )
        )
    if not figures:
        raise Skip("no benchmark appears in two or more runs")
    return figures
