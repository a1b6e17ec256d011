"""Figures of the vm suite: peak memory and run time per workload, memory timelines.

Records read (params ``workload``, ``exec_mode``, ``memory_cfg``, ``kill``; None: no kills):
``vm_peak_bytes`` and ``liveness_bound_bytes`` (bytes), ``vm_run_time`` (seconds), and
the timelines of :mod:`.plot_timeline` are drawn from the same records.

One panel per workload, in the order the suite ran them: bars grouped by exec mode and
allocator (hatch), one colour per kill variant in :data:`palette.KILL_ORDER`, the value on
each bar.  A workload without a value to draw says why in its panel.
"""

from __future__ import annotations

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
    grid,
    legend,
    line_handle,
    mib,
    newest,
    ok_records,
    save,
    wrap,
)
from benchkill.reporting.targets import RESOLUTION_BYTES
from benchkill.results.store import ResultRecord, Results

VM_PARAMS = ("workload", "exec_mode", "kill")


def vm_mode(r: ResultRecord) -> tuple[str, str]:
    return (str(r.params["exec_mode"]), str(r.params.get("memory_cfg", "pooled")))


def slot_key(r: ResultRecord) -> tuple[Any, ...]:
    return (palette.mode_rank(vm_mode(r)), palette.kill_rank(r.params.get("kill")))


def workloads_of(run: Results) -> list[str]:
    """Workloads in the order the suite measured them."""
    return list(
        dict.fromkeys(str(r.params["workload"]) for r in run.records if "workload" in r.params)
    )


#: A bar slot: (exec mode, allocator), kill variant name, the bar (or note) drawn there.
Slot = tuple[tuple[str, str], str, Series]


def bar_series(
    run: Results, metric: str, scale: float = 1.0, with_iqr: bool = False
) -> dict[str, list[Slot]]:
    """workload -> the slots of its panel in drawing order (exec mode and allocator, then
    kill variant), with a note slot for a variant whose build or run did not succeed."""
    slots: dict[str, dict[tuple[tuple[str, str], str], Series]] = {w: {} for w in workloads_of(run)}
    for r in ok_records(run, metric, VM_PARAMS):
        mode, kill = vm_mode(r), palette.kill_name(r.params.get("kill"))
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
        if r.status == OK or not all(k in r.params for k in VM_PARAMS):
            continue
        workload, mode, kill = (
            str(r.params["workload"]),
            vm_mode(r),
            palette.kill_name(r.params["kill"]),
        )
        if workload in slots and (mode, kill) not in slots[workload]:
            note = "expected failure" if r.status == EXPECTED_FAILURE else "failed"
            slots[workload][(mode, kill)] = Series(
                workload,
                f"{kill}: {note}",
                palette.colour(kill),
                (palette.mode_label(mode),),
                (0.0,),
                kind="note",
            )

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
            ax.text(
                0.5,
                0.5,
                wrap(explain[workload], 60),
                ha="center",
                va="center",
                fontsize=8,
                transform=ax.transAxes,
            )
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
    if not ok_records(run, "vm_peak_bytes", VM_PARAMS):
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
        (str(b.params["workload"]), vm_mode(b), palette.kill_name(b.params.get("kill"))): mib(
            b.summary.median
        )
        for b in ok_records(run, "liveness_bound_bytes", VM_PARAMS)
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
    if not ok_records(run, "vm_run_time", VM_PARAMS):
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
            (
                mode,
                kill,
                replace(
                    s,
                    y=tuple(v * k for v in s.y),
                    low=tuple(v * k for v in s.low),
                    high=tuple(v * k for v in s.high),
                ),
            )
            for mode, kill, s in slots
        ]
    title = "VM run time (median of the timed runs, IQR bars)"
    return [_bar_figure("vm_run_time", title, units, panels, explain, out_dir)]
