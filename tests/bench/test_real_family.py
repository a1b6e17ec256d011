"""The ``real`` family of the pass suite: PyTorch models' kill inputs timed beside TVM's
pass and the floor, outputs checked; skipped with one line without the models extra."""

from __future__ import annotations

import gc
import weakref

import pytest

from benchkill.bench.model import OK
from benchkill.bench.suites import pass_suite as ps
from benchkill.errors import BenchkillError
from benchkill.inputs import real_pass
from benchkill.relax.counting import count_bindings
from tests.conftest import FakeClock
from tests.frameworks import pretend_installed


def test_the_full_sweep_ends_with_the_real_family_or_says_why_not(monkeypatch, capsys):
    monkeypatch.setattr(ps, "missing", lambda: None)
    full = ps.cases(quick=False)
    real = [c for c in full if c.params["family"] == real_pass.REAL]
    assert [c.params["model"] for c in real] == list(real_pass.REAL_CASES)
    assert full[-len(real) :] == real and not any(
        c.params["family"] == real_pass.REAL for c in ps.cases(quick=True)
    )
    assert len({c.key for c in full}) == len(full)  # the model makes each key
    monkeypatch.setattr(ps, "missing", lambda: "family 'real' skipped: it needs torch")
    capsys.readouterr()
    assert len(ps.cases(quick=False)) == len(full) - len(real)
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["pass suite: family 'real' skipped: it needs torch"]


def test_missing_names_the_absent_packages(monkeypatch):
    import importlib.util

    pretend_installed(monkeypatch, "torch")
    find = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n, *a: None if n == "torchvision" else find(n, *a)
    )
    reason = real_pass.missing()
    assert "torchvision" in reason and "torch and" not in reason and "[models]" in reason


def test_an_unknown_real_case_is_a_one_line_error():
    with pytest.raises(BenchkillError, match="unknown real case 'resnet99'"):
        real_pass.pass_input(real_pass.REAL, "resnet99")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["resnet18-static", "encoder-unbounded"])
def test_a_real_case_is_timed_checked_against_tvm_and_not_kept(name, monkeypatch):
    from tests.frameworks import require

    require("torch", "torchvision")
    made, build = [], ps.pass_input

    def recorded(*args):
        mod = build(*args)
        made.append((weakref.ref(mod), count_bindings(mod)))
        return mod

    monkeypatch.setattr(ps, "pass_input", recorded)
    spec = ps.real_case(name)
    records = ps.run_case(spec, clock=FakeClock(1.0), cpu_clock=FakeClock(0.5))
    assert records and all(r.status == OK for r in records), [r.error for r in records]
    assert {r.params["model"] for r in records} == {name}
    [(ref, actual)] = made
    gc.collect()
    assert ref() is None  # the registry's cache released: the case keeps no module alive
    assert all(r.extra["bindings_actual"] == actual for r in records)
    # the nominal size is the measured one, to within a tenth (another torch may move it)
    assert abs(actual - spec.params["bindings"]) <= spec.params["bindings"] / 10
    metrics = {(r.params["impl"], r.metric) for r in records}
    assert ("benchkill", ps.SPEEDUP) in metrics and ("benchkill", ps.OVER_FLOOR) in metrics


def test_instruction_counts_of_a_real_case_name_its_model(monkeypatch):
    from benchkill.bench import instruction_records as ir
    from benchkill.bench.instructions import Counts

    jobs = []

    def count_all(given, counter):
        jobs.extend(given)
        return [
            [Counts(job["impl"], 285, (n, n), n, 1.0, 1.0, {}, {})]
            for job, n in zip(given, (100, 200), strict=True)
        ]

    monkeypatch.setattr(ir, "count_all", count_all)
    spec = ps.real_case("resnet18-static")
    [records] = ir.case_records("pass", [spec], ("benchkill", "tvm"), 2)
    # the child is given the case by its model, not by a size
    assert [job["cases"] for job in jobs] == [[("real", "resnet18-static", 0)]] * 2
    assert {r.params["model"] for r in records} == {"resnet18-static"}
    ratio = next(r for r in records if r.metric == "instructions_vs_tvm")
    assert ratio.samples == (2.0, 2.0)
