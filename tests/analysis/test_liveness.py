"""The static liveness bound on hand-written lowered modules, with answers worked out by
hand: kills, the return slot, If paths, symbolic sizes, tuples, the pooled model."""

# ruff: noqa: F841 - TVMScript bindings are IR, not Python variables

from __future__ import annotations

import pytest
from tvm.script import ir as I
from tvm.script import relax as R
from tvm.script import tirx as T

from benchkill.analysis.liveness import POOL_PAGE, estimate_lowered
from benchkill.errors import BenchkillError

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
    est = estimate_lowered(StraightLine)
    assert est.liveness_peak_bytes == 6000
    assert [p.live_bytes for p in est.curve] == [
        1000, 1000, 3000, 3000, 3000, 2000, 6000, 6000, 6000, 4000, 4000
    ]  # fmt: skip
    assert [p.var for p in est.curve][:3] == ["s1", "t1", "s2"]
    assert est.total_bytes == 7000 == est.executed_bytes
    assert est.paths == 1 and est.exhaustive


def test_pooled_model_reuses_only_buffers_of_the_same_page_rounded_size():
    # 1000, 2000 and 4000 bytes all round up to one 4096-byte page: s3 reuses s1's
    assert estimate_lowered(StraightLine).pooled_bytes == 2 * POOL_PAGE


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
    est = estimate_lowered(TwoSizes)
    assert est.liveness_peak_bytes == 12288  # one buffer live at a time
    assert est.pooled_bytes == 8192 + 12288  # s3 reuses s1's buffer, s2's stays pooled


def test_liveness_without_kills_holds_everything():
    assert estimate_lowered(StraightLineNoKills).liveness_peak_bytes == 7000


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
    assert estimate_lowered(Calls).liveness_peak_bytes == 200
    # without a return slot each result dies at its kill
    assert estimate_lowered(Calls, return_slot=False).liveness_peak_bytes == 100
    est = estimate_lowered(Calls)
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
    est = estimate_lowered(Branches)
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
    assert estimate_lowered(Symbolic, {"x": (10, 2)}).liveness_peak_bytes == 80
    assert estimate_lowered(Symbolic, [(3, 2)]).liveness_peak_bytes == 24
    with pytest.raises(BenchkillError, match="pass input_shapes"):
        estimate_lowered(Symbolic)
    with pytest.raises(BenchkillError, match="unknown parameter"):
        estimate_lowered(Symbolic, {"y": (3, 2)})
    with pytest.raises(BenchkillError, match="1 parameters"):
        estimate_lowered(Symbolic, [(3, 2), (1,)])


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
    est = estimate_lowered(Tuples)
    assert est.liveness_peak_bytes == 30
    assert [p.live_bytes for p in est.curve][-3:] == [30, 30, 10]


def test_estimate_lowered_rejects_bad_input():
    with pytest.raises(BenchkillError, match="no function 'nope'"):
        estimate_lowered(StraightLine, func="nope")
    with pytest.raises(BenchkillError, match="tvm.IRModule"):
        estimate_lowered("not a module")


@I.ir_module
class Builtin:
    @R.function(pure=False)
    def main(x: R.Tensor(("n",), "float32")):
        n = T.int64()
        a = R.builtin.alloc_tensor(R.shape([4, 8]), "float32", 0)
        b = R.builtin.alloc_tensor(R.shape([n]), "float16", 0)
        k = R.vm.kill_object(b)
        return a


def test_builtin_tensors_are_blocks_of_their_own():
    est = estimate_lowered(Builtin, {"x": (10,)})
    assert [p.live_bytes for p in est.curve] == [128, 128 + 20, 128]
    assert est.executed_bytes == est.liveness_peak_bytes == 148
    # the text's constant sizes: the float16[n] tensor is symbolic
    assert est.allocated_bytes == {"main": 128} and est.dynamic_allocations == {"main": 1}
