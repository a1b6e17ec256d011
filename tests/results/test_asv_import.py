"""asv result files read as benchkill results (written by asv's own Results class)."""

import datetime
import json

import pytest
from asv.results import Results as AsvResults
from asv.runner import BenchmarkResult

from benchkill.bench.model import FAILED
from benchkill.errors import BenchkillError
from benchkill.reporting.run_comparison import compare
from benchkill.reporting.verdicts import INSUFFICIENT, REGRESSION, better_direction
from benchkill.results.loading import load_any
from tests.conftest import BASE10


def scaled(values, factor):
    return [v * factor for v in values]


def write_asv(root, commit, factor, record_samples=True):
    """A results file written by asv's own Results class, as `asv run` saves it."""
    machine = {"machine": "box", "cpu": "Test CPU", "num_cpu": "2", "os": "Linux", "ram": "4GB"}
    res = AsvResults(machine, {}, commit, 1700000000000, "3.11", "existing-py", {})
    bench = {
        "name": "bench_pass.PassTime.time_pass",
        "version": "v1",
        "params": [["'chain'", "'tree'"], ["100", "1000"]],
    }
    samples = [scaled(BASE10, factor * (j + 1)) for j in range(4)]
    result = BenchmarkResult(
        result=[s[0] for s in samples],
        samples=samples,
        number=[1] * 4,
        errcode=0,
        stderr="",
        profile=None,
    )
    started = datetime.datetime(2025, 1, 2, tzinfo=datetime.timezone.utc)
    res.add_result(bench, result, started_at=started, record_samples=record_samples)
    mem = {"name": "bench_vm.Memory.peakmem_run", "version": "v1", "params": []}
    res.add_result(
        mem, BenchmarkResult([None], [None], [None], 1, "crash", None), started_at=started
    )
    bound = {
        "name": "bench_vm.VMMemory.track_vm_peak_over_bound",
        "version": "v1",
        "params": [["'chain'"]],
    }
    res.add_result(bound, BenchmarkResult([1.2 * factor], [None], [None], 0, "", None), started)
    res.save(str(root))
    benchmarks = {
        "bench_pass.PassTime.time_pass": {
            "param_names": ["family", "bindings"],
            "unit": "seconds",
            "type": "time",
        },
        "bench_vm.VMMemory.track_vm_peak_over_bound": {
            "param_names": ["workload"],
            "unit": "ratio",
            "type": "track",
        },
        "version": 2,
    }
    (root / "benchmarks.json").write_text(json.dumps(benchmarks))
    [path] = (root / "box").glob(f"{commit[:8]}-*.json")
    return path


def test_asv_results_are_read_with_their_samples(tmp_path):
    path = write_asv(tmp_path, "a" * 40, 1.0)
    results = load_any(path)
    assert results.machine.name == "box" and results.machine.git_commit == "aaaaaaaa"
    assert results.settings.started_at == "2025-01-02T00:00:00+00:00"
    times = [r for r in results.records if r.metric == "pass"]
    assert [r.params for r in times] == [
        {"family": "chain", "bindings": 100},
        {"family": "chain", "bindings": 1000},
        {"family": "tree", "bindings": 100},
        {"family": "tree", "bindings": 1000},
    ]
    assert times[1].samples == pytest.approx(scaled(BASE10, 2))
    assert times[0].unit == "seconds"
    [mem] = [r for r in results.records if r.metric == "run"]
    assert mem.status == FAILED and mem.unit == "bytes"
    [bound] = [r for r in results.records if r.metric == "vm_peak_over_bound"]
    assert (bound.unit, bound.params, bound.samples) == ("ratio", {"workload": "chain"}, (1.2,))
    assert better_direction(bound.metric, bound.unit) == "lower"


def test_two_asv_files_compare(tmp_path):
    base = load_any(write_asv(tmp_path, "a" * 40, 1.0))
    new = load_any(write_asv(tmp_path, "b" * 40, 1.25))
    report = compare(base, new)
    assert [c.verdict for c in report.comparisons].count(REGRESSION) == 4
    [bound] = [c for c in report.comparisons if c.metric == "vm_peak_over_bound"]
    assert bound.verdict == INSUFFICIENT  # one value per run: asv keeps no samples of track_
    assert report.exit_code == 1


def test_asv_without_samples_is_insufficient(tmp_path):
    base = load_any(write_asv(tmp_path, "a" * 40, 1.0, record_samples=False))
    new = load_any(write_asv(tmp_path, "b" * 40, 1.25, record_samples=False))
    verdicts = {c.verdict for c in compare(base, new).comparisons if c.metric == "pass"}
    assert verdicts == {INSUFFICIENT}


def test_unknown_json_and_old_asv_versions_are_rejected(tmp_path):
    other = tmp_path / "other.json"
    other.write_text('{"hello": 1}')
    with pytest.raises(BenchkillError, match="neither a benchkill results file nor an asv"):
        load_any(other)
    old = tmp_path / "old.json"
    old.write_text('{"version": 1, "results": {}, "result_columns": []}')
    with pytest.raises(BenchkillError, match="asv results version 1"):
        load_any(old)


def test_asv_files_with_impossible_times_or_params_load_or_say_why(tmp_path):
    """A time stamp out of the platform's range is no time (the run's start is unknown);
    ``params`` that are not an object are a malformed file: one error, no traceback."""
    path = write_asv(tmp_path, "c" * 40, 1.0)
    data = json.loads(path.read_text())
    column = data["result_columns"].index("started_at")
    for stamp in (1e300, -1e300, 1e17):
        for row in data["results"].values():
            row[column] = stamp
        data["date"] = stamp
        path.write_text(json.dumps(data))
        results = load_any(path)
        assert results.settings.started_at == ""
        assert len(results.records) > 0
    for params in ([1], "abc", 3):
        data["params"] = params
        path.write_text(json.dumps(data))
        with pytest.raises(BenchkillError, match="malformed asv results file.*params is a"):
            load_any(path)
