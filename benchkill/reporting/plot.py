"""Figures of benchmark results, written as PNG and SVG files (never shown on screen).

Each figure reads the records it needs from the newest run that has them (``history``
reads all runs); when those records are absent the figure is skipped with a note, so a
run of one suite still plots what it has.  Figures are drawn on
``matplotlib.figure.Figure`` with the Agg canvas: no pyplot state, no window, safe in
tests and on headless machines.  Every figure is 1000 pixels wide, its panels in a grid
with one legend, its colours from :mod:`benchkill.reporting.palette`.

The figures (modules): pass time vs bindings and the speedup TVM / benchkill per family
(:mod:`.plot_pass`); VM peak memory and run time per workload (:mod:`.plot_vm`); memory
timelines (:mod:`.plot_timeline`); the history of each metric across runs
(:mod:`.plot_history`).  Each figure function returns
:class:`~benchkill.reporting.plot_base.FigureData`: what it drew.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from benchkill.errors import BenchkillError
from benchkill.reporting.plot_base import FigureData, Skip
from benchkill.reporting.plot_history import history
from benchkill.reporting.plot_pass import pass_speedup, pass_time_scaling
from benchkill.reporting.plot_timeline import memory_timeline
from benchkill.reporting.plot_vm import vm_peak_memory, vm_run_time
from benchkill.results.store import Results

__all__ = ["FIGURES", "FigureData", "PlotOutput", "Skip", "plot_results"]


@dataclass(frozen=True)
class PlotOutput:
    """Files written (PNG and SVG of each figure), what each figure drew, and why any
    figure was skipped."""

    paths: tuple[Path, ...]
    notes: tuple[str, ...]
    figures: tuple[FigureData, ...] = ()

    def figure(self, stem: str) -> FigureData:
        """The figure written as ``stem``.png."""
        for f in self.figures:
            if f.stem == stem:
                return f
        raise KeyError(stem)


#: Figure name -> function; each returns the figures it drew or raises Skip.
FIGURES: dict[str, Callable[[Sequence[Results], Path], list[FigureData]]] = {
    "pass time scaling": pass_time_scaling,
    "pass speedup": pass_speedup,
    "VM peak memory": vm_peak_memory,
    "memory timeline": memory_timeline,
    "VM run time": vm_run_time,
    "history": history,
}


def _when(run: Results) -> datetime:
    try:
        return datetime.fromisoformat(run.settings.started_at)
    except ValueError:
        raise BenchkillError(
            f"run of {run.machine.name}: bad start time {run.settings.started_at!r}"
        ) from None


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
    figures: list[FigureData] = []
    notes: list[str] = []
    for name, draw in FIGURES.items():
        try:
            figures += draw(runs, out_dir)
        except Skip as skip:
            notes.append(f"skipped {name}: {skip}")
    paths = tuple(p for f in figures for p in f.paths)
    return PlotOutput(paths, tuple(notes), tuple(figures))
