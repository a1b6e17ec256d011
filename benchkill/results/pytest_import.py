"""pytest-benchmark JSON files read as benchkill results, so that ``compare``, ``plot`` and
``report`` take them too (``--benchmark-autosave`` writes them under ``.benchmarks/``,
``--benchmark-json FILE`` anywhere).

Each benchmark becomes a record of suite ``pytest-benchmark``, named after the test
(``tests/benchmarks/test_bench_pass.py::test_kill_after_last_use``), with the test's
parameters and the metric ``time`` in seconds.  Its samples are the per-round times
pytest-benchmark keeps with ``--benchmark-save-data``; without it only the summary is saved
and the record has the median alone (``compare`` then says "insufficient samples").

A benchmark whose ``extra_info`` holds ``tvm_seconds`` (one TVM time per round, measured
between the rounds: ``tests/benchmarks/test_bench_pass.py::test_pass_beside_tvm``) also gets
the metric ``speedup_vs_tvm``: TVM's time over the benchmark's, round by round; one whose
``extra_info`` holds ``floor_seconds`` (the floor's time per round, measured the same way)
gets ``time_over_floor``: the benchmark's time over the floor's, round by round, lower
better, as the pass suite's metric of that name.  Such a ratio of two functions timed side
by side moves far less with the machine's speed than either time.
"""

from __future__ import annotations

import math
from datetime import datetime
from pathlib import Path
from typing import Any

from benchkill.bench.model import Machine, label
from benchkill.errors import BenchkillError
from benchkill.results.store import ResultRecord, Results, RunSettings
from benchkill.results.validation import check_records
from benchkill.stats import round_ratios, summarize

SUITE = "pytest-benchmark"
#: ``extra_info`` key of the per-round times of the reference (TVM's pass).
REFERENCE_KEY = "tvm_seconds"
#: ``extra_info`` key of the per-round times of the floor
#: (:func:`benchkill.bench.suites.pass_suite.floor_work`).
FLOOR_KEY = "floor_seconds"
#: ``extra_info`` key -> (metric, whether the benchmark's time is the numerator) of the
#: per-round ratios a benchmark gets.
ROUND_RATIOS = {REFERENCE_KEY: ("speedup_vs_tvm", False), FLOOR_KEY: ("time_over_floor", True)}


def is_pytest_benchmark(data: Any) -> bool:
    """Whether parsed JSON looks like a pytest-benchmark file."""
    return isinstance(data, dict) and "benchmarks" in data and "machine_info" in data


def _numbers(values: Any, what: str) -> tuple[float, ...]:
    if not isinstance(values, list) or not values:
        raise ValueError(f"{what} is not a list of numbers")
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ValueError(f"{what} holds {v!r}, not a finite number")
        out.append(float(v))
    return tuple(out)


def _records(bench: dict[str, Any]) -> list[ResultRecord]:
    fullname = bench["fullname"]
    if not isinstance(fullname, str):
        raise TypeError(f"fullname is a {type(fullname).__name__}")
    name = fullname.split("[", 1)[0]
    params = bench.get("params") or {}
    if not isinstance(params, dict):
        raise TypeError(f"{fullname}: params is a {type(params).__name__}, not an object")
    params = {str(k): v for k, v in params.items()}
    stats = bench["stats"]
    if not isinstance(stats, dict):
        raise TypeError(f"{fullname}: stats is a {type(stats).__name__}, not an object")
    own = _numbers(stats["data"], f"{fullname}: stats.data") if "data" in stats else None
    times = own if own is not None else _numbers([stats["median"]], f"{fullname}: median")
    case = label(SUITE, name, params)
    common = dict(case=case, suite=SUITE, name=name, params=params)
    out = [
        ResultRecord(
            **common, metric="time", unit="seconds", samples=times, summary=summarize(times)
        )
    ]
    extra = bench.get("extra_info") or {}
    if not isinstance(extra, dict) or own is None:
        return out
    for key, (metric, own_over_other) in ROUND_RATIOS.items():
        if key not in extra:
            continue
        other = _numbers(extra[key], f"{fullname}: extra_info.{key}")
        if len(other) != len(own):
            raise ValueError(f"{fullname}: {len(other)} {key} for {len(own)} rounds")
        if min(own) <= 0 or min(other) <= 0:
            raise ValueError(f"{fullname}: a round's time is 0 or negative")
        ratios = tuple(round_ratios(own, other) if own_over_other else round_ratios(other, own))
        out.append(
            ResultRecord(
                **common, metric=metric, unit="ratio", samples=ratios, summary=summarize(ratios)
            )
        )
    return out


def _is_iso(text: str) -> bool:
    try:
        datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def from_pytest_benchmark(data: dict[str, Any], path: Path) -> Results:
    """Convert a pytest-benchmark JSON file into benchkill Results."""
    try:
        benchmarks = data["benchmarks"]
        if not isinstance(benchmarks, list):
            raise TypeError(f"benchmarks is a {type(benchmarks).__name__}, not a list")
        records = [r for bench in benchmarks for r in _records(bench)]
        info = data.get("machine_info") or {}
        commit = data.get("commit_info") or {}
        if not isinstance(info, dict) or not isinstance(commit, dict):
            raise TypeError("machine_info and commit_info must be objects")
        cpu = info.get("cpu") if isinstance(info.get("cpu"), dict) else {}
        when = data.get("datetime")
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise BenchkillError(f"{path}: malformed pytest-benchmark file: {exc!r}"[:300]) from None
    check_records(records, path)
    commit_id = commit.get("id")
    cores = cpu.get("count")
    machine = Machine(
        name=str(info.get("node") or path.parent.name),
        hostname=info.get("node") if isinstance(info.get("node"), str) else None,
        cpu_model=cpu.get("brand_raw") if isinstance(cpu.get("brand_raw"), str) else None,
        cores=cores if isinstance(cores, int) and not isinstance(cores, bool) else None,
        os=info.get("system") if isinstance(info.get("system"), str) else None,
        python=info.get("python_version") if isinstance(info.get("python_version"), str) else None,
        python_build=_text(info.get("python_build")),  # tests/benchmarks/conftest.py adds
        malloc=_text(info.get("malloc")),  # these two to pytest-benchmark's machine_info
        git_commit=commit_id[:8]
        if isinstance(commit_id, str) and commit_id != "unversioned"
        else None,
        git_dirty=commit.get("dirty") if isinstance(commit.get("dirty"), bool) else None,
    )
    started = when if isinstance(when, str) and _is_iso(when) else ""
    settings = RunSettings(
        suites=(SUITE,), quick=False, command=(SUITE,), started_at=started, finished_at=started
    )
    return Results(machine, settings, (), tuple(records))
