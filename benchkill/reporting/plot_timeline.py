"""Memory timelines of the vm suite: one figure per workload, one panel per curve kind.

Read from ``extra`` of ``vm_peak_bytes`` records: ``static_live_bytes`` (bytes live after
each binding, by the liveness model; ``static_points`` names each binding
``function:var``) and ``measured_bytes`` (resident bytes after each VM call, bytecode mode
only: compiled mode has no per-call hook).  When a record's ``extra`` also holds
:data:`HOLDERS_KEY`, the live set at the peak (a list of ``{"var": name, "bytes": n}``),
its :data:`TOP_HOLDERS` largest are labelled at the peak; otherwise the figure says they
are not recorded.  Lines that coincide are drawn wider first, so each shows as a stripe,
and the legend says which are identical.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchkill.reporting import palette
from benchkill.reporting.plot_base import (
    FigureData,
    Series,
    Skip,
    draw_lines,
    footnote,
    grid,
    line_handle,
    mib,
    newest,
    ok_records,
    same_lines,
    save,
    slug,
    wrap,
)
from benchkill.reporting.plot_vm import VM_PARAMS, slot_key, vm_mode, workloads_of
from benchkill.reporting.targets import RESOLUTION_BYTES
from benchkill.results.store import ResultRecord, Results

#: Keys of the live set at the peak in a VM record's ``extra`` (lists of {"var", "bytes",
#: ...}), in order of preference: the traced run's (``vm_peak_bytes`` records, see
#: :mod:`benchkill.bench.suites.vm_suite`), then the static model's.
HOLDERS_KEYS = ("peak_holders", "at_peak")
HOLDERS_KEY = HOLDERS_KEYS[0]
#: Largest holders labelled at a peak.
TOP_HOLDERS = 3


def _size(mib_value: float) -> str:
    """``48 MiB``, ``4 KiB`` (below 1 MiB), ``0 B``."""
    if mib_value >= 1 or mib_value == 0:
        return f"{mib_value:.3g} MiB" if mib_value else "0 B"
    return f"{mib_value * 1024:.3g} KiB"


def _holders(r: ResultRecord) -> list[tuple[str, float]]:
    items = next((r.extra[k] for k in HOLDERS_KEYS if isinstance(r.extra.get(k), list)), None)
    if items is None:
        return []
    out = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("bytes"), (int, float)):
            out.append((str(item.get("var", item.get("name", "?"))), float(item["bytes"])))
    return sorted(out, key=lambda h: -h[1])


def timeline_series(run: Results) -> dict[str, dict[str, list[tuple[Series, ResultRecord]]]]:
    """workload -> panel -> (line, record): the static live bytes (bytecode, pooled record
    of each variant) and the measured curve of each exec mode and allocator that has one."""
    out: dict[str, dict[str, list[tuple[Series, ResultRecord]]]] = defaultdict(dict)
    records = sorted(ok_records(run, "vm_peak_bytes", VM_PARAMS), key=slot_key)
    static_of: dict[str, dict[str, ResultRecord]] = defaultdict(dict)
    for r in records:  # static curve: prefer the bytecode, pooled record of each variant
        if r.extra.get("static_live_bytes"):
            static_of[str(r.params["workload"])].setdefault(
                palette.kill_name(r.params.get("kill")), r
            )
    for workload in workloads_of(run):
        panels: dict[str, list[tuple[Series, ResultRecord]]] = {}
        static = "static live bytes (liveness model), per binding"
        for kill, r in static_of.get(workload, {}).items():
            ys = tuple(mib(v) for v in r.extra["static_live_bytes"])
            line = Series(
                static,
                palette.KILL_LABELS.get(kill, kill),
                palette.colour(kill),
                tuple(range(len(ys))),
                ys,
                kind="line",
            )
            panels.setdefault(static, []).append((line, r))
        for r in records:
            curve = r.extra.get("measured_bytes") or []
            if str(r.params["workload"]) != workload or not curve:
                continue
            low = min(curve)
            mode = palette.mode_label(vm_mode(r))
            panel = f"measured resident memory above its lowest, {mode}, per VM call"
            kill = palette.kill_name(r.params.get("kill"))
            ys = tuple(mib(v - low) for v in curve)
            line = Series(
                panel,
                palette.KILL_LABELS.get(kill, kill),
                palette.colour(kill),
                tuple(range(len(ys))),
                ys,
                kind="line",
            )
            panels.setdefault(panel, []).append((line, r))
        if panels:
            out[workload] = panels
    return out


def _holders_box(lines: Sequence[Series], record: dict[int, ResultRecord]) -> str:
    """The largest holders at the peak of each variant that recorded them, one entry per
    distinct live set (variants with the same set share it)."""
    entries: dict[tuple[tuple[str, float], ...], list[str]] = {}
    for s in lines:
        holders = tuple(_holders(record[id(s)]))
        if holders:
            entries.setdefault(holders, []).append(s.label)
    parts = []
    for holders, labels in entries.items():
        top = ", ".join(f"{v} {_size(mib(b))}" for v, b in holders[:TOP_HOLDERS])
        more = f", and {len(holders) - TOP_HOLDERS} more" if len(holders) > TOP_HOLDERS else ""
        parts.append(f"live at the peak, {' = '.join(labels)}: {top}{more}")
    return "\n".join(wrap(p, 70) for p in parts)


def _draw_timeline_panel(
    ax: Any, items: list[tuple[Series, ResultRecord]]
) -> tuple[list[Series], list[str], bool]:
    """Draws the lines (widest first) with each curve's peak marked and the largest
    holders at the peaks in a box; returns the legend's series (labels say which lines
    are identical), the texts written on the panel, and whether holders were labelled."""
    lines = [s for s, _ in items]
    record = {id(s): r for s, r in items}
    widths = draw_lines(ax, lines)
    static = lines[0].panel.startswith("static")
    span_x = max(len(s.x) for s in lines) or 1
    span_y = max(max(s.y) for s in lines) or 1.0
    shown: dict[int, Series] = {}
    marked, notes = [], []
    for g in same_lines(lines):
        first = g[0]
        peak_at = max(range(len(first.y)), key=lambda i: first.y[i])
        peak = first.y[peak_at]
        ax.plot([peak_at], [peak], marker="v", color=first.colour, ms=7, mec="black", zorder=4)
        near = any(
            abs(peak_at - x) < 0.25 * span_x and abs(peak - y) < 0.1 * span_y for x, y in marked
        )
        if not near:
            where = ""
            points = record[id(first)].extra.get("static_points") if static else None
            if points and peak_at < len(points):
                function, _, var = str(points[peak_at]).rpartition(":")
                where = f" at {var} in {function}" if function else f" at {var}"
            text = f"peak {_size(peak)}{where}"
            right = peak_at > span_x / 2
            ax.annotate(
                text,
                (peak_at, peak),
                xytext=(-6 if right else 6, 6),
                textcoords="offset points",
                ha="right" if right else "left",
                fontsize=7,
                color="#222222",
            )
            marked.append((peak_at, peak))
            notes.append(text)
        for i, s in enumerate(g):
            same = f" (= {first.label})" if i else ""
            shown[id(s)] = replace(s, label=f"{s.label}{same}, peak {_size(peak)}")
    box = _holders_box(lines, record)
    if box:
        ax.text(
            0.99,
            0.04,
            box,
            transform=ax.transAxes,
            ha="right",
            va="bottom",
            fontsize=7,
            bbox={"facecolor": "white", "alpha": 0.85, "edgecolor": "#999999"},
        )
        notes.append(box)
    ax.margins(y=0.15)
    legend_ = [shown[id(s)] for s in lines]
    handles = [line_handle(s.label, s.colour, lw=w) for s, w in zip(legend_, widths, strict=True)]
    ax.legend(handles=handles, fontsize=7, loc="upper left")
    return legend_, notes, bool(box)


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
        drawn, labels, labelled = [], [], False
        for ax, name in zip(axes, names, strict=True):
            shown, notes, got = _draw_timeline_panel(ax, panels[name])
            labels += notes
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
        figures.append(
            FigureData(stem, title, tuple(names), tuple(drawn), tuple(texts), paths, tuple(labels))
        )
    return figures
