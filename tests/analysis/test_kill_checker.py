"""The kill checker as a client of the symbolic VM: every path through the Ifs, joined."""

from __future__ import annotations

import sys

import tvm
from tvm import relax

from benchkill.analysis.kill_checker import KillChecker
from benchkill.analysis.vm_model import SymbolicVM

from .test_verifier import found, module
from .test_vm_model import SHARED

KILLED_IN = {
    "then": ("R.memory.kill_tensor(a)", "u = x"),
    "else": ("u = x", "R.memory.kill_tensor(a)"),
    "both": ("R.memory.kill_tensor(a)", "R.memory.kill_tensor(a)"),
}


def killed_in(where: str, after: str = "") -> list[tuple[str, str, str]]:
    """``a`` read at 1, then an If at 2 that kills ``a`` in the branches ``where`` says."""
    then, orelse = KILLED_IN[where]
    mod = module(f"""
        a = f(x, T4)
        b = f(a, T4)
        if c:
            {then}
            r = x
        else:
            {orelse}
            r = x
        {after}
        return r
    """)
    return found(mod, expect_complete=True)


def test_a_kill_in_one_branch_only_may_kill_but_does_not_must_kill():
    for branch in ("then", "else"):
        assert ("missed-kill", "a", "1") in killed_in(branch)  # not killed on every path
        assert ("double-kill", "a", "3") in killed_in(branch, "R.memory.kill_tensor(a)")


def test_a_kill_in_both_branches_must_kill():
    assert [v for v in killed_in("both") if v[1] == "a"] == []
    assert ("double-kill", "a", "3") in killed_in("both", "R.memory.kill_tensor(a)")


def test_the_checker_is_a_client_of_the_one_model():
    assert issubclass(KillChecker, SymbolicVM)
    assert not set(SHARED) & set(vars(KillChecker))
    for hook in ("buffers", "branch", "call_expr", "bind", "enter", "read", "after_binding"):
        assert hook in vars(KillChecker), hook


def test_the_recursion_limit_is_raised_per_if_depth_and_restored():
    """300 nested Ifs: more Python frames than a limit of 1000 allows."""
    t4 = relax.TensorType((4,), "float32")
    x, c = relax.Var("x", t4), relax.Var("c", tvm.ir.PrimType("bool"))
    body = relax.SeqExpr([], x)
    for _ in range(300):
        nested = relax.VarBinding(relax.Var("r", t4), relax.If(c, body, relax.SeqExpr([], x)))
        body = relax.SeqExpr([relax.BindingBlock([nested])], x)
    mod = tvm.IRModule({"main": relax.Function([x, c], body, t4, is_pure=False)})
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        assert found(mod, expect_complete=True) == []
        assert sys.getrecursionlimit() == 1000
    finally:
        sys.setrecursionlimit(limit)
