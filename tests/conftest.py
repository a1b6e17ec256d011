"""Shared helpers for benchkill's tests."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

import pytest
import tvm
from hypothesis import settings
from tvm import relax

import benchkill

# hypothesis writes nothing into the checkout: no example database, and its other storage
# (a cache of the constants in local modules, written even without a database) goes to a
# temporary directory unless HYPOTHESIS_STORAGE_DIRECTORY says where.
if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
    _storage = tempfile.mkdtemp(prefix="benchkill-tests-hypothesis-")
    atexit.register(shutil.rmtree, _storage, ignore_errors=True)
    os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = _storage
settings.register_profile("benchkill", database=None, deadline=None)
settings.load_profile("benchkill")


def run_both(mod: tvm.IRModule, **options) -> tuple[tvm.IRModule, tvm.IRModule]:
    """The output of TVM's C++ pass and of benchkill's pass (with ``options``) on ``mod``."""
    return relax.transform.KillAfterLastUse()(mod), benchkill.KillAfterLastUse(**options)(mod)


def _assert_same_as_tvm(mod: tvm.IRModule) -> tvm.IRModule:
    """benchkill's default output on ``mod`` is structurally equal to TVM's; returns it."""
    expected, actual = run_both(mod)
    tvm.ir.assert_structural_equal(actual, expected, map_free_vars=True)
    return actual


@pytest.fixture(scope="session")
def llvm_target() -> tvm.target.Target:
    return tvm.target.Target("llvm")


@pytest.fixture
def same_as_tvm():
    """Check that benchkill's default output on a module equals TVM's; returns the output."""
    return _assert_same_as_tvm


# --- factories: records, results files, fake clocks, fake suites ---------------------
# Shared by the tests of cli, reporting, results and bench; import them with
# ``from tests.conftest import ...`` (``fake_suite`` is a fixture).

#: Ten timings around 1 s with ties, as a pass run measures them.
BASE10 = (1.00, 1.01, 1.02, 0.99, 1.00, 1.03, 0.98, 1.01, 1.00, 1.02)
STARTED = "2025-01-01T00:00:00+00:00"


def make_record(
    samples=BASE10,
    metric="pass_time",
    unit="seconds",
    *,
    suite="pass",
    name="chain",
    params=None,
    status="ok",
    error=None,
    extra=None,
    case=None,
):
    """A stored record (ResultRecord) with its summary computed from ``samples``."""
    from benchkill.bench.model import label
    from benchkill.results.store import ResultRecord
    from benchkill.stats import summarize

    params = {"bindings": 100} if params is None else params
    samples = tuple(float(v) for v in samples)
    return ResultRecord(
        case=case or label(suite, name, params),
        suite=suite,
        name=name,
        params=params,
        metric=metric,
        unit=unit,
        samples=samples,
        summary=summarize(samples) if samples else None,
        status=status,
        error=error,
        extra=extra or {},
    )


def make_results(records=(), started=STARTED, *, suites=("pass",), quick=True, cases=(), **machine):
    """One run of ``records`` on machine "box" (``machine`` sets other Machine fields)."""
    from benchkill.bench.model import Machine
    from benchkill.results.store import Results, RunSettings

    settings = RunSettings(tuple(suites), quick, ("benchkill", "run"), started)
    return Results(Machine(**{"name": "box", **machine}), settings, tuple(cases), tuple(records))


def suites_run(records, started=STARTED, commit="abc1234"):
    """A run of the pass and vm suites, as ``benchkill run`` writes it (commit, 2 cores)."""
    return make_results(records, started, suites=("pass", "vm"), git_commit=commit, cores=2)


MiB = 2**20


def pass_records(scale=1.0, families=("chain", "diamond")):
    """pass_time records of benchkill (time ~ n) and naive (~ n^2), as the pass suite has them."""
    out = []
    for family in families:
        for n in (100, 1000, 10000):
            for impl, t in (("benchkill", 1e-6 * n), ("naive", 1e-9 * n * n)):
                out.append(
                    make_record(
                        [t * scale * f for f in (0.99, 1.0, 1.01)],
                        name=family,
                        params={"family": family, "bindings": n, "impl": impl},
                    )
                )
    return out


def vm_records(workloads=("mlp", "conv"), peak_scale=1):
    """Records as the vm suite writes them (params, units "s" and "bytes", timelines)."""
    out = []
    for workload in workloads:
        for kill in (None, "tvm", "benchkill"):
            for mode in ("bytecode", "compiled"):
                params = {
                    "workload": workload,
                    "exec_mode": mode,
                    "memory_cfg": "pooled",
                    "kill": kill,
                }
                peak = (20 if kill is None else 10) * MiB * peak_scale
                extra = {"static_live_bytes": [1 * MiB, 3 * MiB, 2 * MiB], "measured_bytes": []}
                if mode == "bytecode":
                    extra["measured_bytes"] = [300 * MiB, 301 * MiB, 304 * MiB, 302 * MiB]
                vm = dict(suite="vm", name=workload, params=params)
                out.append(make_record([peak] * 3, "vm_peak_bytes", "bytes", **vm, extra=extra))
                out.append(make_record([peak * 0.8], "liveness_bound_bytes", "bytes", **vm))
                out.append(make_record([1e-3, 1.1e-3, 1.2e-3], "vm_run_time", "s", **vm))
    return out


def write_results(path, factor=1.0, name="chain", version=None):
    """A results file of one pass_time record (BASE10 times ``factor``); ``version``
    overwrites its schema_version."""
    import json

    from benchkill.results.store import save

    samples = [v * factor for v in BASE10]
    save(make_results([make_record(samples, name=name)]), path)
    if version is not None:
        data = json.loads(path.read_text())
        data["schema_version"] = version
        path.write_text(json.dumps(data))
    return path


class FakeClock:
    """A clock whose readings are ``start``, ``start + step``, ...: every interval is ``step``;
    with ``steps``, the intervals between readings are those, in turn (repeated)."""

    def __init__(self, step=1.0, start=0.0, steps=None):
        self.now = start
        self.steps = tuple(steps) if steps else (step,)
        self.readings = 0

    def __call__(self):
        if self.readings:
            self.now += self.steps[(self.readings - 1) % len(self.steps)]
        self.readings += 1
        return self.now


class FakeSuite:
    """A suite of ``n`` cases (2 with --quick), each recording "t" (seconds) and "mem"
    (bytes); chosen cases raise, fail expectedly, return a NaN sample or interrupt."""

    NAME = "fake"

    def __init__(self, n=4, raise_at=(), expected_at=(), interrupt_at=None, bad=None):
        self.n, self.raise_at, self.expected_at = n, raise_at, expected_at
        self.interrupt_at, self.bad = interrupt_at, bad
        self.calls = []
        self.on_call = None

    def cases(self, quick):
        from benchkill.bench.model import CaseSpec

        return [CaseSpec("fake", "case", {"i": i}) for i in range(2 if quick else self.n)]

    def run_case(self, spec):
        from benchkill.bench.model import EXPECTED_FAILURE, Record

        i = spec.params["i"]
        self.calls.append(i)
        if self.on_call:
            self.on_call(i)
        if i == self.interrupt_at:
            raise KeyboardInterrupt
        if i in self.raise_at:
            raise RuntimeError(f"case {i} broke\n  on two lines")

        def record(metric, unit, samples=(), **kw):
            return Record("fake", "case", spec.params, metric, unit, tuple(samples), **kw)

        if i == self.bad:
            return [record("t", "seconds", [float("nan")])]
        if i in self.expected_at:
            return [record("t", "seconds", status=EXPECTED_FAILURE, error="not supported")]
        return [
            record("t", "seconds", [i + 1.0, i + 1.5, i + 2.0]),
            record("mem", "bytes", [100.0 * (i + 1)]),
        ]


@pytest.fixture
def fake_suite(monkeypatch):
    """A FakeSuite registered as the only suite of ``benchkill run``."""
    import sys

    from benchkill.bench.suites import SUITES

    suite = FakeSuite()
    monkeypatch.setitem(sys.modules, "benchkill_test_fake_suite", suite)
    for name in list(SUITES):
        monkeypatch.delitem(SUITES, name)
    monkeypatch.setitem(SUITES, "fake", "benchkill_test_fake_suite")
    return suite


def entry_point_package(tmp_path, monkeypatch, source: str, prefix: str) -> str:
    """A module of the user's entry points (``source``) in the current directory, beside one
    that raises at import (``broken_<name>``); returns its name (unique per test)."""
    import textwrap
    import uuid

    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
    (tmp_path / f"broken_{name}.py").write_text("raise RuntimeError('broken at import')\n")
    monkeypatch.chdir(tmp_path)
    return name
