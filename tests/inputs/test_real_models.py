"""The real-model registry: PyTorch models with random weights in three shape modes, in the
one workload registry, and the kill step's input of each (for the ``real`` pass family).
Needs torch and torchvision (the models extra)."""

from __future__ import annotations

import pytest

from benchkill.errors import BenchkillError
from benchkill.inputs import real_models, workloads
from benchkill.relax import ops
from tests.frameworks import require

require("torch", "torchvision")

pytestmark = pytest.mark.slow


def _symbols(mod):
    import tvm

    shape = mod["main"].params[0].ty.shape.values
    return [d for d in shape if not isinstance(d, tvm.tirx.IntImm)]


def _roles(mod):
    from tvm import relax

    found = []

    def visit(expr):
        if isinstance(expr, relax.Call) and ops.op_name(expr) in ops.ROLES:
            found.append(ops.ROLES[ops.op_name(expr)])

    for _, fn in mod.functions_items():
        if isinstance(fn, relax.Function):
            relax.analysis.post_order_visit(fn, visit)
    return found


def test_the_registry_lists_every_real_model():
    assert workloads.REAL_MODELS == tuple(real_models.MODELS)
    for name in workloads.REAL_MODELS:
        factory = workloads.WORKLOADS[name]
        assert factory.available() and factory.parameters(True)["sizes"] == "quick"


@pytest.mark.parametrize("shape", real_models.SHAPES)
def test_the_decoder_in_each_shape_mode(shape):
    w = real_models.real_workload("decoder", shape)
    assert w is workloads.make_workload("decoder", {"shape": shape}, quick=True)  # cached
    bound = real_models.sizes("decoder")["bound"]
    symbols = _symbols(w.mod)
    attrs = w.mod["main"].attrs or {}
    if shape == "static":
        assert symbols == [] and "tir_var_upper_bound" not in attrs
    else:
        assert len(symbols) == 1
        bounds = dict(attrs["tir_var_upper_bound"]) if "tir_var_upper_bound" in attrs else {}
        assert bounds == ({symbols[0].name: bound} if shape == "bounded" else {})
    assert w.inputs[0].shape == (1, real_models.sizes("decoder")["seq"])
    assert w.expected[0].shape == (1, real_models.sizes("decoder")["seq"], real_models.VOCAB)


@pytest.mark.parametrize("name", real_models.MODELS)
def test_each_model_s_kill_input_is_lowered_and_has_no_kills(name):
    lowered = real_models.kill_input(name, "unbounded")
    assert lowered is real_models.kill_input(name, "unbounded")
    roles = _roles(lowered)
    assert ops.STORAGE in roles and ops.TENSOR in roles and ops.KILL not in roles
    assert _symbols(real_models.real_workload(name, "unbounded").mod)


def test_clear_cache_builds_anew():
    first = real_models.real_workload("decoder", "static")
    real_models.clear_cache()
    assert real_models.real_workload("decoder", "static") is not first


def test_unknown_names_and_modes():
    with pytest.raises(BenchkillError, match="unknown real model 'vgg'"):
        real_models.real_workload("vgg")
    with pytest.raises(BenchkillError, match="unknown shape mode 'ragged'"):
        real_models.real_workload("decoder", "ragged")
    with pytest.raises(BenchkillError, match="sizes must be"):
        workloads.real_model("decoder", sizes="huge")
