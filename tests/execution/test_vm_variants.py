"""measure_vm_variants: several kill variants of one module measured in one child process,
on real LLVM builds; and measure_workload(one_child=True), which the asv suite uses."""

from __future__ import annotations

import numpy as np
import pytest

from benchkill.bench.suites import vm_suite
from benchkill.errors import BenchkillError
from benchkill.execution.estimate import estimate_memory
from benchkill.execution.peak import peak_supported
from benchkill.execution.vm_measure import measure_vm_variants
from benchkill.inputs import workloads

from .test_vm_measure import CHAIN, Crash, _chain_reference

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not peak_supported(), reason="needs Linux /proc/self/clear_refs"),
]

KILLS = (None, "tvm", "beyond")


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The chain's variants in one child; the tvm variant exported."""
    path = tmp_path_factory.mktemp("variants") / "tvm.so"
    results = measure_vm_variants(
        CHAIN.mod, CHAIN.inputs, KILLS, repeat=1, peak_repeat=2, exports=[None, path, None]
    )
    return results, path


def test_each_variant_is_measured_in_order(exported):
    results, _ = exported
    assert [r.kill for r in results] == list(KILLS)
    want = _chain_reference(CHAIN.inputs[0], 6)
    for r in results:
        assert r.ok, (r.kill, r.error)
        assert len(r.seconds) == 1 and len(r.peaks) == 2 and r.build_seconds > 0
        np.testing.assert_allclose(r.outputs[0], want, rtol=1e-6)
        assert r.timeline  # bytecode mode


def test_each_variant_peak_is_its_own_program_s(exported):
    """The no-kill build first, then the killed ones, in one process: each peak still
    meets its own liveness bound (7 tensors live without kills, 3 with)."""
    results, _ = exported
    for r in results:
        bound = estimate_memory(CHAIN.mod, CHAIN.input_shapes, kill=r.kill).liveness_peak_bytes
        assert abs(r.peak_bytes / bound - 1) <= 0.05, (r.kill, r.peak_bytes, bound)
    assert results[0].peak_bytes > 2 * results[1].peak_bytes


def test_only_the_variants_given_a_path_are_exported(exported):
    import tvm
    from tvm import relax

    _, path = exported
    assert sorted(p.name for p in path.parent.iterdir()) == ["tvm.so"]
    vm = relax.VirtualMachine(tvm.runtime.load_module(str(path)), tvm.cpu())
    out = vm["main"](tvm.runtime.tensor(CHAIN.inputs[0], device=tvm.cpu()))
    np.testing.assert_allclose(out.numpy(), _chain_reference(CHAIN.inputs[0], 6), rtol=1e-6)


def test_a_crash_fails_the_variant_it_happened_in_and_those_not_run():
    """All variants are built before any runs: the first run segfaults, so none has a
    result; each says where the child was."""
    first, second = measure_vm_variants(
        Crash, [np.ones(4, "float32")], ["tvm", "benchkill"], repeat=1, peak_repeat=1
    )
    assert not first.ok and first.stage == "child"
    assert "SIGSEGV" in first.error and first.error.endswith("(during run)")
    assert not second.ok and second.stage == "child"
    assert second.error.endswith("(during variant 0, before variant 1 ran)")


def test_bad_options_raise_before_any_child(tmp_path):
    mine = tmp_path / "mine.so"
    mine.write_text("the user's")
    with pytest.raises(BenchkillError, match="mine.so exists"):
        measure_vm_variants(CHAIN.mod, CHAIN.inputs, ["tvm"], exports=[mine])
    assert mine.read_text() == "the user's"
    with pytest.raises(BenchkillError, match="2 kills but 1 exports"):
        measure_vm_variants(CHAIN.mod, CHAIN.inputs, ["tvm", None], exports=[None])
    with pytest.raises(BenchkillError, match="kill"):
        measure_vm_variants(CHAIN.mod, CHAIN.inputs, ["tvm", "no_such_kill"])


def test_measure_workload_in_one_child_gives_the_records_of_separate_children():
    w = workloads.layer_chain(3, 1)
    kills = (None, "tvm", "benchkill")
    options = {"repeat": 1, "trace": False, "reuse_equal_programs": True}
    apart = vm_suite.measure_workload(w, "compiled", "pooled", kills, **options)
    together = vm_suite.measure_workload(w, "compiled", "pooled", kills, one_child=True, **options)

    def peaks(records):
        return {r.params["kill"]: r for r in records if r.metric == "vm_peak_bytes"}

    assert [(r.params["kill"], r.metric, r.status) for r in together] == [
        (r.params["kill"], r.metric, r.status) for r in apart
    ]
    for kill, r in peaks(together).items():
        # within the method's resolution (the kernel's RSS counter slack)
        assert abs(np.median(r.samples) - np.median(peaks(apart)[kill].samples)) <= 256 << 10
    assert peaks(together)["benchkill"].extra["same_program_as"] == "tvm"
    with pytest.raises(BenchkillError, match="one_child measures no trace"):
        vm_suite.measure_workload(w, "compiled", "pooled", kills, one_child=True, trace=True)
