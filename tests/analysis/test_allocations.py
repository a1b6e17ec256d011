"""Bytes allocated in the text of lowered modules, against TVM's own estimate."""

from __future__ import annotations

import pytest

from benchkill.analysis.allocations import static_allocations, tvm_planned_bytes
from benchkill.execution.pipeline import kill_pass, lower_to_kill_input
from benchkill.inputs import workloads

MiB = 1 << 20


@pytest.mark.parametrize(
    "make, tensors",
    [(lambda: workloads.layer_chain(3, 1), 2), (lambda: workloads.if_chain(3, 1), 4)],
)
def test_allocated_bytes_match_tvm_estimate_memory_usage(make, tensors):
    lowered = kill_pass("tvm")(lower_to_kill_input(make().mod))
    allocated, dynamic = static_allocations(lowered)
    tvm_bytes = tvm_planned_bytes(lowered)
    assert set(tvm_bytes) == set(allocated)
    for name, value in tvm_bytes.items():
        # TVM prints GB to four significant digits
        assert allocated[name] == pytest.approx(value, rel=1e-3, abs=1)
    assert sum(allocated.values()) == tensors * MiB
    assert dynamic == {}
