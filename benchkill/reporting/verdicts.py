"""Classify the difference between two runs: regression, improvement, no change, ...

Kept apart from printing (``benchkill compare`` prints, ``benchkill report`` renders
Markdown, tests check the verdicts).  What counts as a change depends on the metric's
kind (:func:`metric_kind`):

* **time** (seconds, and ratios such as ``speedup_vs_tvm``): as asv's ``continuous``
  does, the ratio of medians beyond ``factor`` (default 1.10) *and* a significant
  Mann-Whitney U test on the raw samples (two-sided p < ``alpha``).  When the sample
  counts are too small for the test ever to reach ``alpha``, the verdict says so
  instead of guessing.  Samples that are all identical on both sides (or declared
  ``extra["deterministic"]``) are exact: the ratio decides alone.
* **instructions** (unit ``instructions``, or ``extra["kind"] == "instructions"``, e.g.
  ``instructions_vs_tvm``): callgrind's counts are exact from run to run, so the
  ratio of medians beyond ``factor`` (default 1.005) decides alone, no test; the
  table's notes say "exact".  Repeats within one process differ by ~0.1% (heap
  state), identically in every process, so the medians compare exactly.
* **bytes**: peaks equal within a run still move between runs of the same code, so they
  are never "exact": a change must exceed an absolute tolerance, the larger of 1% of
  the base median and 512 KiB (:data:`BYTES_FLOOR`; with an explicit ``factor``,
  ``factor - 1`` replaces the 1%), and when the samples vary within a run, the U test
  must agree too; with one sample on each side (the pass suite measures a pass's peak
  Python memory once per case) the tolerance decides alone.  Measured here (quick vm
  suite, each variant in a fresh child): the re-kill scenario's peak moves by 0-96 KiB;
  the MLP's is 4,364 or 4,624 KiB (one 260 KiB block the pooled allocator reuses or
  not), within a run and between runs, so a 256 KiB floor would alarm on unchanged code;
  512 KiB is twice that block.

Two whole runs are matched and classified record by record in
:mod:`benchkill.reporting.run_comparison`; printing lives in
:mod:`benchkill.reporting.formatting`; asv result files are read by
:mod:`benchkill.results.asv_import` into the same :class:`Results`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from benchkill.bench.model import EXPECTED_FAILURE, FAILED, OK, canonical_unit, label
from benchkill.results.store import ResultRecord
from benchkill.stats import Summary, is_noisy, mann_whitney_u

REGRESSION = "regression"
IMPROVEMENT = "improvement"
NO_CHANGE = "no change"
NOISY = "noisy"
INSUFFICIENT = "insufficient samples"
FAILED_VERDICT = "failed"
MISSING = "missing"
#: A regression the project's policy accepts (:mod:`benchkill.reporting.policy`).
ACKNOWLEDGED = "acknowledged"
#: Verdicts, in the order a table lists them (most urgent first).
VERDICTS = (REGRESSION, FAILED_VERDICT, ACKNOWLEDGED, IMPROVEMENT, INSUFFICIENT, NOISY)
VERDICTS += (NO_CHANGE, MISSING)

DEFAULT_FACTOR = 1.10
DEFAULT_ALPHA = 0.002

#: Metric kinds (:func:`metric_kind`) and their default thresholds.
TIME, INSTRUCTIONS, BYTES = "time", "instructions", "bytes"
DEFAULT_FACTORS = {TIME: DEFAULT_FACTOR, INSTRUCTIONS: 1.005}
#: Peak bytes: a change must exceed max(BYTES_RELATIVE * base median, BYTES_FLOOR).
BYTES_RELATIVE = 0.01
BYTES_FLOOR = 512 * 1024
EXACT_NOTE = "exact"

# Which direction is better, in one place.  A metric's own entry wins over its unit's;
# a record can override both with ``extra["better"] = "lower" | "higher"``.  Anything
# unknown is lower-is-better (time and memory, as asv assumes).
BETTER_BY_METRIC = {
    "speedup_vs_tvm": "higher",
    "time_over_floor": "lower",  # benchkill's time over the floor's (pass suite)
    "instructions_vs_tvm": "higher",
    "peak_over_bound": "lower",
    # the same quantities as benchkill's asv suite names them (see results.asv_import)
    "pass_speedup": "higher",
    "pass_time_over_floor": "lower",
    "vm_peak_over_bound": "lower",
}
BETTER_BY_UNIT = {
    "seconds": "lower",
    "bytes": "lower",
    "ratio": "higher",
    "instructions": "lower",
}


def metric_kind(unit: str, extra: dict[str, Any] | None = None) -> str:
    """:data:`INSTRUCTIONS`, :data:`BYTES` or :data:`TIME` (everything else)."""
    unit = canonical_unit(unit)
    if unit == INSTRUCTIONS or (extra or {}).get("kind") == INSTRUCTIONS:
        return INSTRUCTIONS
    return BYTES if unit == "bytes" else TIME


def thresholds_text(factor: float | None) -> str:
    """What counts as a change, in words: ``factor 1.1 (times), 1.005 (instructions), ...``."""
    if factor is not None:
        return f"factor {factor:g} (bytes: max({factor - 1:.3g} x base, {BYTES_FLOOR // 1024} KiB))"
    return (
        f"factor {DEFAULT_FACTORS[TIME]:g} times, {DEFAULT_FACTORS[INSTRUCTIONS]:g} "
        f"instructions; bytes max({BYTES_RELATIVE:.0%}, {BYTES_FLOOR // 1024} KiB)"
    )


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
    factor: float  # the factor of times (the one given, or DEFAULT_FACTOR)
    alpha: float
    #: True when no factor was given: each metric kind had its default (module docstring)
    per_kind: bool = False

    @property
    def thresholds(self) -> str:
        """What counted as a change, in words (:func:`thresholds_text`)."""
        return thresholds_text(None if self.per_kind else self.factor)

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
            "thresholds": self.thresholds,
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


def _exact(kind: str, a: ResultRecord, b: ResultRecord) -> bool:
    """Both runs measured a quantity without noise: instruction counts, records declared
    ``extra["deterministic"]``, or times repeated identically (bytes never qualify by
    their samples alone: equal within a run, they still move between runs)."""
    if kind == INSTRUCTIONS or (a.extra.get("deterministic") and b.extra.get("deterministic")):
        return True
    return kind == TIME and _identical(a) and _identical(b)


def _identical(record: ResultRecord) -> bool:
    return len(record.samples) >= 2 and len(set(record.samples)) == 1


def classify(
    base: ResultRecord, new: ResultRecord, factor: float | None, alpha: float, bytes_tol=None
) -> Comparison:
    """The verdict for one measurement present in both runs (``factor`` None: the default
    of the metric's kind, see the module docstring; ``bytes_tol``: bytes' own tolerance)."""
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

    kind = metric_kind(new.unit, new.extra)
    b, n = base.summary.median, new.summary.median
    ratio = (1.0 if n == 0 else math.inf) if b == 0 else n / b
    lower = better == "lower"
    notes = []
    if kind == BYTES:
        relative = BYTES_RELATIVE if factor is None else factor - 1
        tolerance = max(relative * abs(b), BYTES_FLOOR) if bytes_tol is None else bytes_tol
        worse = (n - b > tolerance) if lower else (b - n > tolerance)
        improved = (b - n > tolerance) if lower else (n - b > tolerance)
        notes.append(f"tolerance {tolerance / 1024:.0f} KiB")
    else:
        f = DEFAULT_FACTORS[kind] if factor is None else factor
        worse = ratio > f if lower else ratio < 1 / f
        improved = ratio < 1 / f if lower else ratio > f
    exact = _exact(kind, base, new)
    if exact:
        notes.insert(0, EXACT_NOTE)
    noisy = not exact and (is_noisy(base.summary) or is_noisy(new.summary))
    if noisy:
        notes.append("noisy (IQR > 10% of median)")
    quiet = NOISY if noisy else NO_CHANGE
    if not (worse or improved):
        return result(quiet, ratio, notes=notes)

    changed = REGRESSION if worse else IMPROVEMENT
    if exact:
        return result(changed, ratio, notes=notes)
    if kind == BYTES and _identical(base) and _identical(new):
        return result(changed, ratio, notes=notes + ["samples identical within each run"])
    if kind == BYTES and len(base.samples) == len(new.samples) == 1:
        # the pass suite's peak Python memory: one traced run per case, so no test could
        # ever judge it, and the tolerance is the between-run noise of peaks
        return result(changed, ratio, notes=notes + ["one sample each: the tolerance decides"])
    test = mann_whitney_u(base.samples, new.samples)
    if test.p_value < alpha:
        return result(changed, ratio, test.p_value, notes)
    if test.min_p >= alpha:
        m, k = len(base.samples), len(new.samples)
        notes.append(f"{m} vs {k} samples cannot reach p < {alpha:g} (min p {test.min_p:.2g})")
        return result(INSUFFICIENT, ratio, notes=notes)
    notes.append(f"not significant (p = {test.p_value:.2g})")
    return result(quiet, ratio, test.p_value, notes)
