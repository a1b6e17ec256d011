"""What every figure shares: the description of what was drawn, the grid, bars, lines.

A figure function first computes its data as :class:`Series` (pure), then draws them,
and returns a :class:`FigureData`: the series drawn in their order with their colours
and styles, and the texts that explain absent data, so a test can check what a reader
sees without reading pixels.  Figures are 10 inches wide at 100 dpi: 1000 pixels, the
width of a page, with panels in a grid and one legend per figure.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchkill.bench.model import OK
from benchkill.results.store import ResultRecord, Results

#: Width of every figure in inches; at :data:`DPI` it is 1000 pixels.
WIDTH, DPI = 10.0, 100
#: Colour of reference marks (liveness bound, speedup 1, fitted lines).
REFERENCE = "#000000"


@dataclass(frozen=True)
class Series:
    """One thing drawn: bars (``kind="bar"``), a line, bound marks or a reference."""

    panel: str
    label: str
    colour: str
    x: tuple[Any, ...]
    y: tuple[float, ...]
    kind: str = "bar"
    style: str = ""  # hatch of bars, line style of lines
    low: tuple[float, ...] = ()  # error bars: the quartiles below and above y
    high: tuple[float, ...] = ()


@dataclass(frozen=True)
class FigureData:
    """A figure as drawn: its panels, series (in drawing order) and explanations."""

    stem: str
    title: str
    panels: tuple[str, ...]
    series: tuple[Series, ...]
    texts: tuple[str, ...] = ()
    paths: tuple[Path, ...] = field(default=(), compare=False)
    labels: tuple[str, ...] = ()  # texts written on the panels (e.g. at the peaks)
    xlabels: tuple[str, ...] = ()  # the tick labels of a shared categorical x axis

    def in_panel(self, panel: str, kind: str | None = None) -> list[Series]:
        """The series of one panel (of one kind), in drawing order."""
        return [s for s in self.series if s.panel == panel and kind in (None, s.kind)]


class Skip(Exception):
    """A figure cannot be drawn from these results; the message says why."""


def ok_records(run: Results, metric: str, needs: Sequence[str] = ()) -> list[ResultRecord]:
    """OK records of ``metric`` with a summary and every param of ``needs``."""
    return [
        r
        for r in run.records
        if r.metric == metric
        and r.status == OK
        and r.summary is not None
        and all(k in r.params for k in needs)
    ]


def newest(runs: Sequence[Results], metric: str) -> Results:
    """The newest run with OK records of ``metric`` (runs are sorted by start time), so
    that a pass run and a later vm run given together each give their figures."""
    for run in reversed(runs):
        if ok_records(run, metric):
            return run
    return runs[-1]


def mib(value: float) -> float:
    return value / 2**20


def slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in text)


def short_number(n: float) -> str:
    """1000 -> 1k, 600000 -> 600k, 1500 -> 1.5k."""
    if n >= 1000:
        return f"{n / 1000:g}k"
    return f"{n:g}"


def grid(n_panels: int, panel_height: float = 3.0, ncols: int | None = None):
    """A figure of ``n_panels`` axes in rows of ``ncols`` (2 or 3 by count), 1000 px wide."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if ncols is None:
        ncols = 1 if n_panels == 1 else 2 if n_panels <= 4 else 3
    nrows = -(-n_panels // ncols)
    fig = Figure(figsize=(WIDTH, panel_height * nrows + 1.0), layout="constrained")
    FigureCanvasAgg(fig)
    axes = [fig.add_subplot(nrows, ncols, i + 1) for i in range(n_panels)]
    return fig, axes


def save(fig: Any, out_dir: Path, stem: str) -> tuple[Path, ...]:
    paths = (out_dir / f"{stem}.png", out_dir / f"{stem}.svg")
    fig.savefig(paths[0], dpi=DPI)
    fig.savefig(paths[1], metadata={"Date": None})
    return paths


def legend(fig: Any, handles: Sequence[Any], title: str, ncols: int = 4) -> None:
    """One legend for the whole figure above the panels, the figure's title on top of it."""
    if not handles:
        fig.suptitle(title, fontsize="medium")
        return
    fig.legend(
        handles=list(handles),
        loc="outside upper center",
        ncols=min(ncols, len(handles)),
        fontsize="small",
        frameon=False,
        title=title,
        title_fontproperties={"size": "medium"},
    )


def footnote(fig: Any, texts: Sequence[str]) -> None:
    """Explanations of absent data, under the panels (wrapped to the figure's width)."""
    if texts:
        text = "\n".join(wrap(t) for t in texts)
        fig.supxlabel(text, fontsize="small", color="#444444", ha="center")


def wrap(text: str, width: int = 110) -> str:
    return "\n".join(textwrap.wrap(text, width))


def bar_handle(label: str, colour: str, hatch_: str = "") -> Any:
    from matplotlib.patches import Patch

    return Patch(facecolor=colour, edgecolor="#333333", hatch=hatch_, label=label)


def line_handle(
    label: str, colour: str, style: str = "-", marker: str = "", lw: float = 1.8
) -> Any:
    from matplotlib.lines import Line2D

    return Line2D([], [], color=colour, ls=style, marker=marker, lw=lw, label=label)


def value_text(value: float) -> str:
    """A value on a bar: three significant digits."""
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"


def draw_bars(ax: Any, bars: Sequence[Series], group_gap: float = 0.6) -> list[float]:
    """Bars of single values, side by side in the given order; a new ``x`` (category)
    starts a new group after a gap.  Returns the positions; draws values on the bars
    (above their error bars when ``low``/``high`` are set); a ``note`` series is a slot
    without a value, its label written upright in its place."""
    xs, pos, last = [], -1.0, None
    for s in bars:
        pos += 1.0 if s.x[0] == last or last is None else 1.0 + group_gap
        last = s.x[0]
        xs.append(pos)
    many = len(bars) > 8
    for x, s in zip(xs, bars, strict=True):
        if s.kind == "note":
            ax.annotate(
                s.label,
                (x, 0),
                xytext=(0, 3),
                textcoords="offset points",
                rotation=90,
                ha="center",
                va="bottom",
                fontsize=7,
            )
            continue
        err = None
        if s.low:
            err = [[s.y[0] - s.low[0]], [s.high[0] - s.y[0]]]
        ax.bar(
            [x],
            s.y,
            width=0.9,
            color=s.colour,
            hatch=s.style,
            edgecolor="#333333",
            linewidth=0.5,
            yerr=err,
            capsize=2,
            error_kw={"lw": 0.8},
        )
        top = max(s.y[0], s.high[0]) if s.high else s.y[0]
        ax.annotate(
            value_text(s.y[0]),
            (x, top),
            xytext=(0, 2),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=7,
            rotation=90 if many else 0,
        )
    ax.margins(y=0.2)
    if xs:
        ax.set_xlim(min(xs) - 0.7, max(xs) + 0.7)
    groups: dict[Any, list[float]] = {}
    for x, s in zip(xs, bars, strict=True):
        groups.setdefault(s.x[0], []).append(x)
    ax.set_xticks([sum(v) / len(v) for v in groups.values()], [str(g) for g in groups])
    return xs


def bound_ticks(ax: Any, xs: Sequence[float], bounds: Sequence[float | None]) -> None:
    """A black tick at each bar's liveness bound (None: no bound for that bar)."""
    for x, bound in zip(xs, bounds, strict=True):
        if bound is not None:
            ax.hlines(bound, x - 0.45, x + 0.45, colors=REFERENCE, linewidths=2, zorder=3)


def close(a: Series, b: Series, fraction: float = 0.02) -> bool:
    """Whether two lines nearly coincide: over their common length, the mean distance of
    their values is within ``fraction`` of the larger's highest value."""
    n = min(len(a.y), len(b.y))
    top = max(max(a.y, default=0.0), max(b.y, default=0.0))
    if n == 0 or top <= 0:
        return n > 0
    return sum(abs(a.y[i] - b.y[i]) for i in range(n)) / n <= fraction * top


def line_widths(lines: Sequence[Series], thinnest: float = 1.2, widest: float = 7.0) -> list[float]:
    """Widths of lines drawn in order: a line is wider for each later line that nearly
    coincides with it (:func:`close`), so every one shows as a stripe along the lines
    drawn on top of it; lines on their own keep the thinnest width."""
    later = [sum(close(a, b) for b in lines[i + 1 :]) for i, a in enumerate(lines)]
    step = min(1.4, (widest - thinnest) / max(max(later, default=0), 1))
    return [thinnest + step * n for n in later]


def same_lines(lines: Sequence[Series]) -> list[list[Series]]:
    """The lines grouped by identical points, in order of first appearance."""
    groups: list[list[Series]] = []
    for s in lines:
        for g in groups:
            if g[0].x == s.x and g[0].y == s.y:
                g.append(s)
                break
        else:
            groups.append([s])
    return groups


def draw_lines(ax: Any, lines: Sequence[Series], **kwargs: Any) -> list[float]:
    """Lines in order, wider where later lines coincide (:func:`line_widths`), so every
    line shows.  Returns the widths used."""
    widths = line_widths(lines)
    for s, lw in zip(lines, widths, strict=True):
        ax.plot(s.x, s.y, color=s.colour, ls=s.style or "-", lw=lw, **kwargs)
    return widths
