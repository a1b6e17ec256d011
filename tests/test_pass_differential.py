"""Differential tests: benchkill's pass and TVM's C++ pass give structurally equal modules."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from tvm import relax
from tvm.script import ir as I
from tvm.script import relax as R
from tvm.script import tirx as T

from benchkill.pipeline import lower_to_kill_input

@I.ir_module
class NestedIf:
    @R.function(pure=False)
    def main(x: R.Tensor([4], "float32"), c1: R.Prim("bool"), c2: R.Prim("bool")):
        s = R.memory.alloc_storage(R.shape([64]), 0, "global", "uint8")
        a = R.memory.alloc_tensor(s, 0, R.shape([4]), "float32")
        b = R.call_packed("f", x, a, ty_args=(R.Tensor([4], "float32"),))
        if c1:
            u = R.call_packed("f", b, ty_args=(R.Tensor([4], "float32"),))
            if c2:
                v = R.call_packed("f", u, a, ty_args=(R.Tensor([4], "float32"),))
                w = R.call_packed("f", v, ty_args=(R.Tensor([4], "float32"),))
                r1 = w
            else:
                r1 = u
            q = R.call_packed("f", r1, ty_args=(R.Tensor([4], "float32"),))
            r = q
        else:
            t = R.call_packed("f", x, ty_args=(R.Tensor([4], "float32"),))
            r = t
        e = R.call_packed("f", r, b, ty_args=(R.Tensor([4], "float32"),))
        return e


@I.ir_module
class TuplesAndShapes:
    @R.function(pure=False)
    def main(x: R.Tensor([4], "float32"), n: R.Prim("int64")):
        pair = R.call_packed("two", x, ty_args=(R.Tuple(R.Tensor([4], "float32"), R.Object),))
        first = pair[0]
        second = pair[1]
        lit = (first, x)
        again = lit[0]
        sh = R.shape([4])
        p = R.prim_value(T.int64(2))
        nv: R.Any = R.null_value()
        k = R.const(np.ones(4, "float32"))
        y = R.call_packed("use", again, second, sh, p, n, nv, k, ty_args=(R.Tensor([4], "float32"),))
        return y


@I.ir_module
class SymbolicMatchCast:
    @R.function(pure=False)
    def main(x: R.Tensor(["n"], "float32")):
        n = T.int64()
        y = R.call_packed("f", x, ty_args=(R.Tensor(ndim=1, dtype="float32"),))
        z = R.match_cast(y, R.Tensor([n], "float32"))
        w = R.call_packed("f", z, ty_args=(R.Tensor([n], "float32"),))
        v = R.call_packed("f", w, ty_args=(R.Tensor([n], "float32"),))
        return v


@I.ir_module
class PreexistingKills:
    @R.function(pure=False)
    def main(x: R.Tensor([4], "float32")):
        s = R.memory.alloc_storage(R.shape([64]), 0, "global", "uint8")
        a = R.memory.alloc_tensor(s, 0, R.shape([4]), "float32")
        _ = R.memory.kill_storage(s)
        b = R.call_packed("f", x, a, ty_args=(R.Tensor([4], "float32"),))
        o: R.Object = R.call_packed("obj", ty_args=(R.Object,))
        c = R.call_packed("f", b, o, ty_args=(R.Tensor([4], "float32"),))
        _ = R.vm.kill_object(o)
        return c


@I.ir_module
class SeveralFunctions:
    @T.prim_func(private=True)
    def add_one(a: T.Buffer((4,), "float32"), out: T.Buffer((4,), "float32")):
        for i in range(4):
            out[i] = a[i] + T.float32(1)

    @R.function(pure=False)
    def helper(x: R.Tensor([4], "float32")):
        cls = SeveralFunctions
        s = R.memory.alloc_storage(R.shape([16]), 0, "global", "uint8")
        a = R.memory.alloc_tensor(s, 0, R.shape([4]), "float32")
        cls.add_one(x, a)
        return a

    @R.function(pure=False)
    def main(x: R.Tensor([4], "float32")):
        cls = SeveralFunctions
        a = cls.helper(x)
        b = cls.helper(a)
        f = R.call_packed("f", b, ty_args=(R.Tensor([4], "float32"),))
        return f


@I.ir_module
class Dataflow:
    @R.function
    def main(x: R.Tensor([4], "float32")):
        with R.dataflow():
            a = R.add(x, x)
            b = R.multiply(a, a)
            c = b
            R.output(c)
        d = R.add(c, x)
        return d


MODULES = {
    "nested_if": NestedIf,
    "tuples_and_shapes": TuplesAndShapes,
    "symbolic_match_cast": SymbolicMatchCast,
    "preexisting_kills": PreexistingKills,
    "several_functions": SeveralFunctions,
    "dataflow": Dataflow,
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_same_as_tvm(name, same_as_tvm):
    same_as_tvm(MODULES[name])


def _mlp() -> tvm.IRModule:
    from tvm.relax.frontend import nn

    class MLP(nn.Module):
        def __init__(self):
            self.fc1 = nn.Linear(16, 32)
            self.fc2 = nn.Linear(32, 8)

        def forward(self, x):
            return self.fc2(nn.relu(self.fc1(x)))

    mod, _ = MLP().export_tvm(
        spec={"forward": {"x": nn.spec.Tensor(["batch", 16], "float32")}}
    )
    return mod


def test_same_as_tvm_on_default_pipeline_of_an_mlp(llvm_target, same_as_tvm):
    with llvm_target:
        lowered = lower_to_kill_input(_mlp())
    after = same_as_tvm(lowered)
    text = after.script()
    assert "R.memory.kill_tensor" in text or "R.memory.kill_storage" in text


def test_same_as_tvm_on_fully_lowered_default_pipeline(llvm_target, same_as_tvm):
    """Re-applied to the default pipeline's output (with VMShapeLower's shape heap)."""
    with llvm_target:
        lowered = relax.get_default_pipeline(llvm_target)(_mlp())
    same_as_tvm(lowered)
