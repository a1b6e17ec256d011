"""The live set at the peak and the waste table of the static model, on hand-written
lowered modules whose answers are worked out by hand."""

# ruff: noqa: F841 - TVMScript bindings are IR, not Python variables

from __future__ import annotations

from tvm.script import ir as I
from tvm.script import relax as R
from tvm.script import tirx as T

from benchkill.analysis.holders import Holder, Site, Waste
from benchkill.analysis.liveness import estimate_lowered
from tests.analysis.test_liveness import Calls  # a killed result in the return slot


@I.ir_module
class LateKill:
    @T.prim_func
    def use(a: T.Buffer((4,), "float32")):
        T.evaluate(0)

    @R.function(pure=False)
    def main(x: R.Tensor((4,), "float32")):
        cls = LateKill
        s1 = R.memory.alloc_storage(R.shape([1000]), 0, "global", "uint8")
        t1 = R.memory.alloc_tensor(s1, 0, R.shape([4]), "float32")
        k1 = R.memory.kill_storage(s1)
        u1 = cls.use(t1)  # t1's last use
        s2 = R.memory.alloc_storage(R.shape([2000]), 0, "global", "uint8")  # 3000: the peak
        t2 = R.memory.alloc_tensor(s2, 0, R.shape([4]), "float32")
        k2 = R.memory.kill_storage(s2)
        u2 = cls.use(t2)
        u3 = cls.use(t2)  # t2's last use
        k3 = R.memory.kill_tensor(t1)  # 4 bindings late (s2, t2, u2, u3; kills not counted)
        k4 = R.memory.kill_tensor(t2)  # right after its last use: no waste
        s3 = R.memory.alloc_storage(R.shape([500]), 0, "global", "uint8")
        t3 = R.memory.alloc_tensor(s3, 0, R.shape([4]), "float32")
        k5 = R.memory.kill_storage(s3)
        return t3


def test_at_peak_lists_the_live_buffers_with_where_they_are_defined_used_and_killed():
    est = estimate_lowered(LateKill)
    assert est.liveness_peak_bytes == 3000
    big, small = est.at_peak
    assert big == Holder(
        var="main.s2",  # right after the allocation only its storage variable holds it
        bytes=2000,
        defined_at=Site("main", 5, "s2"),
        last_used_at=Site("main", 9, "u3"),
        released_at=Site("main", 11, "k4"),
        killed_at=Site("main", 11, "k4"),
        reason="killed at main binding 11 (k4)",
        held_by=("main.s2",),
    )
    assert small.var == "main.t1" and small.bytes == 1000
    assert small.last_used_at == Site("main", 4, "u1")
    assert small.killed_at == Site("main", 10, "k3")
    assert str(small.defined_at) == "main binding 1 (s1)"


def test_waste_counts_bindings_between_last_use_and_release_without_the_kills():
    est = estimate_lowered(LateKill)
    assert est.waste == (
        Waste(
            "main", "t1", 1000, 4, Site("main", 4, "u1"), Site("main", 10, "k3"),
            "killed at main binding 10 (k3)",
        ),
    )  # fmt: skip
    assert est.waste[0].byte_bindings == 4000
    assert est.waste_by_function == {"main": 4000}


@I.ir_module
class NoKills:
    @T.prim_func
    def use(a: T.Buffer((4,), "float32")):
        T.evaluate(0)

    @R.function(pure=False)
    def main(x: R.Tensor((4,), "float32")):
        cls = NoKills
        s1 = R.memory.alloc_storage(R.shape([1000]), 0, "global", "uint8")
        t1 = R.memory.alloc_tensor(s1, 0, R.shape([4]), "float32")
        u1 = cls.use(t1)
        s2 = R.memory.alloc_storage(R.shape([2000]), 0, "global", "uint8")
        t2 = R.memory.alloc_tensor(s2, 0, R.shape([4]), "float32")
        return t2


def test_without_kills_every_buffer_is_held_to_the_return_and_says_so():
    est = estimate_lowered(NoKills)
    out, t1 = est.at_peak
    assert out.reason == "never killed: the output of the run" and out.released_at is None
    assert t1.var == "main.t1" and t1.killed_at is None
    assert t1.reason == "never killed: the module has no kills"
    assert t1.released_at == Site("main", 6, "<return>")
    assert str(t1.released_at) == "the return of main"
    # used at binding 3, held through s2 and t2 (2 bindings) until main returns
    (waste,) = est.waste
    assert (waste.var, waste.bindings, waste.bytes) == ("t1", 2, 1000)


def test_a_killed_result_held_by_the_bytecode_return_slot_is_explained():
    est = estimate_lowered(Calls)  # bytecode: the slot keeps `a` alive into the next call
    assert est.liveness_peak_bytes == 200
    held = [h for h in est.at_peak if h.killed_at == Site("main", 2, "ka")]
    assert len(held) == 1
    assert held[0].reason == (
        "killed at main binding 2 (ka); the bytecode VM's return slot held it until "
        "the return of fresh"
    )
    # compiled mode has no return slot: one block at a time, each killed at once
    compiled = estimate_lowered(Calls, return_slot=False)
    assert compiled.liveness_peak_bytes == 100 and not compiled.waste


@I.ir_module
class Unused:
    @R.function(pure=False)
    def main(x: R.Tensor((4,), "float32")):
        s1 = R.memory.alloc_storage(R.shape([100]), 0, "global", "uint8")
        t1 = R.memory.alloc_tensor(s1, 0, R.shape([4]), "float32")
        k1 = R.memory.kill_storage(s1)
        tup = (t1,)  # never used: no kill pass kills it
        k2 = R.memory.kill_tensor(t1)
        s2 = R.memory.alloc_storage(R.shape([300]), 0, "global", "uint8")
        return s2


def test_a_never_used_variable_that_holds_a_buffer_is_named():
    est = estimate_lowered(Unused)
    assert est.liveness_peak_bytes == 400
    (held,) = [h for h in est.at_peak if h.bytes == 100]
    assert held.var == "main.tup" and held.held_by == ("main.tup",)
    assert held.reason == (
        "never killed (main.tup): never used: the kill pass kills a variable only after "
        "its last use; freed at the return of main"
    )
