"""A test file that pytest would skip whole (a module-level importorskip of a module that
does not exist), written for benchkill's tests: its modules are built all the same."""

import pytest
from tvm.script import ir as I
from tvm.script import relax as R

pytest.importorskip("benchkill_tests_no_such_module")


@I.ir_module
class AtModuleLevel:
    @R.function(pure=False)
    def main(x: R.Tensor((4,), "float32")):
        a = R.call_packed("f", x, ty_args=(R.Tensor((4,), "float32"),))
        b = a
        c = R.call_packed("g", b, ty_args=(R.Tensor((4,), "float32"),))
        return c


def test_inside_a_function():
    @I.ir_module
    class Inside:
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            y = R.add(x, x)
            z = R.multiply(y, y)
            return z

    assert Inside is not None
