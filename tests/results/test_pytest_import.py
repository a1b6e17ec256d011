"""pytest-benchmark JSON files read as benchkill results (written by a real pytest-benchmark
run of a small benchmark file in a child process)."""

import json
import subprocess
import sys

import pytest

from benchkill.bench.machine import malloc_in_use, python_build
from benchkill.cli.main import main
from benchkill.errors import BenchkillError
from benchkill.results.loading import load_any
from benchkill.results.pytest_import import SUITE

ROUNDS = 12

#: Like tests/benchmarks/test_bench_pass.py::test_pass_beside_tvm: a reference and a floor
#: timed in the setup of each round, their times in extra_info["tvm_seconds"] and
#: extra_info["floor_seconds"].
BENCH = f"""
import time
import pytest

def reference():
    return sorted(range(20000, 0, -1))

def own():
    return sum(range(20000))

def floor():
    return sum(range(5000))

@pytest.mark.parametrize("n", [1, 2])
def test_speedup(benchmark, n):
    seconds, floor_seconds = [], []
    def setup():
        start = time.perf_counter()
        reference()
        middle = time.perf_counter()
        floor()
        seconds.append(middle - start)
        floor_seconds.append(time.perf_counter() - middle)
        return (), {{}}
    benchmark.pedantic(own, setup=setup, rounds={ROUNDS}, iterations=1, warmup_rounds=1)
    benchmark.extra_info["tvm_seconds"] = seconds[1:]
    benchmark.extra_info["floor_seconds"] = floor_seconds[1:]

def test_plain(benchmark):
    benchmark.pedantic(own, rounds=3, iterations=1)
"""


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """(a ``--benchmark-json`` file, which has the rounds, and a ``--benchmark-save`` file
    saved without ``--benchmark-save-data``, which has the summary alone)."""
    root = tmp_path_factory.mktemp("pytest-benchmark")
    (root / "test_tiny.py").write_text(BENCH)
    store = root / "store"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_tiny.py",
         "--benchmark-only", f"--benchmark-json={root / 'data.json'}",
         "--benchmark-save=summary", f"--benchmark-storage=file://{store}"],
        cwd=root, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    [summary] = store.glob("*/0001_summary.json")
    return root / "data.json", summary


def test_rounds_become_samples_and_the_reference_a_ratio_per_round(saved):
    path, _ = saved
    raw = {b["fullname"]: b for b in json.loads(path.read_text())["benchmarks"]}
    results = load_any(path)
    assert results.settings.suites == (SUITE,)
    by_key = {(r.name, tuple(sorted(r.params.items())), r.metric): r for r in results.records}
    for n in (1, 2):
        bench = raw[f"test_tiny.py::test_speedup[{n}]"]
        time_ = by_key[("test_tiny.py::test_speedup", (("n", n),), "time")]
        assert time_.samples == tuple(bench["stats"]["data"]) and time_.unit == "seconds"
        assert len(time_.samples) == ROUNDS
        ratio = by_key[("test_tiny.py::test_speedup", (("n", n),), "speedup_vs_tvm")]
        reference = bench["extra_info"]["tvm_seconds"]
        assert ratio.samples == pytest.approx(
            [r / t for r, t in zip(reference, time_.samples, strict=True)]
        )
        assert ratio.unit == "ratio"
        over = by_key[("test_tiny.py::test_speedup", (("n", n),), "time_over_floor")]
        floor = bench["extra_info"]["floor_seconds"]
        assert over.samples == pytest.approx(
            [t / f for t, f in zip(time_.samples, floor, strict=True)]
        )
        assert over.unit == "ratio"
    for metric in ("speedup_vs_tvm", "time_over_floor"):  # no reference, no floor
        assert ("test_tiny.py::test_plain", (), metric) not in by_key
    assert results.machine.cores is not None and results.settings.started_at


def test_without_saved_rounds_there_is_the_median_alone(saved):
    _, path = saved
    records = load_any(path).records
    assert {r.metric for r in records} == {"time"}  # no ratio without the rounds
    raw = {b["fullname"]: b for b in json.loads(path.read_text())["benchmarks"]}
    for r in records:
        [bench] = [b for name, b in raw.items() if name.split("[")[0] == r.name
                   and b["params"] == (r.params or None)]  # fmt: skip
        assert r.samples == (bench["stats"]["median"],)


def test_compare_flags_a_slower_copy_in_time_and_in_both_ratios(saved, tmp_path, capsys):
    """A copy whose rounds of the timed function are 3x longer (the reference's and the
    floor's unchanged): a regression of ``time``, of ``speedup_vs_tvm`` (which falls) and
    of ``time_over_floor`` (which rises); the file against itself: none.

    The real file's rounds are first made steady (each series its median times 1, 1.01,
    1.02, ...): on a loaded machine a round can take several times its median, and this
    test is about how compare reads the file, not about the machine's noise."""
    path, _ = saved
    data = json.loads(path.read_text())

    def steady(values: list[float]) -> list[float]:
        middle = sorted(values)[len(values) // 2]
        return [middle * (1 + 0.01 * i) for i in range(len(values))]

    for bench in data["benchmarks"]:
        bench["stats"]["data"] = steady(bench["stats"]["data"])
        for key in ("tvm_seconds", "floor_seconds"):
            if key in bench["extra_info"]:
                bench["extra_info"][key] = steady(bench["extra_info"][key])
    base = tmp_path / "steady.json"
    base.write_text(json.dumps(data))
    for bench in data["benchmarks"]:
        bench["stats"]["data"] = [3 * v for v in bench["stats"]["data"]]
    slower = tmp_path / "slower.json"
    slower.write_text(json.dumps(data))
    assert main(["compare", str(path), str(path)]) == 0
    capsys.readouterr()
    assert main(["compare", str(base), str(slower), "--json"]) == 1
    verdicts = {
        (c["name"], c["metric"]): c["verdict"]
        for c in json.loads(capsys.readouterr().out)["comparisons"]
    }
    for ratio in ("speedup_vs_tvm", "time_over_floor"):
        assert {v for (name, metric), v in verdicts.items() if metric == ratio} == {"regression"}
    assert verdicts[("test_tiny.py::test_plain", "time")] != "regression"  # 3 rounds: too few
    assert {v for (n, m), v in verdicts.items() if n.endswith("speedup") and m == "time"} == {
        "regression"
    }


@pytest.mark.parametrize(
    "change,fragment",
    [
        (lambda d: d.update(benchmarks={}), "benchmarks is a dict, not a list"),
        (lambda d: d["benchmarks"][0]["stats"].update(data=["x"]), "holds 'x'"),
        (lambda d: d["benchmarks"][0]["stats"].update(data=[-1.0] * ROUNDS), "0 or negative"),
        (lambda d: d["benchmarks"][0]["extra_info"].update(tvm_seconds=[1.0]), "1 tvm_seconds"),
        (lambda d: d["benchmarks"][0]["extra_info"].update(floor_seconds=[1.0] * 3), "3 floor"),
        (
            lambda d: d["benchmarks"][0]["extra_info"].update(floor_seconds=[0.0] * ROUNDS),
            "0 or negative",
        ),
        (lambda d: d["benchmarks"][0].update(params=[1]), "params is a list"),
        (lambda d: d["benchmarks"][0].pop("stats"), "KeyError('stats')"),
    ],
)
def test_malformed_files_are_one_error_naming_the_problem(saved, tmp_path, change, fragment):
    path, _ = saved
    data = json.loads(path.read_text())
    change(data)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(BenchkillError, match="bad.json") as info:
        load_any(bad)
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_the_projects_benchmark_beside_tvm_gives_both_ratios_per_round(tmp_path):
    """tests/benchmarks' own ratio benchmark, run for real at its smallest generated case
    and its smallest real decoder (the IR TVM's pipeline gives the kill pass)."""
    from pathlib import Path

    project = Path(__file__).resolve().parents[2]
    out = tmp_path / "run.json"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/benchmarks",
         "-k", "test_pass_beside_tvm and (3000-chain or 300-model)", "--benchmark-only",
         f"--benchmark-json={out}"],
        cwd=project, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    results = load_any(out)
    assert results.machine.malloc == malloc_in_use()  # tests/benchmarks/conftest.py's
    assert results.machine.python_build == python_build()
    records = results.records
    assert {(r.params["family"], r.params["bindings"], r.metric) for r in records} == {
        (family, bindings, metric)
        for family, bindings in (("chain", 3000), ("model", 300))
        for metric in ("time", "speedup_vs_tvm", "time_over_floor")
    }
    for ratio in (r for r in records if r.metric != "time"):
        assert len(ratio.samples) == 12 and min(ratio.samples) > 0


def test_a_time_that_is_not_iso_is_no_time(saved, tmp_path):
    path, _ = saved
    data = json.loads(path.read_text())
    data["datetime"] = "yesterday"
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps(data))
    assert load_any(odd).settings.started_at == ""
    assert load_any(path).settings.started_at == json.loads(path.read_text())["datetime"]
