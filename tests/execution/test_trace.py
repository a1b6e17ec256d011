"""The allocation trace on real LLVM builds in real child processes: every event
attributed, the replayed peak against the measured one in both exec modes, and the If
workload's holders named (TVM's pass) and gone (kill="beyond")."""

from __future__ import annotations

import pytest

from benchkill.execution.estimate import estimate_memory
from benchkill.execution.peak import peak_supported
from benchkill.execution.replay import replay
from benchkill.execution.trace import KINDS
from benchkill.execution.vm_measure import measure_vm
from benchkill.inputs import workloads

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not peak_supported(), reason="needs Linux /proc/self/clear_refs"),
]

MiB = 1 << 20

#: Small workloads, each with buffers large enough for VmHWM to see (about 2-20 MiB).
SMALL = {
    "chain": lambda: workloads.layer_chain(4, 2),
    "mlp": lambda: workloads.mlp(seq=1024, dim=32, hidden=256, blocks=1),
    "gpt2": lambda: workloads.make_workload("gpt2", quick=True),
    "convnet": lambda: workloads.make_workload("convnet", quick=True),
}


def _traced(w, exec_mode, kill="benchkill", peak_repeat=3):
    return measure_vm(
        w.mod, w.inputs, exec_mode=exec_mode, kill=kill, repeat=0, peak_repeat=peak_repeat,
        func=w.func, timeline=False, trace=True,
    )  # fmt: skip


def _check_events(r):
    """The trace is well formed: kinds, ids, every view in a recorded storage."""
    assert r.trace and r.trace_error is None
    seqs = [e.seq for e in r.trace]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert {e.kind for e in r.trace} <= set(KINDS)
    buffers = {e.obj: e for e in r.trace if e.kind in ("storage", "shape_heap")}
    for e in r.trace:
        if e.kind in ("storage", "tensor", "shape_heap"):
            assert e.bytes > 0 and e.function and e.var, e
        if e.kind == "tensor":
            assert e.storage in buffers and buffers[e.storage].kind == "storage"
            assert e.bytes <= buffers[e.storage].bytes
        if e.kind == "release" and e.storage == e.obj:
            assert e.obj in buffers and e.note
    assert [e.note for e in r.trace if e.kind == "mark"][-3:] == [
        "run_end", "output_released", "vm_released"
    ]  # fmt: skip


@pytest.mark.parametrize("name", sorted(SMALL))
def test_compiled_trace_is_attributed_and_replays_the_measured_peak(name):
    w = SMALL[name]()
    r = _traced(w, "compiled")
    assert r.ok, r.error
    _check_events(r)
    s = r.trace_summary
    assert s.attribution_error is None and s.attributed == s.program_events > 0
    assert abs(s.predicted_peak_bytes / r.peak_bytes - 1) <= 0.05, (s, r.peaks)
    assert s.live_peak_bytes <= s.pooled_peak_bytes
    # the live set at the trace's peak adds up to its live peak
    assert sum(h.bytes for h in s.at_peak) == s.live_peak_bytes
    # the static liveness bound saw the same buffers (shape heaps are VMShapeLower's, after it)
    est = estimate_memory(w.mod, w.input_shapes, func=w.func, return_slot=False)
    heaps = sum(h.bytes for h in s.at_peak if "shape heap" in h.reason)
    assert est.liveness_peak_bytes == s.live_peak_bytes - heaps


def test_bytecode_trace_records_the_relax_calls_and_replays_the_peak():
    r = _traced(workloads.layer_chain(4, 2), "bytecode")
    assert r.ok, r.error
    _check_events(r)
    calls = [e for e in r.trace if e.kind == "call"]
    assert [e.function for e in calls] == ["layer"] * 4
    s = r.trace_summary
    assert s.attributed == s.program_events and s.attribution_error is None
    assert abs(s.predicted_peak_bytes / r.peak_bytes - 1) <= 0.05
    # bytecode: a killed result lives on in the VM's return slot
    assert any("return slot" in e.note for e in r.trace if e.kind == "release")


@pytest.fixture(scope="module")
def if_traces():
    w = workloads.if_chain(6, 1)
    return w, {kill: _traced(w, "bytecode", kill, peak_repeat=1) for kill in ("tvm", "beyond")}


def _after_if(holders_or_waste):
    return {getattr(x, "var", None) for x in holders_or_waste if "no kill after the If" in x.reason}


def test_attribution_names_what_tvms_pass_leaves_alive_after_the_if(if_traces):
    w, runs = if_traces
    s = runs["tvm"].trace_summary
    left = _after_if(s.at_peak)
    # the If's result and every chain result but the output (the last call is running)
    # are held at the peak, all in main, each freed only when main returns
    assert len(left) == 6 and all(v.startswith("main.") for v in left), s.at_peak
    for h in s.at_peak:
        if h.var in left:
            assert h.killed_at is None and str(h.released_at) == "the return of main"
    # the static model names the same variables
    est = estimate_memory(w.mod, w.input_shapes, kill="tvm")
    assert _after_if(est.at_peak) == left


def test_waste_table_shows_beyond_removing_it(if_traces):
    _, runs = if_traces
    tvm, beyond = runs["tvm"].trace_summary, runs["beyond"].trace_summary
    wasted = {f"{w.function}.{w.var}" for w in tvm.waste if "no kill after the If" in w.reason}
    # all of them but the last call's argument, whose last use is right before the return
    assert len(wasted) == 6 - 1 and wasted < _after_if(tvm.at_peak)
    assert not {f"{w.function}.{w.var}" for w in beyond.waste} & wasted
    assert not _after_if(beyond.waste)
    # what is left is the If branch's own result, which no kill pass can kill
    assert all("the result of an If branch" in w.reason for w in beyond.waste)
    assert beyond.waste_by_function["main"] < tvm.waste_by_function["main"] / 2
    assert runs["beyond"].peak_bytes < 0.6 * runs["tvm"].peak_bytes  # 4 MiB instead of 8


def test_replay_models_pool_reuse_and_page_rounding():
    def ev(seq, kind, obj, nbytes=None):
        return {"seq": seq, "kind": kind, "obj": obj, "bytes": nbytes, "rss": 0}

    events = [
        {"seq": 0, "kind": "phase", "what": "start", "rss": 0},
        ev(1, "alloc_storage", 1, 5000),  # 2 pages pooled
        ev(2, "free_storage", 1),
        ev(3, "alloc_storage", 2, 8000),  # same rounded size: reused
        ev(4, "alloc_storage", 3, 100),  # another page
        ev(5, "free_storage", 2),
        ev(6, "free_storage", 3),
        {"seq": 7, "kind": "phase", "what": "run_end", "rss": 0},
        ev(8, "alloc_storage", 4, 10**6),  # after the run: not counted
    ]
    r = replay(events)
    assert r.live_peak == 8100 and r.live_peak_seq == 4
    assert r.pooled_peak == 3 * 4096
    assert r.naive_peak == 8192 + 4096
    assert r.allocated == 13100
    assert r.curve == ((1, 5000), (2, 0), (3, 8000), (4, 8100), (5, 100), (6, 0))
