"""Figures of the vm suite: peak memory and run time per workload, memory timelines.

Records read (params ``workload``, ``exec_mode``, ``memory_cfg``, ``kill``; None: no kills):
``vm_peak_bytes`` and ``liveness_bound_bytes`` (bytes), ``vm_run_time`` (seconds), and
the timelines in ``extra`` of ``vm_peak_bytes`` records: ``static_live_bytes`` (bytes live
after each binding, with ``static_points`` naming the binding) and ``measured_bytes``
(resident bytes after each VM call, bytecode mode only).  When a record's ``extra`` also
holds :data:`HOLDERS_KEY` (the live set at the peak: a list of ``{"var", "bytes"}``,
largest first), the timeline labels the largest holders at the peak.

One panel per workload, in the order the suite ran them: bars grouped by exec mode and
allocator (hatch), one colour per kill variant in :data:`palette.KILL_ORDER`, the value on
each bar.  A workload without a value to draw says why in its panel.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchkill.bench.model import EXPECTED_FAILURE, OK
from benchkill.reporting import palette
from benchkill.reporting.plot_base import (
    REFERENCE,
    FigureData,
    Series,
    Skip,
    bar_handle,
    bound_ticks,
    draw_bars,
    draw_lines,
    same_lines,
    wrap,
    footnote,
    grid,
    legend,
    line_handle,
    mib,
    newest,
    ok_records,
    save,
    slug,
)
from benchkill.reporting.targets import RESOLUTION_BYTES
from benchkill.results.store import ResultRecord, Results

#: Key of the live set at the peak in a VM record's ``extra`` (list of {"var", "bytes"}).
HOLDERS_KEY = "at_peak"
#: Largest holders labelled at a peak.
TOP_HOLDERS = 3
_NEEDS = ("workload", "exec_mode", "kill")


def _mode(r: ResultRecord) -> tuple[str, str]:
    return (str(r.params["exec_mode"]), str(r.params.get("memory_cfg", "pooled")))


def _slot_key(r: ResultRecord) -> tuple[Any, ...]:
    return (palette.mode_rank(_mode(r)), palette.kill_rank(r.params.get("kill")))


def _workloads(run: Results) -> list[str]:
    """Workloads in the order the suite measured them."""
    return list(dict.fromkeys(str(r.params["workload"]) for r in run.records if "workload" in r.params))


def _status_note(run: Results, workload: str, mode: tuple[str, str], kill: Any) -> str | None:
    """"expected failure" or "failed" when a variant has a non-OK record and no value."""
    for r in run.records:
        p = r.params
        if p.get("workload") == workload and p.get("kill") == kill and r.status != OK:
            if "exec_mode" in p and _mode(r) == mode:
                return "expected failure" if r.status == EXPECTED_FAILURE else "failed"
    return None


#: A bar slot: (exec mode, allocator), kill variant name, the bar (or note) drawn there.
Slot = tuple[tuple[str, str], str, Series]


def bar_series(
    run: Results, metric: str, scale: float = 1.0, with_iqr: bool = False
) -> dict[str, list[Slot]]:
    """workload -> the slots of its panel in drawing order (exec mode and allocator, then
    kill variant), with a note slot for a variant whose build or run did not succeed."""
    slots: dict[str, dict[tuple[tuple[str, str], str], Series]] = {w: {} for w in _workloads(run)}
    for r in ok_records(run, metric, _NEEDS):
        mode, kill = _mode(r), palette.kill_name(r.params.get("kill"))
        s = r.summary
        slots[str(r.params["workload"])][(mode, kill)] = Series(
            panel=str(r.params["workload"]),
            label=palette.KILL_LABELS.get(kill, kill),
            colour=palette.colour(kill),
            x=(palette.mode_label(mode),),
            y=(s.median * scale,),
            style=palette.hatch(mode),
            low=(s.q1 * scale,) if with_iqr else (),
            high=(s.q3 * scale,) if with_iqr else (),
        )
    for r in run.records:  # variants with a failed or expected-failure record, no value
        if r.status == OK or not all(k in r.params for k in _NEEDS):
            continue
        workload, mode, kill = str(r.params["workload"]), _mode(r), palette.kill_name(r.params["kill"])
        if workload in slots and (mode, kill) not in slots[workload]:
            note = "expected failure" if r.status == EXPECTED_FAILURE else "failed"
            slots[workload][(mode, kill)] = Series(
                workload, f"{kill}: {note}", palette.colour(kill),
                (palette.mode_label(mode),), (0.0,), kind="note",
            )  # fmt: skip

    def rank(key: tuple[tuple[str, str], str]) -> tuple[Any, ...]:
        return (palette.mode_rank(key[0]), palette.kill_rank(key[1]))

    return {
        w: [(mode, kill, by[(mode, kill)]) for mode, kill in sorted(by, key=rank)]
        for w, by in slots.items()
    }


def _kill_legend(series: Sequence[Series], with_bound: bool) -> list[Any]:
    kills = {s.label: s.colour for s in series if s.kind == "bar"}
    modes = dict.fromkeys(s.x[0] for s in series if s.kind == "bar")
    hatches = {palette.mode_label(m): palette.hatch(m) for m in palette.MODE_ORDER}
    handles = [bar_handle(label, colour) for label, colour in kills.items()]
    handles += [bar_handle(m, "#ffffff", hatches.get(m, "++")) for m in modes]
    if with_bound:
        handles.append(line_handle("liveness bound", REFERENCE, lw=2.5))
    return handles


def _bar_figure(
    stem: str,
    title: str,
    units: dict[str, str],
    panels: dict[str, list[Slot]],
    explain: dict[str, str],
    out_dir: Path,
    bounds: dict[str, list[float | None]] | None = None,
) -> FigureData:
    """One panel per workload: its bars, or the explanation of why it has none."""
    names = list(panels)
    fig, axes = grid(len(names), panel_height=2.6, ncols=2 if len(names) > 1 else 1)
    texts, series = [], []
    for ax, workload in zip(axes, names, strict=True):
        ax.set_title(workload, fontsize="medium")
        ax.tick_params(labelsize=8)
        if workload in explain:
            ax.text(0.5, 0.5, wrap(explain[workload], 60), ha="center", va="center",
                    fontsize=8, transform=ax.transAxes)  # fmt: skip
            ax.set_xticks([])
            ax.set_yticks([])
            texts.append(f"{workload}: {explain[workload]}")
            continue
        bars = [s for _, _, s in panels[workload]]
        xs = draw_bars(ax, bars)
        series += bars
        if bounds is not None:
            bound_ticks(ax, xs, bounds[workload])
            series += [
                Series(workload, "liveness bound", REFERENCE, s.x, (b,), kind="bound")
                for s, b in zip(bars, bounds[workload], strict=True)
                if b is not None
            ]
        ax.set_ylabel(units.get(workload, ""), fontsize="small")
    legend(fig, _kill_legend(series, bounds is not None), title, ncols=5)
    paths = save(fig, out_dir, stem)
    return FigureData(stem, title, tuple(names), tuple(series), tuple(texts), paths)


def vm_peak_memory(runs: Sequence[Results], out_dir: Path) -> list[FigureData]:
    """Peak VM memory per workload: a bar per kill variant, exec mode and allocator, with
    the liveness bound of the same variant as a black tick."""
    run = newest(runs, "vm_peak_bytes")
    if not ok_records(run, "vm_peak_bytes", _NEEDS):
        raise Skip("no vm_peak_bytes records with params workload, kill and exec_mode")
    panels = bar_series(run, "vm_peak_bytes", scale=2.0**-20)
    explain = {}
    for workload, slots in panels.items():
        values = [s.y[0] for _, _, s in slots if s.kind == "bar"]
        notes = [f"{s.label} ({s.x[0]})" for _, _, s in slots if s.kind == "note"]
        if not values:
            explain[workload] = "no successful peak measurement" + (
                ": " + ", ".join(notes) if notes else ""
            )
        elif max(values) < mib(RESOLUTION_BYTES):
            explain[workload] = (
                f"every peak is below 1 MiB (at most {max(values) * 1024:.0f} KiB), under "
                "what the peak measurement resolves: no bars"
                + ("; " + ", ".join(notes) if notes else "")
            )
    bound_of = {
        (str(b.params["workload"]), _mode(b), palette.kill_name(b.params.get("kill"))): mib(
            b.summary.median
        )
        for b in ok_records(run, "liveness_bound_bytes", _NEEDS)
    }
    bounds = {
        w: [bound_of.get((w, mode, kill)) if s.kind == "bar" else None for mode, kill, s in slots]
        for w, slots in panels.items()
    }
    title = "VM peak memory (median of the peak runs); black tick: liveness bound"
    units = dict.fromkeys(panels, "MiB")
    return [_bar_figure("vm_peak_memory", title, units, panels, explain, out_dir, bounds)]


def _time_unit(seconds: float) -> tuple[float, str]:
    for scale, name in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us")):
        if seconds >= scale:
            return 1 / scale, name
    return 1e9, "ns"


def vm_run_time(runs: Sequence[Results], out_dir: Path) -> list[FigureData]:
    """VM run time per workload, kill variant, exec mode and allocator; IQR error bars."""
    run = newest(runs, "vm_run_time")
    if not ok_records(run, "vm_run_time", _NEEDS):
        raise Skip("no vm_run_time records with params workload, kill and exec_mode")
    panels, explain, units = {}, {}, {}
    for workload, slots in bar_series(run, "vm_run_time", with_iqr=True).items():
        values = [s.y[0] for _, _, s in slots if s.kind == "bar"]
        panels[workload] = slots
        if not values:
            explain[workload] = "no successful run"
            continue
        k, units[workload] = _time_unit(max(values))
        panels[workload] = [
            (mode, kill, replace(s, y=tuple(v * k for v in s.y), low=tuple(v * k for v in s.low),
                                 high=tuple(v * k for v in s.high)))
            for mode, kill, s in slots
        ]  # fmt: skip
    title = "VM run time (median of the timed runs, IQR bars)"
    return [_bar_figure("vm_run_time", title, units, panels, explain, out_dir)]


# --- timelines -----------------------------------------------------------------------


def _holders(r: ResultRecord) -> list[tuple[str, float]]:
    items = r.extra.get(HOLDERS_KEY)
    if not isinstance(items, list):
        return []
    out = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("bytes"), (int, float)):
            out.append((str(item.get("var", item.get("name", "?"))), float(item["bytes"])))
    return sorted(out, key=lambda h: -h[1])[:TOP_HOLDERS]


def timeline_series(run: Results) -> dict[str, dict[str, list[tuple[Series, ResultRecord]]]]:
    """workload -> panel -> (line, record): the static live bytes (bytecode, pooled record
    of each variant) and the measured curve of each exec mode and allocator that has one."""
    out: dict[str, dict[str, list[tuple[Series, ResultRecord]]]] = defaultdict(dict)
    records = sorted(ok_records(run, "vm_peak_bytes", _NEEDS), key=_slot_key)
    static_of: dict[str, dict[str, ResultRecord]] = defaultdict(dict)
    for r in records:  # static curve: prefer the bytecode, pooled record of each variant
        if r.extra.get("static_live_bytes"):
            static_of[str(r.params["workload"])].setdefault(palette.kill_name(r.params.get("kill")), r)
    for workload in _workloads(run):
        panels: dict[str, list[tuple[Series, ResultRecord]]] = {}
        static = "static live bytes (liveness model), per binding"
        for kill, r in static_of.get(workload, {}).items():
            ys = tuple(mib(v) for v in r.extra["static_live_bytes"])
            line = Series(static, palette.KILL_LABELS.get(kill, kill), palette.colour(kill),
                          tuple(range(len(ys))), ys, kind="line")  # fmt: skip
            panels.setdefault(static, []).append((line, r))
        for r in records:
            curve = r.extra.get("measured_bytes") or []
            if str(r.params["workload"]) != workload or not curve:
                continue
            low = min(curve)
            panel = f"measured resident memory above its lowest, {palette.mode_label(_mode(r))}, per VM call"
            kill = palette.kill_name(r.params.get("kill"))
            ys = tuple(mib(v - low) for v in curve)
            line = Series(panel, palette.KILL_LABELS.get(kill, kill), palette.colour(kill),
                          tuple(range(len(ys))), ys, kind="line")  # fmt: skip
            panels.setdefault(panel, []).append((line, r))
        if panels:
            out[workload] = panels
    return out


def _draw_timeline_panel(
    ax: Any, items: list[tuple[Series, ResultRecord]]
) -> tuple[list[Series], bool]:
    """Draws the lines (widest first) with each curve's peak marked; returns the legend's
    series (labels say which lines are identical) and whether holders were labelled."""
    lines = [s for s, _ in items]
    record = {id(s): r for s, r in items}
    widths = draw_lines(ax, lines)
    static = lines[0].panel.startswith("static")
    span_x = max(len(s.x) for s in lines) or 1
    span_y = max(max(s.y) for s in lines) or 1.0
    shown: dict[int, Series] = {}
    labelled, marked = False, []
    for g in same_lines(lines):
        first = g[0]
        peak_at = max(range(len(first.y)), key=lambda i: first.y[i])
        peak = first.y[peak_at]
        ax.plot([peak_at], [peak], marker="v", color=first.colour, ms=7, mec="black", zorder=4)
        holders = next((h for h in (_holders(record[id(s)]) for s in g) if h), [])
        near = any(abs(peak_at - x) < 0.25 * span_x and abs(peak - y) < 0.1 * span_y
                   for x, y in marked)  # fmt: skip
        if holders or not near:
            where = ""
            points = record[id(first)].extra.get("static_points") if static else None
            if points and peak_at < len(points):
                function, _, var = str(points[peak_at]).rpartition(":")
                where = f" at {var} in {function}" if function else f" at {var}"
            text = f"peak {peak:.3g} MiB{where}"
            if holders:
                text += "".join(f"\n{v}: {mib(b):.3g} MiB" for v, b in holders)
                labelled = True
            right = peak_at > span_x / 2
            ax.annotate(text, (peak_at, peak), xytext=(-6 if right else 6, 6),
                        textcoords="offset points", ha="right" if right else "left",
                        fontsize=7, color="#222222")  # fmt: skip
            marked.append((peak_at, peak))
        for i, s in enumerate(g):
            same = f" (= {first.label})" if i else ""
            shown[id(s)] = replace(s, label=f"{s.label}{same}, peak {peak:.3g} MiB")
    ax.margins(y=0.15)
    legend_ = [shown[id(s)] for s in lines]
    handles = [line_handle(s.label, s.colour, lw=w) for s, w in zip(legend_, widths, strict=True)]
    ax.legend(handles=handles, fontsize=7, loc="best")
    return legend_, labelled


def memory_timeline(runs: Sequence[Results], out_dir: Path) -> list[FigureData]:
    """Per workload: the static live bytes per binding and the measured curve per VM call
    of each kill variant, peaks marked (and their largest holders, when recorded)."""
    run = newest(runs, "vm_peak_bytes")
    per_workload = timeline_series(run)
    if not per_workload:
        raise Skip("no vm_peak_bytes records with static_live_bytes/measured_bytes in extra")
    figures = []
    for workload, panels in per_workload.items():
        names = list(panels)
        texts = []
        has_measured = any(not n.startswith("static") for n in names)
        if not has_measured:
            texts.append(
                "No measured curve: compiled mode has no per-call hook, only its peak is measured."
            )
        top = max(max(s.y) for items in panels.values() for s, _ in items)
        if top < mib(RESOLUTION_BYTES):
            texts.append(
                f"Every curve stays below 1 MiB (at most {top * 1024:.0f} KiB), under what the "
                "measurement resolves: their differences are noise of a few pages."
            )
        fig, axes = grid(len(names), panel_height=2.9, ncols=1)
        drawn, labelled = [], False
        for ax, name in zip(axes, names, strict=True):
            shown, got = _draw_timeline_panel(ax, panels[name])
            drawn += shown
            labelled |= got
            ax.set_title(name, fontsize="medium")
            ax.set_ylabel("MiB", fontsize="small")
            ax.tick_params(labelsize=8)
        if not labelled:
            texts.append(
                "Largest holders at the peak: not in these records (no "
                f"extra['{HOLDERS_KEY}'] live set yet)."
            )
        footnote(fig, texts)
        title = (
            f"Memory over the run of {workload} (coinciding curves show as stripes; "
            "triangles: peaks)"
        )
        fig.suptitle(title, fontsize="medium")
        stem = f"memory_timeline_{slug(workload)}"
        paths = save(fig, out_dir, stem)
        figures.append(FigureData(stem, title, tuple(names), tuple(drawn), tuple(texts), paths))
    return figures
