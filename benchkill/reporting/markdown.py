"""A Markdown report of results for a pull request or a results page.

It leads with the answer: a headline section (the speedup TVM / benchkill per family at
each size, the memory benchkill's kills save per workload, every target met or not, from
:mod:`benchkill.reporting.headline`), then the comparison of each suite's newest run with
the run before it (warnings first, when the runs differ in machine, size or software:
:mod:`benchkill.reporting.warnings`; then what changed), then the figures of
:mod:`benchkill.reporting.plot`, written next to the report and embedded by relative
path, and last the detailed tables, each folded under a heading (``<details>``).
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from benchkill.bench.model import FAILED, OK, params_text
from benchkill.errors import BenchkillError
from benchkill.reporting import palette
from benchkill.reporting.formatting import (
    COMPARISON_HEADER,
    code_text,
    comparison_row,
    format_value,
    run_line,
    verdict_counts,
)
from benchkill.reporting.headline import memory_saved, met_counts, speedups, target_results
from benchkill.reporting.plot import plot_results
from benchkill.reporting.run_comparison import compare
from benchkill.reporting.targets import REPORTED
from benchkill.reporting.verdicts import FAILED_VERDICT, IMPROVEMENT, REGRESSION
from benchkill.reporting.warnings import CHECKS, comparison_warnings, suites
from benchkill.results.store import Results, write_atomic

#: Most rows the comparison lists unfolded (regressions, failures, improvements).
NOTABLE_ROWS = 15

Run = tuple[Path, Results]


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines + [""]


def _folded(summary: str, body: Sequence[str]) -> list[str]:
    """``body`` under a ``<details>`` heading (blank lines keep its Markdown rendered)."""
    return ["<details>", f"<summary>{summary}</summary>", "", *body, "</details>", ""]


def _run_kind(run: Results) -> str:
    return "quick run" if run.settings.quick else "full run"


def _newest_of(runs: Sequence[Run], suite: str) -> list[Run]:
    """The runs that have records of ``suite``, oldest first."""
    return [(p, r) for p, r in runs if any(rec.suite == suite for rec in r.records)]


# --- headline ------------------------------------------------------------------------


def _speedup_section(path: Path, run: Results) -> list[str]:
    table = speedups(run.records)
    if not table:
        return []
    sizes = sorted({p.bindings for points in table.values() for p in points})
    rows = []
    for family, points in table.items():
        at = {p.bindings: p for p in points}
        rows.append([family] + [f"{at[n].median:.2f}x" if n in at else "" for n in sizes])
    header = ["family", *(f"{n:,}" for n in sizes)]
    return [
        "### Pass time: how much faster than TVM's C++ pass",
        "",
        f"TVM's time / benchkill's at each size in bindings (median of the interleaved "
        f"rounds; above 1: benchkill is faster). From `{path.name}`, a {_run_kind(run)}.",
        "",
        *_table(header, rows),
    ]


def _mib(value: float | None) -> str:
    return "" if value is None else format_value(value, "bytes")


def _memory_section(path: Path, run: Results) -> list[str]:
    rows = memory_saved(run.records)
    if not rows:
        return []
    kills = [
        palette.kill_name(k)
        for k in palette.KILL_ORDER
        if any(palette.kill_name(k) in row.peaks for row in rows)
    ]
    savers = [k for k in ("benchkill", "beyond") if k in kills]
    header = [
        "workload",
        "exec mode",
        *(palette.KILL_LABELS[k] for k in kills),
        "benchkill's bound",
        *(f"saved by {k} (no kills / {k})" for k in savers),
    ]
    table = []
    for row in rows:
        mode = palette.mode_label((row.exec_mode, row.memory_cfg))
        saved = []
        for k in savers:
            if not row.resolved:
                saved.append("peaks below 1 MiB: not resolved")
            elif row.saved_bytes(k) is None:
                saved.append("")
            else:
                saved.append(f"{_mib(row.saved_bytes(k))} ({row.ratio(k):.2f}x)")
        peaks = [_mib(row.peaks.get(k)) for k in kills]
        table.append([row.workload, mode, *peaks, _mib(row.bound), *saved])
    return [
        "### VM memory: what kills save",
        "",
        f"Peak memory of one run (median of the peak runs), per kill variant. From "
        f"`{path.name}`, a {_run_kind(run)}.",
        "",
        *_table(header, table),
    ]


_MET = {True: "met", False: "**not met**", None: "not measured"}


def _targets_section(records: Sequence[object], quick: bool) -> list[str]:
    results = target_results(records, quick)
    measured = [t for t in results if t.value is not None]
    if not measured:
        return []
    met, not_met, missing = met_counts(results)
    rows = [
        (
            t.figure,
            f"{t.value:.3f}",
            t.target,
            t.note or ("" if t.target == REPORTED else _MET[t.met]),
        )
        for t in measured
    ]
    lines = [
        "### Targets",
        "",
        f"{met} met, {not_met} not met"
        + (f", {missing} not measured or not judged (sizes of a full run)" if missing else "")
        + ".",
        "",
        *_table(("target", "measured", "wanted", "result"), rows),
    ]
    return lines


def _headline(runs: Sequence[Run]) -> list[str]:
    lines = ["## Headline", ""]
    records: list[object] = []
    quick = False
    for suite, section in (("pass", _speedup_section), ("vm", _memory_section)):
        having = _newest_of(runs, suite)
        if having:
            path, run = having[-1]
            lines += section(path, run)
            records += [r for r in run.records if r.suite == suite]
            quick = quick or (suite == "vm" and run.settings.quick)
    lines += _targets_section(records, quick)
    if len(lines) == 2:
        lines += ["No pass or vm records to summarize; the details below list every record.", ""]
    return lines


# --- comparison ----------------------------------------------------------------------


def _only_suite(run: Results, suite: str) -> Results:
    return replace(run, records=tuple(r for r in run.records if r.suite == suite))


def _compare_section(base: Run, new: Run, suite: str) -> list[str]:
    lines = [f"### Suite {suite}: `{base[0].name}` -> `{new[0].name}`", ""]
    # the report compares one suite at a time: which suites each run had does not matter
    warnings = comparison_warnings(base[1], new[1], [c for c in CHECKS if c is not suites])
    lines += [f"> **Warning:** {text}." for text in warnings] + ([""] if warnings else [])
    try:
        report = compare(_only_suite(base[1], suite), _only_suite(new[1], suite))
    except BenchkillError as exc:
        return lines + [f"Not compared: {exc}.", ""]
    lines += [
        f"{verdict_counts(report)} (factor {report.factor:g}, Mann-Whitney U alpha "
        f"{report.alpha:g}).",
        "",
    ]
    rows = []
    for c in report.comparisons:
        row = comparison_row(c)
        verdict = f"**{c.verdict}**" if c.verdict in (REGRESSION, FAILED_VERDICT) else c.verdict
        rows.append((*row[:4], verdict, row[5]))
    notable = [
        row
        for row, c in zip(rows, report.comparisons, strict=True)
        if c.verdict in (REGRESSION, FAILED_VERDICT, IMPROVEMENT)
    ]
    if notable:
        lines += _table(COMPARISON_HEADER, notable[:NOTABLE_ROWS])
        if len(notable) > NOTABLE_ROWS:
            lines += [f"... and {len(notable) - NOTABLE_ROWS} more in the full table.", ""]
    else:
        lines += ["No regression, failure or improvement.", ""]
    lines += _folded(f"All {len(rows)} comparisons", _table(COMPARISON_HEADER, rows))
    return lines


def _comparisons(runs: Sequence[Run], suites: Sequence[str]) -> list[str]:
    lines = ["## Compared with the previous run", ""]
    for suite in suites:
        having = _newest_of(runs, suite)
        if len(having) >= 2:
            lines += _compare_section(having[-2], having[-1], suite)
        else:
            lines += [
                f"Suite {suite}: one run only (`{having[-1][0].name}`); give the report an "
                "older results file too to compare with it.",
                "",
            ]
    return lines


# --- figures and details -------------------------------------------------------------


def figures_dir(out: Path) -> Path:
    """The directory of a report's figures: ``<out stem>_figures/`` beside it."""
    out = Path(out)
    return out.parent / f"{out.stem}_figures"


def _figures_section(runs: Sequence[Results], out: Path, draw_dir: Path) -> list[str]:
    fig_dir = figures_dir(out)
    output = plot_results(runs, draw_dir)
    lines = ["## Figures", ""]
    for figure in output.figures:
        png = next((p for p in figure.paths if p.suffix == ".png"), None)
        if png is not None:
            rel = Path(os.path.relpath(fig_dir / png.name, out.parent)).as_posix()
            lines += [f"![{figure.title}]({rel})", ""]
    lines += [f"- {note}" for note in output.notes]
    return lines + [""]


def _runs_table(runs: Sequence[Run]) -> list[str]:
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
    lines = _table(header, rows)
    lines += [run_line(path, r) for path, r in runs]
    return lines + [""]


def _records_tables(run: Results, suite: str) -> list[str]:
    groups = defaultdict(list)
    for r in run.records:
        if r.suite == suite and r.status == OK and r.summary is not None:
            groups[(r.metric, r.unit)].append(r)
    if not groups:
        return ["No successful records.", ""]
    lines = []
    for (metric, unit), records in groups.items():
        lines += [f"#### {metric}", ""]
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


def _failures(run: Results, suite: str) -> list[tuple[str, str, str, str]]:
    failed = [r for r in run.records if r.suite == suite and r.status != OK]
    return [(r.case, r.metric, r.status, r.error or "") for r in failed]


def _details(runs: Sequence[Run], suites: Sequence[str]) -> list[str]:
    lines = ["## Details", ""]
    lines += _folded(f"Runs ({len(runs)} files) and their machines", _runs_table(runs))
    for suite in suites:
        path, run = _newest_of(runs, suite)[-1]
        count = sum(r.suite == suite for r in run.records)
        lines += _folded(
            f"All {count} records of suite {suite} (`{path.name}`)", _records_tables(run, suite)
        )
        failures = _failures(run, suite)
        if failures:
            table = _table(("case", "metric", "status", "error"), failures)
            title = f"Failures and expected failures of suite {suite} ({len(failures)})"
            lines += _folded(title, table)
    return lines


def write_report(runs: Sequence[Run], out: Path) -> Path:
    """Write the Markdown report of ``runs`` (path, results) to the new file ``out`` (an
    existing one is refused: FileExistsError); returns ``out``.

    Runs are ordered by start time; figures go to ``<out stem>_figures/`` beside it
    (``benchkill report`` stages them and refuses to replace any file there).
    """
    text = render_report(runs, out, figures_dir(out))
    try:
        write_atomic(Path(out), text, exclusive=True)
    except FileExistsError:
        raise
    except OSError as exc:
        raise BenchkillError(f"{out}: cannot write report: {exc.strerror or exc}") from None
    return Path(out)


def render_report(runs: Sequence[Run], out: Path, draw_dir: Path) -> str:
    """The Markdown report of ``runs`` (path, results) that will be written to ``out``,
    its figures drawn into ``draw_dir`` and linked as ``<out stem>_figures/<name>``."""
    if not runs:
        raise BenchkillError("no results to report")
    runs = sorted(runs, key=lambda pr: pr[1].settings.started_at)
    out = Path(out)
    suites = list(dict.fromkeys(r.suite for _, run in runs for r in run.records))
    newest_path, newest = runs[-1]
    m = newest.machine
    lines = [
        "# benchkill report",
        "",
        f"{len(runs)} results file(s); the newest, `{newest_path.name}`, is a "
        f"{_run_kind(newest)} of suite(s) {', '.join(newest.settings.suites)} at commit "
        f"{m.git_commit or '?'}{' (dirty)' if m.git_dirty else ''} on machine {m.name!r} "
        f"({m.cores or '?'} cores, apache-tvm {m.tvm_version or '?'}).",
        "",
    ]
    lines += _headline(runs)
    lines += _comparisons(runs, suites)
    lines += _figures_section([r for _, r in runs], out, Path(draw_dir))
    lines += _details(runs, suites)
    return "\n".join(lines).rstrip() + "\n"
