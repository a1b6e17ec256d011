"""Text of values and comparisons, shared by ``benchkill compare`` and the Markdown report.

Values get a readable unit (``1.2 ms``, ``3.4 MiB``, ``1.07x``); a comparison becomes the
row ``benchmark, base, new, ratio, verdict, notes`` that both the text table and the
report's Markdown table show, and a report its line of verdict counts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from benchkill.bench.model import Machine, canonical_unit
from benchkill.reporting.verdicts import REGRESSION, CompareReport, Comparison
from benchkill.results.store import Results

#: The columns of a comparison row.
COMPARISON_HEADER = ("benchmark", "base", "new", "ratio", "verdict", "notes")


def format_value(value: float | None, unit: str) -> str:
    """A value with a readable unit: 1.2 ms, 3.4 MiB, 1.07x."""
    if value is None:
        return "-"
    unit = canonical_unit(unit)
    if unit == "seconds":
        for scale, name in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns")):
            if abs(value) >= scale or scale == 1e-9:
                return f"{value / scale:.3g} {name}"
    if unit == "bytes":
        for scale, name in ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
            if abs(value) >= scale:
                return f"{value / scale:.3g} {name}"
        return f"{value:.0f} B"
    if unit == "ratio":
        return f"{value:.3g}x"
    if unit == "instructions":  # exact counts: every digit
        return f"{value:,.0f}"
    return f"{value:.4g} {unit}".rstrip()


def format_ratio(ratio: float | None) -> str:
    """A ratio of medians to three decimals; ``-`` when there is none."""
    if ratio is None:
        return "-"
    return "inf" if math.isinf(ratio) else f"{ratio:.3f}"


def comparison_row(c: Comparison) -> tuple[str, str, str, str, str, str]:
    """The cells of :data:`COMPARISON_HEADER` for one comparison."""
    return (
        c.label,
        format_value(c.base.median if c.base else None, c.unit),
        format_value(c.new.median if c.new else None, c.unit),
        format_ratio(c.ratio),
        c.verdict,
        "; ".join(c.notes),
    )


def verdict_counts(report: CompareReport) -> str:
    """``2 regression, 5 no change``: the verdicts present, most urgent first."""
    verdicts = dict.fromkeys(c.verdict for c in report.comparisons)
    return ", ".join(f"{report.count(v)} {v}" for v in verdicts)


def comparison_table(report: CompareReport) -> str:
    """The comparison as an aligned text table with a summary line."""
    rows = [COMPARISON_HEADER, *(comparison_row(c) for c in report.comparisons)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COMPARISON_HEADER) - 1)]
    lines = []
    for row in rows:
        cells = [
            row[i].ljust(widths[i]) if i == 0 else row[i].rjust(widths[i])
            for i in range(len(widths))
        ]
        lines.append("  ".join(cells + [row[-1]]).rstrip())
    summary = f"{verdict_counts(report)} ({report.thresholds}; alpha {report.alpha:g})"
    lines.append(f"\n{summary}")
    return "\n".join(lines)


def code_text(results: Results) -> str:
    """The commit(s) that measured a run: ``abc1234``, ``abc1234 (dirty)``, or for a run
    resumed with ``--allow-code-change`` ``mixed: abc1234, def5678 (dirty)``."""
    states = results.code_states or ((results.machine.git_commit, results.machine.git_dirty),)
    codes = [(c or "-") + (" (dirty)" if d else "") for c, d in states]
    return codes[0] if len(codes) == 1 else "mixed: " + ", ".join(codes)


def run_line(path: Path, results: Results) -> str:
    """The Markdown list item naming a results file and what measured it."""
    return f"- `{path.name}`: {machine_text(results.machine)}"


def machine_text(m: Machine) -> str:
    """CPU, cores, memory, OS, Python (and where its build lives), the malloc and package
    versions."""
    memory = format_value(m.memory_bytes, "bytes") if m.memory_bytes else "? memory"
    python = m.python or "unknown Python"
    if m.python_build:
        python += f" at {m.python_build}"
    if m.malloc:
        python += f", malloc {m.malloc}"
    return (
        f"{m.cpu_model or 'unknown CPU'}, {m.cores or '?'} cores, {memory}, "
        f"{m.os or 'unknown OS'}, {python}, apache-tvm {m.tvm_version or '?'}, "
        f"apache-tvm-ffi {m.tvm_ffi_version or '?'}, benchkill {m.benchkill_version or '?'}"
    )


def _md_cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def comparison_markdown(report: CompareReport, warnings: Sequence[str] = ()) -> str:
    """The comparison as GitHub-flavoured Markdown for a pull request's comment or the job
    summary (``$GITHUB_STEP_SUMMARY``): a verdict line first, warnings, then one table row
    per measurement, the most urgent first."""
    worse = report.count(REGRESSION) + len(report.newly_failed)
    head = "regression" if worse else "no regression"
    lines = [f"### benchkill compare: {head}", ""]
    lines.append(f"**{verdict_counts(report)}** ({report.thresholds}; alpha {report.alpha:g})")
    lines.append("")
    lines += [f"> warning: {_md_cell(w)}" for w in warnings]
    if warnings:
        lines.append("")
    lines.append("| " + " | ".join(COMPARISON_HEADER) + " |")
    lines.append("|" + "|".join(["---", *["---:"] * 3, "---", "---"]) + "|")
    for c in report.comparisons:
        row = list(comparison_row(c))
        row[0] = f"`{row[0]}`"
        if c.verdict == REGRESSION:
            row[4] = f"**{row[4]}**"
        lines.append("| " + " | ".join(_md_cell(x) for x in row) + " |")
    return "\n".join(lines) + "\n"
