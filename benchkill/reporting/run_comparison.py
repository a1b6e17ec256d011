"""Compare two runs: match their records and classify each pair (:mod:`.verdicts`).

Records match by (suite, name, params, metric).  A case's own thresholds and the
regressions the project accepts come from its policy (:mod:`.policy`).  A record only one
run has is ``missing``, with the reason when the other run's case crashed.

A pass-suite time of benchkill whose case has a ``floor`` record in both runs (the FFI work
no exact Python pass skips, timed in the same rounds) gets the note ``floor moved R``: the
same ratio of that floor.  It changes no verdict; a benchkill "regression" that the floor
shows too is the machine's.
"""

from __future__ import annotations

import re
from dataclasses import replace

from benchkill.bench.model import FAILED, FLOOR, OK, label
from benchkill.errors import BenchkillError
from benchkill.reporting.policy import NO_POLICY, Policy
from benchkill.reporting.verdicts import (
    ACKNOWLEDGED,
    DEFAULT_ALPHA,
    DEFAULT_FACTOR,
    FAILED_VERDICT,
    MISSING,
    REGRESSION,
    VERDICTS,
    CompareReport,
    Comparison,
    better_direction,
    classify,
)
from benchkill.results.store import ResultRecord, Results


def _is_crash(record: ResultRecord) -> bool:
    """The runner's record of a case whose ``run_case`` raised (metric "case")."""
    return record.metric == "case" and record.status == FAILED


def _missing(record: ResultRecord, side: str, other: Results) -> Comparison:
    base = record.summary if side == "base" else None
    new = record.summary if side == "new" else None
    other_side = "new" if side == "base" else "base"
    crashed = [r for r in other.records if r.case == record.case and _is_crash(r)]
    if crashed:
        notes = [f"{other_side}: case failed: {crashed[0].error}"]
        if other_side == "new" and record.status != FAILED:
            notes.append("newly failed")
        verdict = FAILED_VERDICT
    elif record.status == FAILED:
        notes = [f"only in {side}", f"{side}: failed: {record.error}"]
        if side == "new":
            notes.append("newly failed")
        verdict = FAILED_VERDICT
    else:
        notes, verdict = [f"only in {side}"], MISSING
    return Comparison(
        record.suite,
        record.name,
        record.params,
        record.metric,
        record.unit,
        better_direction(record.metric, record.unit, record.extra),
        base,
        new,
        None,
        None,
        verdict,
        tuple(notes),
    )


def classify_by_policy(
    policy: Policy,
    base: ResultRecord,
    new: ResultRecord,
    factor: float | None,
    alpha: float,
    new_run: Results,
) -> Comparison:
    """:func:`classify` with the case's thresholds of ``policy``, and the verdict
    :data:`ACKNOWLEDGED` for a regression it accepts at the new run's commit."""
    rule = policy.threshold(new.case)
    if rule is not None:
        factor = factor if rule.factor is None else rule.factor
        alpha = alpha if rule.alpha is None else rule.alpha
    c = classify(base, new, factor, alpha, rule.bytes_tolerance if rule else None)
    if rule is not None:
        c = replace(c, notes=(*c.notes, f"policy {rule.pattern}"))
    commit = new.git_commit or new_run.machine.git_commit
    ack = policy.acknowledgement(new.case, new.metric, commit)
    if ack is not None and c.verdict == REGRESSION:
        c = replace(c, verdict=ACKNOWLEDGED, notes=(*c.notes, f"acknowledged: {ack.reason}"))
    return c


def compare(
    base: Results,
    new: Results,
    factor: float | None = None,
    alpha: float = DEFAULT_ALPHA,
    only: re.Pattern[str] | None = None,
    policy: Policy = NO_POLICY,
) -> CompareReport:
    """Match records by (suite, name, params, metric) and classify each pair
    (``factor`` None: each metric kind's default); ``policy`` sets a case's own
    thresholds and turns the regressions it acknowledges into :data:`ACKNOWLEDGED`.

    A FAILED "case" record (the runner's record of a case that raised) explains the
    records of that case missing from the other run.
    """

    def selected(results: Results, other: Results) -> dict[tuple, ResultRecord]:
        measured = {r.case for r in other.records if not _is_crash(r)}
        out = {}
        for r in results.records:
            if _is_crash(r) and r.case in measured:
                continue  # shown through the records of the other run it replaced
            if only is None or only.search(label(r.suite, r.name, r.params, r.metric)):
                out[r.key] = r
        return out

    b, n = selected(base, new), selected(new, base)
    common = [k for k in b if k in n]

    def crashed_in(side: dict[tuple, ResultRecord], other: Results) -> bool:
        cases = {r.case for r in other.records if _is_crash(r)}
        return any(r.case in cases for r in side.values())

    # a case that crashed in one run is in common with the other run's records of it
    if not common and not crashed_in(b, new) and not crashed_in(n, base):
        where = f" matching --only {only.pattern!r}" if only is not None else ""
        raise BenchkillError(f"the two results have no case in common{where}")
    comparisons = [classify_by_policy(policy, b[k], n[k], factor, alpha, new) for k in common]
    comparisons += [_missing(b[k], "base", new) for k in b if k not in n]
    comparisons += [_missing(n[k], "new", base) for k in n if k not in b]
    comparisons = _with_floor_notes(comparisons, base, new)
    comparisons.sort(key=lambda c: VERDICTS.index(c.verdict))
    return CompareReport(
        tuple(comparisons), DEFAULT_FACTOR if factor is None else factor, alpha, factor is None
    )


#: The metrics whose benchkill comparisons get their case's floor ratio as a note.
FLOOR_METRICS = ("pass_time", "pass_cpu_time")


def _with_floor_notes(
    comparisons: list[Comparison], base: Results, new: Results
) -> list[Comparison]:
    """benchkill's pass times with the note ``floor moved R`` where the same case's floor
    is in both runs, whether or not ``--only`` selected it (see the module docstring)."""

    def floors(results: Results) -> dict[str, ResultRecord]:
        return {
            label(r.suite, r.name, r.params, r.metric): r
            for r in results.records
            if r.params.get("impl") == FLOOR and r.status == OK and r.samples
        }

    before, after = floors(base), floors(new)
    out = []
    for c in comparisons:
        if c.suite == "pass" and c.metric in FLOOR_METRICS and c.params.get("impl") == "benchkill":
            key = label(c.suite, c.name, {**c.params, "impl": FLOOR}, c.metric)
            if key in before and key in after and before[key].summary.median > 0:
                moved = after[key].summary.median / before[key].summary.median
                c = replace(c, notes=(*c.notes, f"floor moved {moved:.3f}"))
        out.append(c)
    return out
