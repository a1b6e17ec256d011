"""Classify the difference between two runs: regression, improvement, no change, ...

Kept apart from printing (``benchkill compare`` prints, ``benchkill report`` renders
Markdown, tests check the verdicts).  A verdict of regression or improvement needs two
things at once, as asv's ``continuous`` does: the ratio of medians beyond ``factor``
*and* a significant Mann-Whitney U test on the raw samples (two-sided p < ``alpha``).
When the sample counts are too small for the test ever to reach ``alpha``, the verdict
says so instead of guessing.

Two asv result files (``.asv/results/<machine>/<commit>-<env>.json``, asv 0.6 format,
``api_version`` 2) can be compared as well: :func:`load_any` converts them.
"""

from __future__ import annotations

import ast
import itertools
import math
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from benchkill.bench.machine import Machine
from benchkill.bench.model import EXPECTED_FAILURE, FAILED, OK
from benchkill.errors import BenchkillError
from benchkill.results.store import ResultRecord, Results, RunSettings, from_dict, read_json
from benchkill.stats import Summary, is_noisy, mann_whitney_u, summarize

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
    # the same quantities as benchkill's asv suite names them (see from_asv)
    "pass_speedup": "higher",
    "vm_peak_over_bound": "lower",
}
BETTER_BY_UNIT = {
    "seconds": "lower",
    "bytes": "lower",
    "ratio": "higher",
}


#: Other spellings of the units above.
UNIT_ALIASES = {"s": "seconds", "sec": "seconds", "B": "bytes"}


def canonical_unit(unit: str) -> str:
    """``"s"`` -> ``"seconds"``, ``"B"`` -> ``"bytes"``; other units unchanged."""
    return UNIT_ALIASES.get(unit, unit)


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
        return record_label(self.suite, self.name, self.params, self.metric)


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


def record_label(suite: str, name: str, params: dict[str, Any], metric: str) -> str:
    """``suite:name[k=v,...] metric``: what ``--only`` matches and tables show."""
    items = ",".join(f"{k}={params[k]}" for k in sorted(params))
    return f"{suite}:{name}[{items}] {metric}"


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
            if only is None or only.search(record_label(r.suite, r.name, r.params, r.metric)):
                out[r.key] = r
        return out

    b, n = selected(base, new), selected(new, base)
    common = [k for k in b if k in n]
    if not common:
        where = f" matching --only {only.pattern!r}" if only is not None else ""
        raise BenchkillError(f"the two results have no case in common{where}")
    comparisons = [classify(b[k], n[k], factor, alpha) for k in common]
    comparisons += [_missing(b[k], "base", new) for k in b if k not in n]
    comparisons += [_missing(n[k], "new", base) for k in n if k not in b]
    comparisons.sort(key=lambda c: VERDICTS.index(c.verdict))
    return CompareReport(tuple(comparisons), factor, alpha)


# --- value formatting (shared by the compare table and the report) ---------------------


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
    return f"{value:.4g} {unit}".rstrip()


def format_ratio(ratio: float | None) -> str:
    if ratio is None:
        return "-"
    return "inf" if math.isinf(ratio) else f"{ratio:.3f}"


# --- asv result files ----------------------------------------------------------------

ASV_API_VERSION = 2

# asv benchmark kinds by name prefix -> unit (benchmarks.json, when present, has the unit).
_ASV_PREFIXES = (
    ("timeraw_", "seconds"),
    ("time_", "seconds"),
    ("peakmem_", "bytes"),
    ("mem_", "bytes"),
    ("track_", "unit"),
)


def _asv_kind(name: str, info: dict[str, Any]) -> tuple[str, str]:
    """(metric, unit) of an asv benchmark: the method name without its kind prefix
    (``track_vm_peak_over_bound`` -> ``vm_peak_over_bound``), and its unit."""
    leaf = name.rsplit(".", 1)[-1]
    for prefix, unit in _ASV_PREFIXES:
        if leaf.startswith(prefix):
            return leaf[len(prefix) :], str(info.get("unit", unit))
    return leaf, str(info.get("unit", "unit"))


def _asv_param(text: Any) -> Any:
    """asv stores parameter values as their repr(); turn "'chain'" back into "chain"."""
    if not isinstance(text, str):
        return text
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _asv_benchmarks(path: Path) -> dict[str, Any]:
    """benchmarks.json next to the machine directories, if present (units, param names)."""
    candidate = path.parent.parent / "benchmarks.json"
    if not candidate.is_file():
        return {}
    try:
        data = read_json(candidate)
    except BenchkillError:
        return {}
    return data if isinstance(data, dict) else {}


def _iso_ms(ms: Any) -> str | None:
    if isinstance(ms, (int, float)) and not isinstance(ms, bool) and math.isfinite(ms):
        return datetime.fromtimestamp(ms / 1000, timezone.utc).replace(microsecond=0).isoformat()
    return None


def _asv_records(name: str, row: dict[str, Any], info: dict[str, Any]) -> Iterable[ResultRecord]:
    metric, unit = _asv_kind(name, info)
    param_values = row.get("params") or []
    names = info.get("param_names") or [f"param{i + 1}" for i in range(len(param_values))]
    results = row.get("result")
    samples = row.get("samples")
    combos = list(itertools.product(*param_values))
    if not isinstance(results, list):
        results = [results] * len(combos)
    for j, combo in enumerate(combos):
        params = {str(k): _asv_param(v) for k, v in zip(names, combo, strict=False)}
        value = results[j] if j < len(results) else None
        raw = samples[j] if isinstance(samples, list) and j < len(samples) else None
        case = record_label("asv", name, params, "").rstrip()
        common = dict(case=case, suite="asv", name=name, params=params, metric=metric, unit=unit)
        if value is None:
            yield ResultRecord(**common, status=FAILED, error="asv recorded no result")
            continue
        if isinstance(value, float) and math.isnan(value):
            yield ResultRecord(**common, status=EXPECTED_FAILURE, error="skipped by asv")
            continue
        values = tuple(float(v) for v in (raw if raw else [value]))
        yield ResultRecord(**common, samples=values, summary=summarize(values))


def from_asv(data: dict[str, Any], path: Path) -> Results:
    """Convert an asv 0.6 results file (api_version 2) into benchkill Results.

    Raw samples are present only when asv ran with ``--record-samples``; otherwise each
    measurement has its single stored value and comparisons say "insufficient samples".
    """
    if data.get("version") != ASV_API_VERSION:
        raise BenchkillError(
            f"{path}: asv results version {data.get('version')!r} is not supported "
            f"(expected {ASV_API_VERSION}; run `asv update`)"
        )
    try:
        columns = data["result_columns"]
        rows = data["results"]
        params = data.get("params") or {}
        benchmarks = _asv_benchmarks(path)
        records = []
        started = []
        for name, values in rows.items():
            row = dict(zip(columns, values, strict=False))  # asv drops trailing nulls
            info = benchmarks.get(name) if isinstance(benchmarks.get(name), dict) else {}
            records.extend(_asv_records(name, row, info))
            started.append(row.get("started_at"))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise BenchkillError(f"{path}: malformed asv results file: {exc!r}") from None
    cores = params.get("num_cpu")
    commit = data.get("commit_hash")
    machine = Machine(
        name=str(params.get("machine") or path.parent.name),
        hostname=params.get("machine"),
        cpu_model=params.get("cpu"),
        cores=int(cores) if str(cores).isdigit() else None,
        os=params.get("os"),
        python=data.get("python"),
        git_commit=commit[:8] if isinstance(commit, str) else None,
    )
    times = [t for t in started if isinstance(t, (int, float)) and not isinstance(t, bool)]
    when = _iso_ms(max(times)) if times else _iso_ms(data.get("date"))
    settings = RunSettings(
        suites=("asv",), quick=False, command=("asv",), started_at=when or "", finished_at=when
    )
    return Results(machine, settings, (), tuple(records))


def load_any(path: Path) -> Results:
    """A benchkill results file, or an asv results file converted to the same form."""
    path = Path(path)
    data = read_json(path)
    if isinstance(data, dict) and "result_columns" in data and "results" in data:
        return from_asv(data, path)
    if isinstance(data, dict) and "schema_version" in data:
        return from_dict(data, path)
    raise BenchkillError(f"{path}: neither a benchkill results file nor an asv results file")
