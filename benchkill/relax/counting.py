"""The size of a Relax module in bindings, the unit every benchmark's size is given in."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tvm import relax

if TYPE_CHECKING:
    import tvm


def count_bindings(mod: tvm.IRModule) -> int:
    """Number of Relax bindings in all Relax functions of ``mod``, nested scopes included."""
    total = 0
    stack: list = [f for _, f in mod.functions_items() if isinstance(f, relax.Function)]
    while stack:
        expr = stack.pop()
        if isinstance(expr, relax.Function):
            stack.append(expr.body)
        elif isinstance(expr, relax.SeqExpr):
            for block in expr.blocks:
                bindings = block.bindings
                total += len(bindings)
                for binding in bindings:
                    value = binding.value
                    if isinstance(value, (relax.If, relax.SeqExpr, relax.Function)):
                        stack.append(value)
        elif isinstance(expr, relax.If):
            stack.append(expr.true_branch)
            stack.append(expr.false_branch)
    return total
