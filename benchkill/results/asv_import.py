"""asv result files read as benchkill results, so that ``compare``, ``plot`` and ``report``
take either kind of file.

An asv results file is ``.asv/results/<machine>/<commit>-<env>.json`` in the asv 0.6
format (``version`` 2); ``benchmarks.json`` beside the machine directories, when present,
gives the units and parameter names.  Each measurement becomes a :class:`ResultRecord`
of suite ``asv``, named after the benchmark, with the metric the benchmark's method name
without its kind prefix (``track_vm_peak_over_bound`` -> ``vm_peak_over_bound``).
"""

from __future__ import annotations

import ast
import itertools
import math
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from benchkill.bench.model import EXPECTED_FAILURE, FAILED, Machine, label
from benchkill.errors import BenchkillError
from benchkill.results.store import ResultRecord, Results, RunSettings, read_json
from benchkill.results.validation import check_records
from benchkill.stats import summarize

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
    """asv's time stamp (milliseconds since the epoch) as an ISO time; None if not one."""
    if isinstance(ms, (int, float)) and not isinstance(ms, bool) and math.isfinite(ms):
        try:
            when = datetime.fromtimestamp(ms / 1000, timezone.utc)
        except (OverflowError, OSError, ValueError):
            return None  # out of the platform's range: not a time asv wrote
        return when.replace(microsecond=0).isoformat()
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
        case = label("asv", name, params)
        common = dict(case=case, suite="asv", name=name, params=params, metric=metric, unit=unit)
        if value is None:
            yield ResultRecord(**common, status=FAILED, error="asv recorded no result")
            continue
        if isinstance(value, float) and math.isnan(value):
            yield ResultRecord(**common, status=EXPECTED_FAILURE, error="skipped by asv")
            continue
        values = tuple(float(v) for v in (raw if raw else [value]))
        if not all(math.isfinite(v) for v in values):
            raise ValueError(f"{name}: a sample is not a finite number")
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
        if not isinstance(params, dict):
            raise TypeError(f"params is a {type(params).__name__}, not an object")
        benchmarks = _asv_benchmarks(path)
        records = []
        started = []
        for name, values in rows.items():
            row = dict(zip(columns, values, strict=False))  # asv drops trailing nulls
            info = benchmarks.get(name) if isinstance(benchmarks.get(name), dict) else {}
            records.extend(_asv_records(name, row, info))
            started.append(row.get("started_at"))
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
        raise BenchkillError(f"{path}: malformed asv results file: {exc!r}"[:300]) from None
    check_records(records, path)
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
