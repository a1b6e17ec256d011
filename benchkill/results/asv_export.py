"""benchkill results written as asv results, so that ``asv publish`` draws them.

asv's dashboard (graphs per benchmark and parameters over commits, its regressions page
from its own step detection) is the existing engine for results of many machines; this
module feeds it benchkill's runs, instruction counts included.  Each (suite, name,
metric) becomes one asv ``track`` benchmark named ``benchkill.<suite>.<name>.track_<metric>``
whose parameters are the records' (their values' Cartesian product, a missing
combination left empty), with the record's unit; each run becomes one asv results file
of its machine at its commit (the full sha, resolved in the git repository the asv
configuration names), with the raw samples.  Written through asv's own
:class:`asv.results.Results`, so the files are what ``asv run`` would write, next to a
``benchmarks.json`` and each machine's ``machine.json``.
"""

from __future__ import annotations

import datetime
import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchkill.bench.model import OK
from benchkill.errors import BenchkillError
from benchkill.results.atomic import write_atomic
from benchkill.results.store import ResultRecord, Results

ENV_NAME = "benchkill"
#: The benchmark version asv compares between benchmarks.json and results files.
VERSION = "benchkill-1"


def benchmark_name(r: ResultRecord) -> str:
    return f"benchkill.{r.suite}.{r.name}.track_{r.metric}"


def _param_repr(value: Any) -> str:
    """A parameter value as asv stores it: its repr()."""
    return repr(value)


def benchmarks_of(runs: Sequence[Results]) -> dict[str, dict[str, Any]]:
    """asv's benchmark description per exported benchmark (benchmarks.json's entries)."""
    values: dict[str, dict[str, dict[str, None]]] = defaultdict(lambda: defaultdict(dict))
    units: dict[str, str] = {}
    for run in runs:
        for r in run.records:
            if r.status != OK or not r.samples:
                continue
            name = benchmark_name(r)
            units[name] = r.unit
            for k, v in r.params.items():
                values[name][k][_param_repr(v)] = None
            values[name]  # noqa: B018 - a benchmark without parameters still counts
    out = {}
    for name in sorted(units):
        names = sorted(values[name])
        out[name] = {
            "name": name,
            "pretty_name": name.removeprefix("benchkill."),
            "type": "track",
            "unit": units[name],
            "param_names": names,
            "params": [sorted(values[name][k]) for k in names],
            "version": VERSION,
            "code": "benchkill results (benchkill.results.asv_export)",
            "timeout": 60,
        }
    return out


def _machine_json(run: Results) -> dict[str, Any]:
    m = run.machine
    return {
        "machine": m.name,
        "arch": "",
        "cpu": m.cpu_model or "",
        "num_cpu": str(m.cores or ""),
        "os": m.os or "",
        "ram": str(m.memory_bytes or ""),
        "version": 1,
    }


def _values(bench: dict[str, Any], records: list[ResultRecord]) -> tuple[list, list]:
    """asv's result and samples lists (one per parameter combination, in asv's order)."""
    import itertools

    by_combo = {
        tuple(_param_repr(r.params.get(k)) for k in bench["param_names"]): r for r in records
    }
    result, samples = [], []
    for combo in itertools.product(*bench["params"]):
        r = by_combo.get(tuple(combo))
        result.append(r.summary.median if r is not None and r.summary else None)
        samples.append(list(r.samples) if r is not None else None)
    return result, samples


def export(
    runs: Sequence[Results],
    out: Path,
    full_sha: Callable[[str], str | None],
    commit_date: Callable[[str], int],
) -> list[Path]:
    """Write ``runs`` under the asv results directory ``out``; returns the files written.

    ``full_sha`` turns a run's short commit into the full sha asv needs (None: the run is
    refused), ``commit_date`` gives a commit's date in milliseconds since the epoch.
    """
    from asv.results import Results as AsvResults
    from asv.runner import BenchmarkResult

    benchmarks = benchmarks_of(runs)
    if not benchmarks:
        raise BenchkillError("no measured record to export")
    written = []
    for run in runs:
        commit = full_sha(run.machine.git_commit or "")
        if commit is None:
            raise BenchkillError(
                f"run of {run.settings.started_at}: commit {run.machine.git_commit!r} is not "
                "in the repository; asv publish places results by commit"
            )
        py = (run.machine.python or "").split()[-1:] or [""]
        params = {"machine": run.machine.name, "python": py[0], "cpu": run.machine.cpu_model}
        result = AsvResults(params, {}, commit, commit_date(commit), py[0], ENV_NAME, {})
        grouped: dict[str, list[ResultRecord]] = defaultdict(list)
        for r in run.records:
            if r.status == OK and r.samples:
                grouped[benchmark_name(r)].append(r)
        started = datetime.datetime.fromisoformat(run.settings.started_at)
        for name, records in grouped.items():
            values, samples = _values(benchmarks[name], records)
            outcome = BenchmarkResult(values, samples, [None] * len(values), 0, "", None)
            result.add_result(benchmarks[name], outcome, started, 0.0, record_samples=True)
        machine_dir = out / run.machine.name
        target = Path(out) / result._filename  # noqa: SLF001 - asv names its file
        if target.exists() or target in written:
            raise BenchkillError(f"{target}: already exists; it is not overwritten")
        machine_dir.mkdir(parents=True, exist_ok=True)
        result.save(str(out))
        written.append(target)
        machine_file = machine_dir / "machine.json"
        if not machine_file.exists():
            write_atomic(machine_file, json.dumps(_machine_json(run), indent=1) + "\n")
    index = {"version": 2, **benchmarks}
    path = out / "benchmarks.json"
    if path.exists():
        old = json.loads(path.read_text())
        index = {**old, **index}
    write_atomic(path, json.dumps(index, indent=1) + "\n")
    return written
