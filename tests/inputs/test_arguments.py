"""Arguments made from an entry function's signature: shapes, symbolic dimensions,
scalars, and the one-line errors of what cannot be made."""

# ruff: noqa: F841 - TVMScript bindings are IR, not Python variables

from __future__ import annotations

import numpy as np
import pytest
from tvm.script import ir as I
from tvm.script import relax as R
from tvm.script import tirx as T

from benchkill.errors import BenchkillError
from benchkill.inputs.arguments import module_arguments


@I.ir_module
class Mod:
    @R.function
    def main(x: R.Tensor(("n", 4), "float32"), ids: R.Tensor((3,), "int32"), cond: R.Prim("bool")):
        n = T.int64()
        return x

    @R.function
    def tuple_arg(t: R.Tuple(R.Tensor((2,), "float32"))):
        return t


def test_tensors_get_their_shapes_and_symbolic_dimensions_their_values():
    args, shapes, used = module_arguments(Mod, "main", {"n": "5", "cond": "false"})
    x, ids, cond = args
    assert x.shape == (5, 4) and x.dtype == np.float32 and np.isfinite(x).all()
    assert ids.shape == (3,) and not ids.any()
    assert cond is False
    assert shapes == {"x": (5, 4), "ids": (3,)}
    assert used == {"n": 5, "cond": False}
    again, _, _ = module_arguments(Mod, "main", {"n": 5, "cond": 0})
    np.testing.assert_array_equal(again[0], x)


def test_a_scalar_without_a_value_gets_a_default():
    args, _, used = module_arguments(Mod, "main", {"n": 2})
    assert args[2] is True and used["cond"] is True


@pytest.mark.parametrize(
    "func, values, message",
    [
        ("main", {}, "dimension 'n' of parameter 'x' is symbolic: give it a value with --set n=N"),
        ("main", {"n": 2, "m": 3}, "--set names nothing in 'main''s signature: m"),
        ("main", {"n": "two"}, "parameter 'n' is a int64, not 'two'"),
        ("main", {"n": 2, "cond": "maybe"}, "parameter 'cond' is a bool"),
        ("main", {"n": 10**9}, "would take"),
        ("tuple_arg", {}, "parameter 't' of 'tuple_arg' is not a tensor"),
        ("nope", {}, "no Relax function 'nope'"),
    ],
)
def test_what_cannot_be_made_is_one_error(func, values, message):
    with pytest.raises(BenchkillError, match=message.replace("(", r"\(").replace("*", r"\*")):
        module_arguments(Mod, func, values)
