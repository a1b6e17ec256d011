"""The naive Python port gives exactly TVM's KillAfterLastUse output.

Hand-written Before/Expected modules pin the behaviour (including the R.null_value()
exclusion and the kills TVM drops after an If); differential tests run both passes on
every generated family.
"""

from __future__ import annotations

import pytest
import tvm
from tvm import relax
from tvm.script import ir as I
from tvm.script import relax as R

from benchkill.inputs.families import FAMILIES, generate
from benchkill.passes.naive import NaiveKillAfterLastUse


def _tvm(mod: tvm.IRModule) -> tvm.IRModule:
    return relax.transform.KillAfterLastUse()(mod)


def _check(before: tvm.IRModule, expected: tvm.IRModule | None = None) -> tvm.IRModule:
    """The naive output equals TVM's, and ``expected`` when given."""
    after = NaiveKillAfterLastUse()(before)
    tvm.ir.assert_structural_equal(after, _tvm(before), map_free_vars=True)
    if expected is not None:
        tvm.ir.assert_structural_equal(after, expected)
    return after


def test_storage_and_tensor_killed_after_last_use():
    @I.ir_module
    class Before:
        @R.function(pure=False)
        def main(x: R.Tensor([16, 32], "float32")):
            storage = R.memory.alloc_storage(R.shape([2048]), 0, "global", "uint8")
            y = R.memory.alloc_tensor(storage, 0, R.shape([16, 32]), "float32")
            _dummy = R.call_packed("add_tensors", [x, y], ty_args=(R.Tuple,))
            z = R.add(x, y)
            return z

    @I.ir_module
    class Expected:
        @R.function(pure=False)
        def main(x: R.Tensor([16, 32], "float32")):
            storage = R.memory.alloc_storage(R.shape([2048]), 0, "global", "uint8")
            y = R.memory.alloc_tensor(storage, 0, R.shape([16, 32]), "float32")
            _ = R.memory.kill_storage(storage)
            _dummy = R.call_packed("add_tensors", [x, y], ty_args=(R.Tuple,))
            z = R.add(x, y)
            _ = R.memory.kill_tensor(y)
            return z

    _check(Before, Expected)


def test_usage_tracked_across_trivial_rebinding_and_match_cast():
    @I.ir_module
    class Before:
        @R.function(pure=False)
        def main(w: R.Tensor([16, 32], "float32")):
            x = R.add(w, R.const(1, "float32"))
            y = x
            m = R.match_cast(y, R.Tensor([16, 32]))
            z = R.add(m, R.const(1, "float32"))
            return z

    @I.ir_module
    class Expected:
        @R.function(pure=False)
        def main(w: R.Tensor([16, 32], "float32")):
            x = R.add(w, R.const(1, "float32"))
            m = R.match_cast(x, R.Tensor([16, 32]))
            _ = R.memory.kill_tensor(x)
            z = R.add(m, R.const(1, "float32"))
            _ = R.memory.kill_tensor(m)
            return z

    _check(Before, Expected)


@I.ir_module
class NullValueHeap:
    @R.function(pure=False)
    def main(x: R.Tensor([16, 32], "float32")):
        storage = R.memory.alloc_storage(R.shape([2048]), 0, "global", "uint8")
        y = R.memory.alloc_tensor(storage, 0, R.shape([16, 32]), "float32")
        shape_heap: R.Any = R.null_value()
        _dummy = R.call_packed("use_shape_heap", shape_heap, ty_args=(R.Tuple,))
        z = R.add(x, y)
        return z


def test_null_value_is_never_killed():
    @I.ir_module
    class Expected:
        @R.function(pure=False)
        def main(x: R.Tensor([16, 32], "float32")):
            storage = R.memory.alloc_storage(R.shape([2048]), 0, "global", "uint8")
            y = R.memory.alloc_tensor(storage, 0, R.shape([16, 32]), "float32")
            _ = R.memory.kill_storage(storage)
            shape_heap: R.Any = R.null_value()
            _dummy = R.call_packed("use_shape_heap", shape_heap, ty_args=(R.Tuple,))
            z = R.add(x, y)
            _ = R.memory.kill_tensor(y)
            return z

    _check(NullValueHeap, Expected)


def test_legacy_mode_kills_null_value_like_tvm_before_the_fix():
    @I.ir_module
    class Expected:
        @R.function(pure=False)
        def main(x: R.Tensor([16, 32], "float32")):
            storage = R.memory.alloc_storage(R.shape([2048]), 0, "global", "uint8")
            y = R.memory.alloc_tensor(storage, 0, R.shape([16, 32]), "float32")
            _ = R.memory.kill_storage(storage)
            shape_heap: R.Any = R.null_value()
            _dummy = R.call_packed("use_shape_heap", shape_heap, ty_args=(R.Tuple,))
            _ = R.vm.kill_object(shape_heap)
            z = R.add(x, y)
            _ = R.memory.kill_tensor(y)
            return z

    after = NaiveKillAfterLastUse(exclude_null_value=False)(NullValueHeap)
    tvm.ir.assert_structural_equal(after, Expected)


def test_existing_kills_are_not_duplicated_and_objects_use_kill_object():
    @I.ir_module
    class Before:
        @R.function(pure=False)
        def main(x: R.Tensor([4], "float32")):
            a = R.call_packed("make", x, ty_args=(R.Tensor([4], "float32"),))
            t = R.call_packed(
                "pair", x, ty_args=(R.Tuple(R.Tensor([4], "float32"), R.Tensor([4], "float32")),)
            )
            s = R.str("label")
            _u = R.call_packed("use", a, t, s, ty_args=(R.Tuple,))
            _k = R.memory.kill_tensor(a)
            return x

    @I.ir_module
    class Expected:
        @R.function(pure=False)
        def main(x: R.Tensor([4], "float32")):
            a = R.call_packed("make", x, ty_args=(R.Tensor([4], "float32"),))
            t = R.call_packed(
                "pair", x, ty_args=(R.Tuple(R.Tensor([4], "float32"), R.Tensor([4], "float32")),)
            )
            s = R.str("label")
            _u = R.call_packed("use", a, t, s, ty_args=(R.Tuple,))
            _ = R.vm.kill_object(t)
            _ = R.vm.kill_object(s)
            _k = R.memory.kill_tensor(a)
            return x

    _check(Before, Expected)


def test_kills_inside_if_branches_and_none_after_the_if():
    @I.ir_module
    class Before:
        @R.function(pure=False)
        def main(x: R.Tensor([4], "float32"), c: R.Prim("bool")):
            a = R.call_packed("f", x, ty_args=(R.Tensor([4], "float32"),))
            if c:
                b = R.call_packed("f", a, ty_args=(R.Tensor([4], "float32"),))
                r = R.call_packed("f", b, ty_args=(R.Tensor([4], "float32"),))
            else:
                r = R.call_packed("f", a, ty_args=(R.Tensor([4], "float32"),))
            d = R.call_packed("f", r, ty_args=(R.Tensor([4], "float32"),))
            e = R.call_packed("f", d, ty_args=(R.Tensor([4], "float32"),))
            return e

    @I.ir_module
    class Expected:
        @R.function(pure=False)
        def main(x: R.Tensor([4], "float32"), c: R.Prim("bool")):
            a = R.call_packed("f", x, ty_args=(R.Tensor([4], "float32"),))
            if c:
                b = R.call_packed("f", a, ty_args=(R.Tensor([4], "float32"),))
                r_then = R.call_packed("f", b, ty_args=(R.Tensor([4], "float32"),))
                _ = R.memory.kill_tensor(b)
                # a dies here too, but it belongs to the enclosing scope
                r = r_then
            else:
                r = R.call_packed("f", a, ty_args=(R.Tensor([4], "float32"),))
            # TVM's pass emits no kill after the If, in the enclosing scope (for a, r, d)
            d = R.call_packed("f", r, ty_args=(R.Tensor([4], "float32"),))
            e = R.call_packed("f", d, ty_args=(R.Tensor([4], "float32"),))
            return e

    _check(Before, Expected)


def test_dataflow_blocks_nested_functions_and_several_functions():
    @I.ir_module
    class Before:
        @R.function
        def helper(x: R.Tensor([4], "float32")) -> R.Tensor([4], "float32"):
            with R.dataflow():
                y = R.add(x, x)
                z = R.multiply(y, y)
                R.output(z)
            return z

        @R.function
        def main(x: R.Tensor([4], "float32")) -> R.Tensor([4], "float32"):
            @R.function
            def inner(a: R.Tensor([4], "float32")) -> R.Tensor([4], "float32"):
                b = R.add(a, a)
                c = R.add(b, b)
                return c

            y = inner(x)
            w = R.add(y, y)
            return w

    _check(Before)


def test_input_module_is_left_unchanged():
    mod = generate("mixed", 20, seed=3)
    copy = tvm.script.from_source(mod.script())
    NaiveKillAfterLastUse()(mod)
    tvm.ir.assert_structural_equal(mod, copy, map_free_vars=True)


def test_canonicalization_runs_whatever_the_pass_context():
    mod = generate("mixed", 60, seed=1)
    with tvm.transform.PassContext(opt_level=0, disabled_pass=["CanonicalizeBindings"]):
        _check(mod)


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("seed", [0, 5])
def test_equals_tvm_on_generated_family(family, seed):
    after = _check(generate(family, 40, seed))
    assert "kill" in after.script()
