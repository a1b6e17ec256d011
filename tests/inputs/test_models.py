"""The ``model`` family: real decoders lowered by TVM's default pipeline up to the kill step."""

from __future__ import annotations

import pytest
import tvm_ffi
from tvm import relax

from benchkill.errors import BenchkillError
from benchkill.inputs import models
from benchkill.inputs.families import generate, ops_for_bindings, size_model
from benchkill.passes.last_use import sweep_function
from benchkill.relax.counting import count_bindings


def test_size_is_linear_in_layers_and_inverted_by_ops_for_bindings():
    fixed, per_layer = size_model("model")
    for layers in (1, 3, 4):
        assert count_bindings(generate("model", layers)) == fixed + per_layer * layers
    layers = ops_for_bindings("model", 300)
    assert abs(count_bindings(generate("model", layers)) - 300) <= per_layer / 2


def test_kill_input_of_a_decoder_is_made_anew_and_needs_canonicalization():
    mod = generate("model", 2)
    again = generate("model", 2, seed=7)  # the weights are parameters: the seed changes nothing
    # a new module each time, the same IR: no decoder outlives its caller's use
    assert again is not mod
    assert tvm_ffi.structural_equal(again, mod, map_free_vars=True)
    main = mod["main"]
    assert str(main.params[0].ty.shape[1]) == "n"  # symbolic sequence length
    text = main.script()
    assert "R.memory.alloc_storage" in text and "kill" not in text
    # CallTIRRewrite's ``lv = alloc`` rebindings and split's tuple items
    trivial = [
        b for block in main.body.blocks for b in block.bindings if isinstance(b.value, relax.Var)
    ]
    assert len(trivial) >= 10
    assert sweep_function(main).canonicalized  # in Python, no NeedsTVMCanonicalization


def test_hidden_width_follows_the_nearest_configuration():
    assert models.hidden_for(12) == 768 and models.hidden_for(48) == 1600
    assert models.hidden_for(11) == 768 and models.hidden_for(100) == 1600
    with pytest.raises(BenchkillError):
        generate("model", 0)
    with pytest.raises(BenchkillError):
        models.decoder(1, 100)
