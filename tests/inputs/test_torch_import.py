"""PyTorch models in: torch.export with dynamic dimensions by name, TVM's frontend, the
eager outputs as the reference; every failure one line.  Needs torch (the models extra)."""

from __future__ import annotations

import textwrap
import uuid

import numpy as np
import pytest

from benchkill.errors import BenchkillError
from benchkill.inputs.torch_import import export_torch, from_torch
from tests.frameworks import require

torch = require("torch")


class TwoInputs(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x, y):
        return torch.relu(self.fc(x)) + y, x.sum(dim=1)


def _inputs(batch=3):
    g = torch.Generator().manual_seed(0)
    return torch.randn(batch, 8, generator=g), torch.randn(batch, 8, generator=g)


def _symbols(mod):
    import tvm

    ty = mod["main"].params[0].ty
    return [d for d in ty.shape.values if not isinstance(d, tvm.tirx.IntImm)]


def test_static_export_gives_the_eager_outputs_as_reference():
    x, y = _inputs()
    w = export_torch(TwoInputs(), (x, y))
    assert _symbols(w.mod) == [] and [a.shape for a in w.inputs] == [(3, 8), (3, 8)]
    want = TwoInputs()(x, y)
    np.testing.assert_allclose(w.expected[0], want[0].detach().numpy())
    np.testing.assert_allclose(w.expected[1], want[1].detach().numpy())
    assert w.reference == "PyTorch eager"


def test_one_named_dimension_shared_by_two_inputs_with_a_bound():
    w = export_torch(TwoInputs(), _inputs(), dynamic="x:0=batch<=16 y:0=batch<=16")
    (symbol,) = _symbols(w.mod)
    attrs = w.mod["main"].attrs
    assert dict(attrs["tir_var_upper_bound"]) == {symbol.name: 16}
    unbounded = export_torch(TwoInputs(), _inputs(), dynamic=["x:0=batch", "y:0=batch"])
    assert len(_symbols(unbounded.mod)) == 1
    assert "tir_var_upper_bound" not in (unbounded.mod["main"].attrs or {})


def test_weights_as_inputs():
    w = export_torch(TwoInputs(), _inputs(), params="inputs")
    assert len(w.inputs) == 4  # x, y, then the Linear's weight and bias
    assert w.inputs[2].shape == (8, 8) and w.inputs[3].shape == (8,)


class DataDependent(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x + 1
        return x - 1


class Determinant(torch.nn.Module):
    """An operator TVM 0.27's PyTorch frontend has no converter for."""

    def forward(self, x):
        return torch.linalg.det(x)


@pytest.mark.parametrize(
    ("module", "inputs", "dynamic", "message"),
    [
        (TwoInputs(), _inputs(), "z:0", "no input 'z' \\(inputs: x, y\\)"),
        (TwoInputs(), _inputs(), "x:2", "input 'x' has 2 axes"),
        (TwoInputs(), _inputs(), "x:0<=2", "example size 3 is above the bound"),
        (TwoInputs(), _inputs(), "x:0", "torch.export failed"),  # x and y must be one dim
        (DataDependent(), (torch.ones(2),), None, "torch.export failed"),
        (Determinant(), (torch.ones(3, 3),), None, "frontend rejected the model.*_linalg_det"),
        (TwoInputs(), [[1.0]], None, "must be a tensor or a tuple of tensors"),
        ("not a module", (torch.ones(2),), None, "not a torch.nn.Module"),
    ],
)
def test_failures_are_one_line(module, inputs, dynamic, message):
    with pytest.raises(BenchkillError, match=message) as info:
        export_torch(module, inputs, dynamic=dynamic)
    assert "\n" not in str(info.value)


def test_the_entry_point_protocol(tmp_path, monkeypatch):
    name = f"user_torch_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(
        textwrap.dedent("""
        import torch

        def model():
            torch.manual_seed(0)
            return torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU()), torch.ones(2, 4)

        def wrong():
            return torch.ones(2)
    """)
    )
    monkeypatch.chdir(tmp_path)
    w = from_torch(f"{name}:model", dynamic="input:0")
    assert len(_symbols(w.mod)) == 1 and w.inputs[0].shape == (2, 4)
    with pytest.raises(BenchkillError, match="expected \\(torch.nn.Module, example inputs\\)"):
        from_torch(f"{name}:wrong")
