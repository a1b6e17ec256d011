"""A Markdown summary of results for a pull request or a results page.

The report lists the runs (machine, commit, settings); for each suite, the tables per
metric of the newest run that has it, its failures, and its comparison with the run
before; then the figures of :mod:`benchkill.reporting.plot`, written next to the report and
embedded by relative path.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from benchkill.bench.model import FAILED, OK, params_text
from benchkill.errors import BenchkillError
from benchkill.reporting.formatting import (
    COMPARISON_HEADER,
    code_text,
    comparison_row,
    format_value,
    verdict_counts,
)
from benchkill.reporting.plot import plot_results
from benchkill.reporting.verdicts import REGRESSION, compare
from benchkill.results.store import Results, write_atomic


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines + [""]


def _runs_section(runs: Sequence[tuple[Path, Results]]) -> list[str]:
    rows = []
    for path, r in runs:
        m, s = r.machine, r.settings
        commit = code_text(r)  # each record's commit: a resumed run may mix them
        failed = sum(rec.status == FAILED for rec in r.records)
        rows.append(
            (
                path.name,
                m.name,
                commit,
                s.started_at,
                ",".join(s.suites),
                "yes" if s.quick else "no",
                len(r.records),
                failed,
            )
        )
    header = ("file", "machine", "commit", "started (UTC)", "suites", "quick", "records", "failed")
    newest = runs[-1][1].machine
    details = [
        f"Newest run's machine: {newest.cpu_model or 'unknown CPU'}, {newest.cores or '?'} cores, "
        f"{format_value(newest.memory_bytes, 'bytes') if newest.memory_bytes else '? memory'}, "
        f"{newest.os or 'unknown OS'}, {newest.python or 'unknown Python'}, "
        f"apache-tvm {newest.tvm_version or '?'}, benchkill {newest.benchkill_version or '?'}.",
        "",
    ]
    return ["## Runs", "", *_table(header, rows), *details]


def _only_suite(run: Results, suite: str) -> Results:
    return replace(run, records=tuple(r for r in run.records if r.suite == suite))


def _results_section(path: Path, run: Results, suite: str) -> list[str]:
    lines = [f"## Results of suite {suite} ({path.name})", ""]
    groups = defaultdict(list)
    for r in run.records:
        if r.suite == suite and r.status == OK and r.summary is not None:
            groups[(r.suite, r.metric, r.unit)].append(r)
    if not groups:
        return lines + ["No successful records.", ""]
    for (suite, metric, unit), records in groups.items():
        lines += [f"### {suite}: {metric}", ""]
        rows = [
            (
                r.name,
                params_text(r.params, ", ") or "-",
                format_value(r.summary.median, unit),
                format_value(r.summary.iqr, unit),
                format_value(r.summary.min, unit),
                r.summary.n,
            )
            for r in records
        ]
        lines += _table(("benchmark", "params", "median", "IQR", "min", "samples"), rows)
    return lines


def _failures_section(run: Results, suite: str) -> list[str]:
    failed = [r for r in run.records if r.suite == suite and r.status != OK]
    if not failed:
        return []
    rows = [(r.case, r.metric, r.status, r.error or "") for r in failed]
    return [
        f"### Failures and expected failures ({suite})",
        "",
        *_table(("case", "metric", "status", "error"), rows),
    ]


def _compare_section(
    base: tuple[Path, Results], new: tuple[Path, Results], suite: str
) -> list[str]:
    lines = [f"## Comparison of suite {suite}: {base[0].name} -> {new[0].name}", ""]
    try:
        report = compare(_only_suite(base[1], suite), _only_suite(new[1], suite))
    except BenchkillError as exc:
        return lines + [f"Not compared: {exc}.", ""]
    rows = []
    for c in report.comparisons:
        row = comparison_row(c)
        verdict = f"**{c.verdict}**" if c.verdict == REGRESSION else c.verdict
        rows.append((*row[:4], verdict, row[5]))
    lines += [
        f"Factor {report.factor:g}, Mann-Whitney U alpha {report.alpha:g}: "
        f"{verdict_counts(report)}.",
        "",
    ]
    return lines + _table(COMPARISON_HEADER, rows)


def _figures_section(runs: Sequence[Results], out: Path) -> list[str]:
    fig_dir = out.parent / f"{out.stem}_figures"
    output = plot_results(runs, fig_dir)
    lines = ["## Figures", ""]
    for path in output.paths:
        if path.suffix == ".png":
            rel = os.path.relpath(path, out.parent)
            lines += [f"![{path.stem}]({Path(rel).as_posix()})", ""]
    lines += [f"- {note}" for note in output.notes]
    return lines + [""]


def write_report(runs: Sequence[tuple[Path, Results]], out: Path) -> Path:
    """Write the Markdown report of ``runs`` (path, results) to ``out``; returns ``out``.

    Runs are ordered by start time; figures go to ``<out stem>_figures/`` beside it.
    """
    if not runs:
        raise BenchkillError("no results to report")
    runs = sorted(runs, key=lambda pr: pr[1].settings.started_at)
    out = Path(out)
    lines = ["# benchkill report", ""]
    lines += _runs_section(runs)
    suites = dict.fromkeys(r.suite for _, run in runs for r in run.records)
    for suite in suites:
        # per suite: the newest run that has it, compared with the one before
        having = [(p, run) for p, run in runs if any(r.suite == suite for r in run.records)]
        lines += _results_section(*having[-1], suite)
        lines += _failures_section(having[-1][1], suite)
        if len(having) >= 2:
            lines += _compare_section(having[-2], having[-1], suite)
    lines += _figures_section([r for _, r in runs], out)
    try:
        write_atomic(out, "\n".join(lines).rstrip() + "\n")
    except OSError as exc:
        raise BenchkillError(f"{out}: cannot write report: {exc.strerror or exc}") from None
    return out
