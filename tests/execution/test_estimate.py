"""estimate_memory: lowering with each kill variant, then the liveness bound, on the
workloads whose answers are known."""

from __future__ import annotations

import pytest

from benchkill.errors import BenchkillError
from benchkill.execution.estimate import estimate_memory
from benchkill.execution.pipeline import kill_pass, lower_to_kill_input
from benchkill.inputs import workloads

MiB = 1 << 20


def test_estimate_memory_lowers_with_the_kill_step_it_names():
    w = workloads.layer_chain(3, 1)
    est = estimate_memory(w.mod, kill="tvm")
    assert est.kill == "tvm" and est.func == "main"
    lowered = kill_pass("tvm")(lower_to_kill_input(w.mod))
    again = estimate_memory(lowered, lowered=True)
    assert again.kill is None
    assert again.liveness_peak_bytes == est.liveness_peak_bytes
    assert again.allocated_bytes == est.allocated_bytes


def test_estimate_memory_rejects_bad_input():
    w = workloads.layer_chain(2, 1)
    with pytest.raises(BenchkillError, match="no function 'nope'"):
        estimate_memory(w.mod, func="nope")
    with pytest.raises(BenchkillError, match="estimate_memory needs a tvm.IRModule"):
        estimate_memory("not a module")
    with pytest.raises(BenchkillError, match="unknown kill variant"):
        estimate_memory(w.mod, kill="sometimes")


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
