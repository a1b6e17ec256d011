"""The asv suite in benchmarks/ works: every benchmark runs once, asv finds no problem.

A benchmark that raises is recorded by asv as a failed measurement and a regression
check only sees a missing value, so a broken benchmark would go unnoticed; here it
fails the tests.  Each benchmark runs once at the smallest value of every parameter
(the first one), with ``setup_cache`` restricted to that one combination.
"""

from __future__ import annotations

import gc
import importlib
import json
import math
import os
import subprocess
import sys
import weakref
from typing import Any

import pytest

from benchkill.bench.machine import PROJECT_DIR
from tests.frameworks import MODELS_EXTRA, skip_without

pytestmark = pytest.mark.slow

MODULES = ("benchmarks.bench_pass", "benchmarks.bench_vm", "benchmarks.bench_real")
PREFIXES = ("time_", "timeraw_", "peakmem_", "mem_", "track_")
#: The classes whose setup raises NotImplementedError (asv's skip) without the models extra
NEEDS_MODELS = ("RealPass", "RealModelMemory")


def _import(name: str) -> Any:
    if str(PROJECT_DIR) not in sys.path:
        sys.path.insert(0, str(PROJECT_DIR))
    return importlib.import_module(name)


def _benchmark_classes() -> list[tuple[str, str]]:
    found = []
    for module_name in MODULES:
        module = _import(module_name)
        for name, obj in vars(module).items():
            if isinstance(obj, type) and obj.__module__ == module_name:
                if any(m.startswith(PREFIXES) for m in vars(obj)):
                    found.append((module_name, name))
    return found


CLASSES = _benchmark_classes()


@pytest.fixture(scope="module")
def cache_of(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """``setup_cache`` of a class, run once for its smallest parameter combination, in
    a directory of its own (as asv runs it: it may write files there); classes that
    share a ``setup_cache`` function share its result, as in asv."""
    caches: dict[Any, Any] = {}

    def get(instance: Any) -> Any:
        key = type(instance).setup_cache
        if key not in caches:
            here = os.getcwd()
            os.chdir(tmp_path_factory.mktemp("asv-cache"))
            try:
                caches[key] = instance.setup_cache()
            finally:
                os.chdir(here)
        return caches[key]

    return get


def test_every_module_has_benchmarks() -> None:
    assert {module for module, _ in CLASSES} == set(MODULES)


def test_suite_imports_builds_nothing_and_leaves_one_thread() -> None:
    """asv imports the suite in its forkserver and forks every benchmark from it: the
    import loads TVM but builds nothing, and leaves no thread but the main one (a child
    forked from a process with threads can inherit a lock held by one of them)."""
    code = (
        "import os, benchmarks.bench_pass, benchmarks.bench_vm as v; "
        "from benchmarks import common as c; "
        "print(len(os.listdir('/proc/self/task')), c.pass_input.cache_info().currsize, "
        "c.workload.cache_info().currsize, "
        "all(m in __import__('sys').modules for m in c.PRELOADED))"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env=env,
    )
    assert out.stdout.split() == ["1", "0", "0", "True"], out.stdout + out.stderr


def test_asv_forks_the_benchmarks() -> None:
    """The suite is meant for asv's forkserver (no interpreter and TVM import per benchmark)."""
    conf = json.loads((PROJECT_DIR / "asv.conf.json").read_text())
    assert conf["launch_method"] == "forkserver"


def test_shared_setup_cache_runs_once_in_asv() -> None:
    """VMMemory and VMRun share one ``setup_cache``: asv runs it once, keyed by the
    function's module and line."""
    from asv_runner.benchmarks._base import get_setup_cache_key

    bench_vm = _import("benchmarks.bench_vm")
    keys = {get_setup_cache_key(cls().setup_cache) for cls in (bench_vm.VMMemory, bench_vm.VMRun)}
    assert len(keys) == 1, keys


@pytest.mark.parametrize(("module_name", "class_name"), CLASSES)
def test_benchmark_runs_once(module_name: str, class_name: str, cache_of: Any) -> None:
    cls = getattr(_import(module_name), class_name)
    smallest = [values[0] for values in cls.params]
    assert len(cls.param_names) == len(smallest)
    instance = cls()
    instance.params = [[value] for value in smallest]
    if class_name in NEEDS_MODELS:
        skip_without(*MODELS_EXTRA)
    args = [cache_of(instance), *smallest] if hasattr(cls, "setup_cache") else smallest
    for name in sorted(vars(cls)):
        if not name.startswith(PREFIXES):
            continue
        method = getattr(instance, name)
        if hasattr(instance, "setup"):
            instance.setup(*args)
        if hasattr(method, "setup"):  # the benchmark's own, called with no self (as asv does)
            method.setup(*args)
        try:
            value = method(*args)
        finally:
            if hasattr(instance, "teardown"):
                instance.teardown(*args)
        if name.startswith("track_"):
            unit = getattr(method, "unit", getattr(instance, "unit", None))  # as asv looks it up
            assert isinstance(unit, str), f"{name} has no unit"
            assert isinstance(value, float) and math.isfinite(value) and value > 0, (name, value)
        else:
            assert value is None, name


@pytest.mark.parametrize("class_name", ["PassSpeedup", "ModelPass"])
def test_a_setup_cache_keeps_no_module_alive(class_name: str, monkeypatch) -> None:
    """The ratio ``setup_cache``s measure case after case in one process: no case's module
    or pass output may outlive its case (a live decoder slows TVM's pass on the next ones,
    README "A module left alive slows TVM's pass").  Weak references to each module built
    and each output must be dead afterwards."""
    common = _import("benchmarks.common")
    made, real_input, real_passes = [], common.new_pass_input, common.passes()

    def new_pass_input(family: str, bindings: int) -> Any:
        mod = real_input(family, bindings)
        made.append(weakref.ref(mod))
        return mod

    def recording(pass_: Any) -> Any:
        def run(mod: Any) -> Any:
            out = pass_(mod)
            made.append(weakref.ref(out))
            return out

        return run

    monkeypatch.setattr(common, "new_pass_input", new_pass_input)
    monkeypatch.setattr(common, "passes", lambda: {n: recording(p) for n, p in real_passes.items()})
    instance = getattr(_import("benchmarks.bench_pass"), class_name)()
    instance.params = [[values[0]] for values in instance.params]  # the cheapest case
    ratios = instance.setup_cache()
    gc.collect()
    assert len(ratios) == 1 and len(made) > 2
    assert [ref for ref in made if ref() is not None] == []


def test_vm_figures_are_consistent(cache_of: Any) -> None:
    """The tracked VM figures are the measured peak and its ratio to the liveness bound."""
    bench_vm = _import("benchmarks.bench_vm")
    instance = bench_vm.VMMemory()
    args = [[values[0]] for values in instance.params]
    instance.params = args
    measured = cache_of(instance)
    point = [a[0] for a in args]
    peak = instance.track_vm_peak_bytes(measured, *point)
    bound = instance.track_vm_liveness_bound_bytes(measured, *point)
    ratio = instance.track_vm_peak_over_bound(measured, *point)
    assert ratio == pytest.approx(peak / bound, rel=1e-9)
    assert ratio >= 0.9  # a measured peak far below the static bound means a broken measurement


def test_pytest_benchmarks_are_collected() -> None:
    """tests/benchmarks is left out of the default run: check that it still collects."""
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/benchmarks", "--collect-only", "-q"]
        + ["-p", "no:cacheprovider"],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    for impl in ("benchkill", "tvm"):
        assert f"test_kill_after_last_use[{impl}-3000-chain]" in out.stdout, out.stdout


def test_asv_check_finds_no_problem() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "asv", "check", "--python=same"],
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "No problems found" in out.stdout
