"""The real models in the "vm" suite: one small model in --quick, every model in a full
run, and the quick case measured for real (PyTorch's outputs, kills that free memory)."""

from __future__ import annotations

from benchkill.bench.model import OK
from benchkill.bench.suites import vm_real, vm_suite
from benchkill.inputs import workloads
from tests.frameworks import pretend_installed, require


def test_quick_keeps_one_real_model_and_a_full_run_has_them_all(monkeypatch):
    pretend_installed(monkeypatch, "torch", "torchvision")  # the cases are listed, not built
    quick = [c for c in vm_suite.cases(True) if c.name in workloads.REAL_MODELS]
    assert len(quick) == 1 and quick[0].params["sizes"] == "quick"
    full = [c for c in vm_suite.cases(False) if c.name in workloads.REAL_MODELS]
    assert {c.name for c in full} == set(workloads.REAL_MODELS)
    assert {c.params["shape"] for c in full} == {"static", "bounded", "unbounded"}
    assert all(c.params["sizes"] == "full" for c in full)
    assert len({tuple(sorted(c.params.items())) for c in full}) == len(full) == len(vm_real.FULL)


def test_the_quick_real_model_case_checks_pytorch_and_its_kills_free_memory():
    require("torch", "torchvision")
    (spec,) = vm_real.real_cases(quick=True)
    records = vm_suite.run_case(spec)
    assert {r.status for r in records} == {OK}, [r.error for r in records if r.status != OK]
    peak = {r.params["kill"]: min(r.samples) for r in records if r.metric == "vm_peak_bytes"}
    assert set(peak) == {None, "tvm", "benchkill", "beyond"}
    # naive allocator, batch with no upper bound: the kills free the planner's storages
    assert peak["tvm"] < 0.7 * peak[None]
    same = {r.params["kill"]: r.extra.get("same_program_as") for r in records}
    assert same["benchkill"] == same["beyond"] == "tvm"  # equal programs measured once


def test_without_the_models_extra_the_real_cases_are_skipped_in_one_line(monkeypatch, capsys):
    """`pip install -e .` (no torch): `run --quick` skips the real model, it does not fail."""
    import importlib.util

    from benchkill.bench.suites import vm_real

    pretend_installed(monkeypatch, "torchvision")
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n, *a: None if n == "torch" else real(n, *a)
    )
    assert vm_real.real_cases(quick=True) == []
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "vm suite: the real models skipped: they need torch (pip install -e '.[models]')"
    ]
