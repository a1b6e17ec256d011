"""Classify the difference between two runs: regression, improvement, no change, ...

Kept apart from printing (``benchkill compare`` prints, ``benchkill report`` renders
Markdown, tests check the verdicts).  A verdict of regression or improvement needs two
things at once, as asv's ``continuous`` does: the ratio of medians beyond ``factor``
*and* a significant Mann-Whitney U test on the raw samples (two-sided p < ``alpha``).
When the sample counts are too small for the test ever to reach ``alpha``, the verdict
says so instead of guessing.

Printing lives in :mod:`benchkill.reporting.formatting`; asv result files are read by
:mod:`benchkill.results.asv_import` into the same :class:`Results`.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from typing import Any

from benchkill.bench.model import EXPECTED_FAILURE, FAILED, OK, canonical_unit, label
from benchkill.errors import BenchkillError
from benchkill.results.store import ResultRecord, Results
from benchkill.stats import Summary, is_noisy, mann_whitney_u

REGRESSION = "regression"
IMPROVEMENT = "improvement"
NO_CHANGE = "no change"
NOISY = "noisy"
INSUFFICIENT = "insufficient samples"
FAILED_VERDICT = "failed"
MISSING = "missing"
#: Verdicts, in the order a table lists them (most urgent first).
VERDICTS = (REGRESSION, FAILED_VERDICT, IMPROVEMENT, INSUFFICIENT, NOISY, NO_CHANGE, MISSING)

DEFAULT_FACTOR = 1.10
DEFAULT_ALPHA = 0.002

# Which direction is better, in one place.  A metric's own entry wins over its unit's;
# a record can override both with ``extra["better"] = "lower" | "higher"``.  Anything
# unknown is lower-is-better (time and memory, as asv assumes).
BETTER_BY_METRIC = {
    "speedup_vs_tvm": "higher",
    "peak_over_bound": "lower",
    # the same quantities as benchkill's asv suite names them (see results.asv_import)
    "pass_speedup": "higher",
    "vm_peak_over_bound": "lower",
}
BETTER_BY_UNIT = {
    "seconds": "lower",
    "bytes": "lower",
    "ratio": "higher",
}


def better_direction(metric: str, unit: str, extra: dict[str, Any] | None = None) -> str:
    """``"lower"`` or ``"higher"``: which way a change of this metric is an improvement."""
    override = (extra or {}).get("better")
    if override in ("lower", "higher"):
        return override
    return BETTER_BY_METRIC.get(metric) or BETTER_BY_UNIT.get(canonical_unit(unit), "lower")


@dataclass(frozen=True)
class Comparison:
    """The verdict for one measurement present in either run."""

    suite: str
    name: str
    params: dict[str, Any]
    metric: str
    unit: str
    better: str
    base: Summary | None
    new: Summary | None
    ratio: float | None
    p_value: float | None
    verdict: str
    notes: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """``suite:name[k=v,...] metric``: what ``--only`` matches and tables show."""
        return label(self.suite, self.name, self.params, self.metric)


@dataclass(frozen=True)
class CompareReport:
    """All comparisons of two runs and the thresholds used."""

    comparisons: tuple[Comparison, ...]
    factor: float
    alpha: float

    def count(self, verdict: str) -> int:
        return sum(c.verdict == verdict for c in self.comparisons)

    @property
    def newly_failed(self) -> list[Comparison]:
        return [c for c in self.comparisons if "newly failed" in c.notes]

    @property
    def exit_code(self) -> int:
        """1 when anything got worse (a regression or a newly failing case), else 0."""
        return 1 if self.count(REGRESSION) or self.newly_failed else 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "factor": self.factor,
            "alpha": self.alpha,
            "counts": {v: self.count(v) for v in VERDICTS},
            "comparisons": [_finite(dict(asdict(c), label=c.label)) for c in self.comparisons],
        }


def _finite(value: Any) -> Any:
    """JSON has no infinity: non-finite floats become None (e.g. a ratio over a zero)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _deterministic(a: ResultRecord, b: ResultRecord) -> bool:
    """Both runs measured a quantity without noise (declared, or repeated identically)."""
    if a.extra.get("deterministic") and b.extra.get("deterministic"):
        return True
    return all(len(r.samples) >= 2 and len(set(r.samples)) == 1 for r in (a, b))


def classify(base: ResultRecord, new: ResultRecord, factor: float, alpha: float) -> Comparison:
    """The verdict for one measurement present in both runs."""
    better = better_direction(new.metric, new.unit, new.extra)

    def result(verdict, ratio=None, p=None, notes=()):
        return Comparison(
            new.suite,
            new.name,
            new.params,
            new.metric,
            new.unit,
            better,
            base.summary,
            new.summary,
            ratio,
            p,
            verdict,
            tuple(notes),
        )

    if base.status != OK or new.status != OK:
        if base.status == new.status == EXPECTED_FAILURE:
            return result(NO_CHANGE, notes=["expected failure in both"])
        notes = [
            f"{side}: {r.status}: {r.error}"
            for side, r in (("base", base), ("new", new))
            if r.status != OK
        ]
        if new.status == FAILED and base.status != FAILED:
            notes.append("newly failed")
        return result(FAILED_VERDICT, notes=notes)
    if base.summary is None or new.summary is None:
        return result(INSUFFICIENT, notes=["no samples"])

    b, n = base.summary.median, new.summary.median
    ratio = (1.0 if n == 0 else math.inf) if b == 0 else n / b
    notes = []
    noisy = is_noisy(base.summary) or is_noisy(new.summary)
    if noisy:
        notes.append("noisy (IQR > 10% of median)")
    lower = better == "lower"
    worse = ratio > factor if lower else ratio < 1 / factor
    improved = ratio < 1 / factor if lower else ratio > factor
    quiet = NOISY if noisy else NO_CHANGE
    if not (worse or improved):
        return result(quiet, ratio, notes=notes)

    changed = REGRESSION if worse else IMPROVEMENT
    if _deterministic(base, new):
        return result(changed, ratio, notes=notes + ["deterministic samples"])
    test = mann_whitney_u(base.samples, new.samples)
    if test.p_value < alpha:
        return result(changed, ratio, test.p_value, notes)
    if test.min_p >= alpha:
        m, k = len(base.samples), len(new.samples)
        notes.append(f"{m} vs {k} samples cannot reach p < {alpha:g} (min p {test.min_p:.2g})")
        return result(INSUFFICIENT, ratio, notes=notes)
    notes.append(f"not significant (p = {test.p_value:.2g})")
    return result(quiet, ratio, test.p_value, notes)


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


def compare(
    base: Results,
    new: Results,
    factor: float = DEFAULT_FACTOR,
    alpha: float = DEFAULT_ALPHA,
    only: re.Pattern[str] | None = None,
) -> CompareReport:
    """Match records by (suite, name, params, metric) and classify each pair.

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
    comparisons = [classify(b[k], n[k], factor, alpha) for k in common]
    comparisons += [_missing(b[k], "base", new) for k in b if k not in n]
    comparisons += [_missing(n[k], "new", base) for k in n if k not in b]
    comparisons.sort(key=lambda c: VERDICTS.index(c.verdict))
    return CompareReport(tuple(comparisons), factor, alpha)
