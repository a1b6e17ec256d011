"""Peak measurement (calibrated against known allocations) and the static liveness bound
(hand-written lowered modules with answers worked out by hand, TVM's own estimate)."""

# ruff: noqa: F841 - TVMScript bindings are IR, not Python variables

from __future__ import annotations

import numpy as np
import pytest
from tvm.script import ir as I
from tvm.script import relax as R
from tvm.script import tirx as T

from benchkill.errors import BenchkillError
from benchkill.execution.memory import (
    ChildOutcome,
    estimate_memory,
    measure_allocation,
    peak_of,
    peak_supported,
    tvm_planned_bytes,
)
from benchkill.execution.pipeline import kill_pass, lower_to_kill_input
from benchkill.inputs import workloads

MiB = 1 << 20

needs_proc = pytest.mark.skipif(not peak_supported(), reason="needs Linux /proc/self/clear_refs")


# --- measured peak ----------------------------------------------------------------


@pytest.mark.slow
@needs_proc
@pytest.mark.parametrize("mib", [64, 256])
def test_calibration_in_child_within_5_percent(mib):
    nbytes = mib * MiB
    measured = measure_allocation(nbytes)
    assert abs(measured / nbytes - 1) <= 0.05, (measured, nbytes)


@needs_proc
def test_peak_of_counts_the_result_it_keeps_alive():
    nbytes = 64 * MiB  # above glibc's largest dynamic mmap threshold: a fresh mapping
    block, peak = peak_of(lambda: np.ones(nbytes, dtype=np.uint8))
    assert block.nbytes == nbytes
    assert abs(peak / nbytes - 1) <= 0.05


def test_measure_allocation_rejects_a_bad_size():
    with pytest.raises(BenchkillError, match="positive integer"):
        measure_allocation(0)


@pytest.mark.parametrize(
    "outcome, text",
    [
        (ChildOutcome(-11, False, "Segmentation fault\n"), "killed by SIGSEGV"),
        (
            ChildOutcome(3, False, "Traceback\nValueError: boom\n"),
            "exited with code 3: ValueError: boom",
        ),
        (ChildOutcome(None, True, ""), "timed out"),
        (ChildOutcome(-9, False, ""), "killed by SIGKILL"),
        (ChildOutcome(0, False, "noise"), ""),
    ],
)
def test_child_outcome_describes_how_it_ended(outcome, text):
    assert outcome.describe() == (f"child process {text}" if text else "")
    assert outcome.ok is (text == "")


# --- liveness bound on hand-written lowered modules -------------------------------


@I.ir_module
class StraightLine:
    @R.function(pure=False)
    def main(x: R.Tensor((4,), "float32")):
        s1 = R.memory.alloc_storage(R.shape([1000]), 0, "global", "uint8")
        t1 = R.memory.alloc_tensor(s1, 0, R.shape([4]), "float32")
        s2 = R.memory.alloc_storage(R.shape([2000]), 0, "global", "uint8")
        t2 = R.memory.alloc_tensor(s2, 0, R.shape([4]), "float32")
        k1 = R.memory.kill_storage(s1)  # t1 still holds block 1
        k2 = R.memory.kill_tensor(t1)  # block 1 freed: 2000 live
        s3 = R.memory.alloc_storage(R.shape([4000]), 0, "global", "uint8")  # 6000: the peak
        t3 = R.memory.alloc_tensor(s3, 0, R.shape([4]), "float32")
        k3 = R.memory.kill_storage(s2)
        k4 = R.memory.kill_tensor(t2)  # block 2 freed: 4000
        k5 = R.memory.kill_storage(s3)
        return t3


@I.ir_module
class StraightLineNoKills:
    @R.function(pure=False)
    def main(x: R.Tensor((4,), "float32")):
        s1 = R.memory.alloc_storage(R.shape([1000]), 0, "global", "uint8")
        t1 = R.memory.alloc_tensor(s1, 0, R.shape([4]), "float32")
        s2 = R.memory.alloc_storage(R.shape([2000]), 0, "global", "uint8")
        t2 = R.memory.alloc_tensor(s2, 0, R.shape([4]), "float32")
        s3 = R.memory.alloc_storage(R.shape([4000]), 0, "global", "uint8")
        t3 = R.memory.alloc_tensor(s3, 0, R.shape([4]), "float32")
        return t3


def test_liveness_straight_line_known_answer():
    est = estimate_memory(StraightLine, lowered=True)
    assert est.liveness_peak_bytes == 6000
    assert [p.live_bytes for p in est.curve] == [
        1000, 1000, 3000, 3000, 3000, 2000, 6000, 6000, 6000, 4000, 4000
    ]  # fmt: skip
    assert [p.var for p in est.curve][:3] == ["s1", "t1", "s2"]
    assert est.total_bytes == 7000 == est.executed_bytes
    assert est.paths == 1 and est.exhaustive


def test_pooled_model_reuses_only_buffers_of_the_same_page_rounded_size():
    # 1000, 2000 and 4000 bytes all round up to one 4096-byte page: s3 reuses s1's
    assert estimate_memory(StraightLine, lowered=True).pooled_bytes == 2 * 4096


@I.ir_module
class TwoSizes:
    @R.function(pure=False)
    def main(x: R.Tensor((4,), "float32")):
        s1 = R.memory.alloc_storage(R.shape([8192]), 0, "global", "uint8")
        k1 = R.memory.kill_storage(s1)
        s2 = R.memory.alloc_storage(R.shape([12288]), 0, "global", "uint8")
        k2 = R.memory.kill_storage(s2)
        s3 = R.memory.alloc_storage(R.shape([8192]), 0, "global", "uint8")
        return s3


def test_pooled_model_keeps_freed_buffers_of_other_sizes():
    est = estimate_memory(TwoSizes, lowered=True)
    assert est.liveness_peak_bytes == 12288  # one buffer live at a time
    assert est.pooled_bytes == 8192 + 12288  # s3 reuses s1's buffer, s2's stays pooled


def test_liveness_without_kills_holds_everything():
    assert estimate_memory(StraightLineNoKills, lowered=True).liveness_peak_bytes == 7000


@I.ir_module
class Calls:
    @R.function(pure=False)
    def fresh(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        s = R.memory.alloc_storage(R.shape([100]), 0, "global", "uint8")
        t = R.memory.alloc_tensor(s, 0, R.shape([4]), "float32")
        k = R.memory.kill_storage(s)
        return t

    @R.function(pure=False)
    def main(x: R.Tensor((4,), "float32")):
        cls = Calls
        a = cls.fresh(x)
        ka = R.memory.kill_tensor(a)
        b = cls.fresh(x)
        kb = R.memory.kill_tensor(b)
        c = cls.fresh(x)
        return c


def test_liveness_return_slot_keeps_the_last_result_until_the_next_return():
    # bytecode VM: after `a` is killed, its tensor is still the VM's last return
    # value while the second call allocates, so two blocks are live at once
    assert estimate_memory(Calls, lowered=True).liveness_peak_bytes == 200
    # without a return slot each result dies at its kill
    assert estimate_memory(Calls, lowered=True, return_slot=False).liveness_peak_bytes == 100
    est = estimate_memory(Calls, lowered=True)
    assert est.executed_bytes == 300
    assert {p.function for p in est.curve} == {"fresh", "main"}


@I.ir_module
class Branches:
    @R.function(pure=False)
    def main(x: R.Tensor((4,), "float32"), cond: R.Prim("bool")):
        if cond:
            s = R.memory.alloc_storage(R.shape([100]), 0, "global", "uint8")
            t = R.memory.alloc_tensor(s, 0, R.shape([4]), "float32")
            k = R.memory.kill_storage(s)
            r = t
        else:
            s2 = R.memory.alloc_storage(R.shape([300]), 0, "global", "uint8")
            t2 = R.memory.alloc_tensor(s2, 0, R.shape([4]), "float32")
            k2 = R.memory.kill_storage(s2)
            r = t2
        s3 = R.memory.alloc_storage(R.shape([50]), 0, "global", "uint8")
        return s3


def test_liveness_takes_the_worst_path_through_an_if():
    est = estimate_memory(Branches, lowered=True)
    assert est.paths == 2 and est.exhaustive
    # the false branch's 300-byte block stays held by its registers; then 50 more
    assert est.liveness_peak_bytes == 350
    assert est.curve[-1].live_bytes == 350


@I.ir_module
class Symbolic:
    @R.function(pure=False)
    def main(x: R.Tensor(("n", 2), "float32")):
        n = T.int64()
        s = R.memory.alloc_storage(R.shape([n * 8]), 0, "global", "uint8")
        t = R.memory.alloc_tensor(s, 0, R.shape([n, 2]), "float32")
        return t


def test_liveness_symbolic_size_takes_input_shapes():
    assert estimate_memory(Symbolic, {"x": (10, 2)}, lowered=True).liveness_peak_bytes == 80
    assert estimate_memory(Symbolic, [(3, 2)], lowered=True).liveness_peak_bytes == 24
    with pytest.raises(BenchkillError, match="pass input_shapes"):
        estimate_memory(Symbolic, lowered=True)
    with pytest.raises(BenchkillError, match="unknown parameter"):
        estimate_memory(Symbolic, {"y": (3, 2)}, lowered=True)
    with pytest.raises(BenchkillError, match="1 parameters"):
        estimate_memory(Symbolic, [(3, 2), (1,)], lowered=True)


@I.ir_module
class Tuples:
    @R.function(pure=False)
    def main(x: R.Tensor((4,), "float32")):
        s1 = R.memory.alloc_storage(R.shape([10]), 0, "global", "uint8")
        a = R.memory.alloc_tensor(s1, 0, R.shape([2]), "float32")
        s2 = R.memory.alloc_storage(R.shape([20]), 0, "global", "uint8")
        b = R.memory.alloc_tensor(s2, 0, R.shape([2]), "float32")
        k1 = R.memory.kill_storage(s1)
        k2 = R.memory.kill_storage(s2)
        tup = (a, b)
        k3 = R.memory.kill_tensor(a)
        k4 = R.memory.kill_tensor(b)  # both still held by the tuple: 30
        c = tup[0]
        k5 = R.vm.kill_object(tup)  # b's block freed, a's held by c: 10
        return c


def test_liveness_follows_tuples_and_their_items():
    est = estimate_memory(Tuples, lowered=True)
    assert est.liveness_peak_bytes == 30
    assert [p.live_bytes for p in est.curve][-3:] == [30, 30, 10]


def test_estimate_rejects_bad_input():
    with pytest.raises(BenchkillError, match="no function 'nope'"):
        estimate_memory(StraightLine, lowered=True, func="nope")
    with pytest.raises(BenchkillError, match="tvm.IRModule"):
        estimate_memory("not a module")
    with pytest.raises(BenchkillError, match="unknown kill variant"):
        estimate_memory(StraightLine, kill="sometimes")


# --- against TVM's estimate and the workloads' known answers ----------------------


@pytest.mark.parametrize(
    "make", [lambda: workloads.layer_chain(3, 1), lambda: workloads.if_chain(3, 1)]
)
def test_allocated_bytes_match_tvm_estimate_memory_usage(make):
    w = make()
    est = estimate_memory(w.mod, w.input_shapes, kill="tvm")
    lowered = kill_pass("tvm")(lower_to_kill_input(w.mod))
    tvm_bytes = tvm_planned_bytes(lowered)
    assert set(tvm_bytes) == set(est.allocated_bytes)
    for name, value in tvm_bytes.items():
        # TVM prints GB to four significant digits
        assert est.allocated_bytes[name] == pytest.approx(value, rel=1e-3, abs=1)
    assert est.total_bytes == 2 * MiB * (2 if w.name.startswith("if") else 1)


def test_chain_bound_known_answer():
    layers, tensor = 5, 1 * MiB
    w = workloads.layer_chain(layers, 1)
    # with kills: the previous result, the layer's intermediate and its new result
    assert estimate_memory(w.mod, kill="tvm").liveness_peak_bytes == 3 * tensor
    # without: every result, plus the last layer's intermediate
    assert estimate_memory(w.mod, kill=None).liveness_peak_bytes == (layers + 1) * tensor


def test_symbolic_chain_bound_uses_the_input_shape():
    w = workloads.layer_chain(4, 0.25, symbolic=True)
    est = estimate_memory(w.mod, w.input_shapes, kill="tvm")
    assert est.liveness_peak_bytes == 3 * MiB // 4
    assert est.dynamic_allocations == {"layer": 2}


def test_if_chain_bound_tvm_keeps_every_result_beyond_does_not():
    layers, tensor = 6, 1 * MiB
    w = workloads.if_chain(layers, 1)
    tvm_bound = estimate_memory(w.mod, w.input_shapes, kill="tvm")
    beyond = estimate_memory(w.mod, w.input_shapes, kill="beyond")
    assert tvm_bound.paths == beyond.paths == 2
    # TVM: no kills after the If; every chain result, the If result and one intermediate
    assert tvm_bound.liveness_peak_bytes == (layers + 2) * tensor
    # beyond: the chain needs three; the branch register pins the If result
    assert beyond.liveness_peak_bytes == 4 * tensor
