"""The trace's walker and the liveness estimate are two executions of one VM model: on the
same module they follow every buffer alike (names, last uses, kills) and snapshot the same
holders, the walker from a recording, the estimate from the IR's sizes."""

from __future__ import annotations

from benchkill.analysis.machine import EMPTY, AbstractVM
from benchkill.execution.walker import Walker
from tests.analysis.test_liveness import StraightLine

#: What the tracer records for StraightLine's main (objects 1-3 its storages, 11-13 the
#: tensors carved from them), written from the module's text.
RECORDING = [
    {"kind": "alloc_storage", "obj": 1, "bytes": 1000},
    {"kind": "alloc_tensor", "obj": 11, "storage": 1, "shape": [4]},
    {"kind": "alloc_storage", "obj": 2, "bytes": 2000},
    {"kind": "alloc_tensor", "obj": 12, "storage": 2, "shape": [4]},
    {"kind": "kill"},
    {"kind": "kill"},
    {"kind": "alloc_storage", "obj": 3, "bytes": 4000},
    {"kind": "alloc_tensor", "obj": 13, "storage": 3, "shape": [4]},
    {"kind": "kill"},
    {"kind": "kill"},
    {"kind": "kill"},
]


def _follow(lives):
    return [
        (life.bytes, life.defined_at, life.names, life.last_used_at, life.last_kill)
        for life in lives
    ]


def test_the_walker_and_the_estimate_follow_each_buffer_alike():
    events = [{**event, "seq": seq} for seq, event in enumerate(RECORDING, 1)]
    walker = Walker(StraightLine, events, "bytecode", peak=7)  # s3: the peak
    walker.run("main")
    assert walker.pos == len(events)  # every recorded call paired
    estimate = AbstractVM(StraightLine, [], return_slot=True, snapshot_tick=None)
    fn = StraightLine["main"]
    estimate.call("main", fn, [EMPTY], [None])
    assert _follow(walker.lives) == _follow(estimate.lives)
    assert [life.names for life in walker.lives] == [
        ["main.s1", "main.t1"],
        ["main.s2", "main.t2"],
        ["main.s3", "main.t3"],
    ]
    # at s3's allocation (the estimate's tick 4: s1, s2, block 1 freed, s3) t2 and s2 hold
    # block 2 (t2 named first: bound last), s3 its own: the same holders in both
    estimate = AbstractVM(StraightLine, [], return_slot=True, snapshot_tick=4)
    estimate.call("main", fn, [EMPTY], [None])
    assert walker.held == estimate.held == {1: ["main.t2", "main.s2"], 2: ["main.s3"]}
