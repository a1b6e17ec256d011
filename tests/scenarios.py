# ruff: noqa: F841  (TVMScript bodies: every binding is part of the program)
"""Scenarios several test modules look at from their own side, each written once here.

- :data:`IF_PROGRAM`: a high-level If/else program; :func:`lowered_if` is TVM's default
  pipeline's lowering of it up to the kill step (kills TVM's pass drops after an If).
- :data:`PLANNER_BUG`: a program TVM 0.27's StaticPlanBlockMemory lowers to IR that reuses
  a storage bound in an If branch after the If (the VM then reads an unwritten register).
- The ``R.null_value()`` scenario of TVM PR #20267 is ``cases.NullValueBefore`` in
  ``tests/passes/cases.py``.
"""

from __future__ import annotations

from functools import cache

import tvm
from tvm.script import ir as I
from tvm.script import relax as R

from benchkill.execution.pipeline import lower_to_kill_input


@I.ir_module
class IF_PROGRAM:  # noqa: N801  (a module, named like a constant)
    @R.function
    def main(x: R.Tensor((4,), "float32"), c: R.Tensor((), "bool")):
        y = R.add(x, x)
        if c:
            out = R.multiply(y, y)
        else:
            out = R.add(y, x)
        r = R.add(out, x)
        return r


@cache
def lowered_if() -> tvm.IRModule:
    """:data:`IF_PROGRAM` lowered by TVM's default pipeline up to its kill step."""
    return lower_to_kill_input(IF_PROGRAM)


@I.ir_module
class PLANNER_BUG:  # noqa: N801
    @R.function
    def main(x: R.Tensor((4,), "float32"), flag: R.Tensor((), "bool")) -> R.Tensor((4,), "float32"):
        if flag:
            v1 = R.add(x, x)
            v0 = v1
        else:
            v2 = R.add(x, x)
            v3 = R.add(x, x)
            v0 = v3
        v4 = R.add(x, x)
        v5 = R.add(x, x)
        return v5
