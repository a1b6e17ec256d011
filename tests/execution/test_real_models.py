"""Real models measured, traced and explained in both exec modes, their outputs checked
against PyTorch's; a model TVM's build rejects is a result.  Needs torch (models extra)."""

from __future__ import annotations

import dataclasses

import pytest

from benchkill.bench.model import FAILED, OK
from benchkill.bench.suites import vm_suite
from benchkill.execution.measured_peak import explain_peak
from benchkill.execution.outputs import compare_outputs
from benchkill.execution.peak import peak_supported
from benchkill.execution.vm_measure import measure_vm
from benchkill.inputs import real_models
from tests.frameworks import require

require("torchvision")
torch = require("torch")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not peak_supported(), reason="needs Linux /proc/self/clear_refs"),
]


def _parts_add_up(parts):
    total = (
        parts.planned_bytes + parts.symbolic_bytes + parts.unplanned_bytes
        + parts.shape_heap_bytes + parts.pooled_free_bytes
    )  # fmt: skip
    assert total == parts.peak_bytes, parts


@pytest.mark.parametrize("exec_mode", ["bytecode", "compiled"])
def test_the_decoder_is_measured_traced_and_matches_pytorch(exec_mode):
    w = real_models.real_workload("decoder", "unbounded")
    r = measure_vm(w.mod, w.inputs, exec_mode=exec_mode, repeat=1, peak_repeat=2, trace=True)
    assert r.ok, r.error
    assert compare_outputs(r.outputs, w.expected, reference=w.reference) is None
    s = r.trace_summary
    assert s.attribution_error is None and s.attributed == s.program_events > 0
    assert abs(s.predicted_peak_bytes / r.peak_bytes - 1) <= 0.10, (s.predicted_peak_bytes, r.peaks)
    _parts_add_up(s.peak_parts)
    # a dynamic sequence with no bound: the planner sizes its storages by the symbol
    assert s.peak_parts.symbolic_bytes > 0


def test_explain_says_what_kills_free_on_squeezenet():
    """Unbounded batch, naive allocator: without kills the peak holds buffers long past
    their last use; with TVM's kills none, and the peak falls."""
    w = real_models.real_workload("squeezenet1_0", "unbounded")
    none = explain_peak(w.mod, w.inputs, kill=None, memory_cfg="naive", peak_repeat=1)
    tvm = explain_peak(w.mod, w.inputs, kill="tvm", memory_cfg="naive", peak_repeat=1)
    for e in (none, tvm):
        _parts_add_up(e.parts)
        assert e.parts.pooled_free_bytes == 0 and e.parts.case == "symbolic"
        assert "case: symbolic" in e.text()
    assert none.parts.dead_bytes > none.parts.peak_bytes / 2
    assert tvm.parts.dead_bytes == 0
    assert tvm.parts.peak_bytes < none.parts.peak_bytes / 1.5
    assert tvm.measured_peak_bytes < none.measured_peak_bytes


def test_static_shapes_are_planned_storage():
    w = real_models.real_workload("squeezenet1_0", "static")
    e = explain_peak(w.mod, w.inputs, kill="tvm", peak_repeat=1)
    _parts_add_up(e.parts)
    assert e.parts.case == "planned" and e.parts.symbolic_bytes == 0


def test_the_vm_suite_checks_every_variant_against_pytorch():
    w = real_models.real_workload("decoder", "bounded")
    options = {"repeat": 1, "trace": False, "one_child": True}
    records = vm_suite.measure_workload(w, "compiled", "pooled", (None, "tvm"), **options)
    assert records and all(r.status == OK for r in records), [r.error for r in records]
    # outputs that are not PyTorch's fail every variant, the reference build too
    wrong = dataclasses.replace(w, expected=(w.expected[0] + 1.0,))
    records = vm_suite.measure_workload(wrong, "compiled", "pooled", (None, "tvm"), **options)
    failed = [r for r in records if r.metric == "vm_peak_bytes"]
    assert [r.status for r in failed] == [FAILED, FAILED]
    assert "differs from PyTorch eager" in failed[0].error


class FullMask(torch.nn.Module):
    """A causal mask made with ``torch.full``, as Hugging Face GPT-2 makes it."""

    def forward(self, x):
        s = x.shape[1]
        mask = torch.full((s, s), float("-inf")).triu(1)
        return (x @ x.transpose(-1, -2) + mask).softmax(-1)


def test_a_model_tvm_cannot_build_is_a_build_failure():
    """TVM 0.27's LegalizeOps of R.full hands topi.full a PrimType for its dtype."""
    from benchkill.inputs.torch_import import export_torch

    w = export_torch(FullMask(), (torch.ones(1, 4, 8),))
    r = measure_vm(w.mod, w.inputs, repeat=0, peak_repeat=1)
    assert not r.ok and r.stage == "build"
    assert "PrimType" in r.error and "\n" not in r.error
