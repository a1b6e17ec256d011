"""The VM workloads: structure, inputs, determinism, argument checks, the registry, and
that each survives a TVMScript round trip (for the commands that read module files)."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from tvm import relax

from benchkill.errors import BenchkillError
from benchkill.inputs import workloads
from benchkill.relax.text import module_text
from tests.frameworks import skip_without

MiB = 1 << 20


def _calls(fn, name):
    found = []
    relax.analysis.post_order_visit(
        fn,
        lambda e: (
            found.append(e)
            if isinstance(e, relax.Call) and getattr(e.op, "name_hint", None) == name
            else None
        ),
    )
    return found


def test_layer_chain_calls_the_layer_n_times_on_fresh_tensors():
    w = workloads.layer_chain(5, 0.5)
    assert w.name == "chain-5x0.5MiB" and w.func == "main" and not w.rekill
    assert len(_calls(w.mod["main"], "layer")) == 5
    (x,) = w.inputs
    assert x.dtype == np.float32 and x.nbytes == MiB // 2
    assert w.input_shapes == {"x": (MiB // 8,)}
    assert w.mod["layer"].ret_ty.shape.values[0].value == MiB // 8


def test_symbolic_chain_has_a_symbolic_length():
    w = workloads.layer_chain(3, 0.25, symbolic=True)
    (dim,) = w.mod["main"].params[0].ty.shape.values
    assert isinstance(dim, tvm.tirx.Var) and dim.name == "n"
    assert w.name.startswith("symbolic_chain-")


def test_if_chain_starts_with_an_if_on_a_bool_input():
    w = workloads.if_chain(4, 0.25, cond=False)
    main = w.mod["main"]
    first = main.body.blocks[0].bindings[0].value
    assert isinstance(first, relax.If)
    assert len(_calls(main, "layer")) == 5 and len(_calls(main, "other")) == 1
    assert w.inputs[1] is False
    assert main.params[1].ty.dtype == "bool"


def test_mlp_is_an_nn_module_with_symbolic_sequence_and_random_weights():
    w = workloads.mlp(seq=16, dim=8, hidden=32, blocks=2)
    fn = w.mod["forward"]
    assert w.func == "forward"
    assert len(w.inputs) == len(fn.params)
    seq = fn.params[0].ty.shape.values[0]
    assert isinstance(seq, tvm.tirx.Var)
    assert w.inputs[0].shape == (16, 8)
    for value, param in zip(w.inputs, fn.params, strict=True):
        assert value.shape[1:] == tuple(int(d) for d in param.ty.shape.values[1:])
    # deterministic: the same call gives the same inputs
    again = workloads.mlp(seq=16, dim=8, hidden=32, blocks=2)
    for a, b in zip(w.inputs, again.inputs, strict=True):
        np.testing.assert_array_equal(a, b)


def test_gpt2_is_a_decoder_with_a_symbolic_sequence_and_tied_head():
    w = workloads.gpt2(layers=2, hidden=64, heads=4, vocab=512, seq=8)
    fn = w.mod["forward"]
    assert w.func == "forward" and w.name == "gpt2-2x64-v512-seq8"
    ids, pos, *weights = w.inputs
    assert ids.shape == pos.shape == (1, 8) and ids.dtype == np.int32
    assert ids.max() < 512 and list(pos[0]) == list(range(8))
    seq = fn.params[0].ty.shape.values[1]
    assert isinstance(seq, tvm.tirx.Var) and seq.name == "seq"
    assert w.input_shapes == {"input_ids": (1, 8), "position_ids": (1, 8)}
    assert len(w.inputs) == len(fn.params)
    # embeddings, 2 x (2 LayerNorms, 4 Linears), final LayerNorm; the head is tied
    assert weights[0].shape == (512, 64) and weights[1].shape == (1024, 64)
    assert len(weights) == 2 + 2 * 12 + 2
    text = w.mod.script()
    assert "R.nn.attention" in text and "R.permute_dims(wte_weight" in text
    again = workloads.gpt2(layers=2, hidden=64, heads=4, vocab=512, seq=8)
    for a, b in zip(w.inputs, again.inputs, strict=True):
        np.testing.assert_array_equal(a, b)


def test_convnet_shrinks_its_activations_stage_by_stage():
    w = workloads.convnet(batch=2, size=16, channels=4, stages=2)
    fn = w.mod["forward"]
    (images, *weights) = w.inputs
    assert images.shape == (2, 3, 16, 16) and w.input_shapes == {"x": (2, 3, 16, 16)}
    batch = fn.params[0].ty.shape.values[0]
    assert isinstance(batch, tvm.tirx.Var)
    # channels double at each stride-2 convolution: 4 (stem), 8, 16
    assert {wt.shape[0] for wt in weights if wt.ndim == 4} == {4, 8, 16}
    assert fn.ret_ty.shape.values[1].value == 10
    assert "R.nn.conv2d" in w.mod.script() and len(weights) == 2 + 2 * 6 + 2


def test_upstream_rekill_is_the_issue_module():
    w = workloads.upstream_rekill()
    assert w.rekill and w.inputs[0].shape == (1, 4)
    assert w.mod["main"].attrs["num_input"] == 1


@pytest.mark.parametrize(
    "make",
    [
        lambda: workloads.layer_chain(2, 0.25),
        lambda: workloads.layer_chain(2, 0.25, symbolic=True),
        lambda: workloads.if_chain(2, 0.25),
        lambda: workloads.mlp(seq=8, dim=4, hidden=8, blocks=1),
        lambda: workloads.gpt2(layers=1, hidden=32, heads=2, vocab=64, seq=4),
        lambda: workloads.convnet(batch=1, size=8, channels=2, stages=1),
        workloads.upstream_rekill,
    ],
)
def test_workload_survives_the_tvmscript_round_trip(make):
    w = make()
    back = tvm.script.from_source(module_text(w.mod))
    tvm.ir.assert_structural_equal(w.mod, back, map_free_vars=True)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: workloads.layer_chain(0, 1), "layers"),
        (lambda: workloads.layer_chain(True, 1), "layers"),
        (lambda: workloads.layer_chain(3, -1), "MiB"),
        (lambda: workloads.layer_chain(3, 1e-9), "no float32 element"),
        (lambda: workloads.if_chain(2, "big"), "MiB"),
        (lambda: workloads.mlp(seq=0), "seq"),
        (lambda: workloads.gpt2(hidden=100, heads=12), "multiple of heads"),
        (lambda: workloads.gpt2(seq=2000), "seq must be at most 1,024"),
        (lambda: workloads.convnet(size=20, stages=3), "multiple of 2\\*\\*stages"),
        (lambda: workloads.convnet(batch=0), "batch"),
    ],
)
def test_bad_sizes_are_rejected(call, message):
    with pytest.raises(BenchkillError, match=message):
        call()


@pytest.mark.parametrize("name", sorted(workloads.WORKLOADS))
def test_every_registered_workload_builds_with_its_quick_parameters(name):
    factory = workloads.WORKLOADS[name]
    skip_without(*factory.needs)
    w = workloads.make_workload(name, quick=True)
    assert w.name.startswith(name)
    assert set(factory.quick) == set(factory.params)
    if factory.quick != factory.params:
        assert w.name != workloads.make_workload(name, factory.params).name


def test_make_workload_takes_the_builders_parameters_and_ignores_the_rest():
    w = workloads.make_workload("chain", {"layers": 3, "exec_mode": "bytecode"}, quick=True)
    assert w.name == f"chain-3x{workloads.WORKLOADS['chain'].quick['mib']}MiB"
    params = workloads.WORKLOADS["chain"].parameters()
    params["layers"] = 1  # a copy: the registry keeps its defaults
    assert workloads.WORKLOADS["chain"].params["layers"] != 1


@pytest.mark.parametrize("name", ["nope", None, 3])
def test_make_workload_rejects_unknown_names(name):
    with pytest.raises(BenchkillError, match="unknown vm workload .* expected one of chain"):
        workloads.make_workload(name)
