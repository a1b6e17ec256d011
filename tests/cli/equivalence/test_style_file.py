"""A file shaped like TVM's own Relax tests (written for benchkill's tests): modules at
module level, in a class, inside parametrized test functions, a free function, one that
does not build, one TVM's pass rejects, and an R.rewriter class (not a module)."""

import pytest
import tvm
import tvm.testing
from tvm import relax
from tvm.script import ir as I
from tvm.script import relax as R
from tvm.script import tirx as T

width = tvm.testing.parameter(4, 8)


@R.function
def free(x: R.Tensor((4,), "float32")):
    with R.dataflow():
        y = R.add(x, x)
        z = y
        w = R.multiply(z, z)
        R.output(w)
    return w


class TestInAClass:
    @I.ir_module
    class Before:
        @R.function
        def main(c: R.Tensor((), "bool"), x: R.Tensor((4,), "float32")):
            if c:
                a = R.add(x, x)
                y = a
            else:
                y = R.call_pure_packed("g", x, ty_args=(R.Tensor((8,), "float32"),))
            return y


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_inside_a_function(dtype, width):
    shape = (width,)

    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor(shape, dtype)) -> R.Tensor(shape, "int8"):
            m = R.match_cast(x, R.Tensor(shape, dtype))
            a: R.Tensor(ndim=1) = R.add(m, m)
            return a

    assert Module is not None


def test_does_not_build():
    @I.ir_module
    class Broken:
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            y = R.add(x, undefined_name)  # noqa: F821
            return y


def test_rejected_by_tvm():
    @I.ir_module(check_well_formed=False)
    class Rejected:
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            cls = Rejected
            y = R.call_tir_inplace(
                cls.inc, (x,), inplace_indices=[3], out_ty=R.Tensor((4,), "float32")
            )
            return y

        @T.prim_func
        def inc(A: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.sblock("b"):
                    vi = T.axis.spatial(4, i)
                    A[vi] = A[vi] + T.float32(1)


@R.rewriter
class Rewrite:
    @R.function
    def pattern(a: R.Tensor):
        b = R.add(a, a)
        return b

    @R.function
    def replacement(a: R.Tensor):
        b = R.multiply(a, R.const(2.0))
        return b


if __name__ == "__main__":
    relax.this_is_not_run()
