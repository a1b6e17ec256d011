"""What an expression reads (:func:`benchkill.analysis.nodes.vars_in`): the one definition
the kill checker, the liveness estimate and the trace's walker share."""

from __future__ import annotations

import tvm
from tvm import relax

from benchkill.analysis.bindings import BindingIndex
from benchkill.analysis.nodes import vars_in

T4 = relax.TensorType((4,), "float32")


def extern(*args):
    return relax.Call(relax.ExternFunc("f"), list(args), ty_args=[T4])


def test_an_if_reads_only_its_condition():
    x, y, c = relax.Var("x", T4), relax.Var("y", T4), relax.Var("c", tvm.ir.PrimType("bool"))
    then = relax.SeqExpr([relax.BindingBlock([relax.VarBinding(relax.Var("u", T4), extern(y))])], y)
    assert vars_in(relax.If(c, then, relax.SeqExpr([], x))) == [c]


def test_a_kill_reads_nothing():
    a = relax.Var("a", T4)
    for op in ("relax.memory.kill_tensor", "relax.memory.kill_storage", "relax.vm.kill_object"):
        assert vars_in(relax.Call(tvm.ir.Op.get(op), [a])) == []


def test_a_call_reads_its_closure_and_its_arguments_in_order():
    x, y = relax.Var("x", T4), relax.Var("y", T4)
    closure = relax.Var("g", relax.FuncType([T4], T4))
    call = relax.Call(closure, [x, relax.Tuple([y, relax.TupleGetItem(relax.Var("t"), 0)])])
    assert [v.name for v in vars_in(call)] == ["g", "x", "y", "t"]
    assert [v.name for v in vars_in(extern(x, y))] == ["x", "y"]


def test_the_binding_index_reads_as_the_checker_does():
    """A variable only killed is never used; an If's condition is used at the If."""
    x, a = relax.Var("x", T4), relax.Var("a", T4)
    c = relax.Var("c", tvm.ir.PrimType("bool"))
    kill = relax.Call(tvm.ir.Op.get("relax.memory.kill_tensor"), [a])
    r = relax.Var("r", T4)
    bindings = [
        relax.VarBinding(a, extern(x)),
        relax.VarBinding(relax.Var("_"), kill),
        relax.VarBinding(r, relax.If(c, relax.SeqExpr([], x), relax.SeqExpr([], x))),
    ]
    func = relax.Function([x, c], relax.SeqExpr([relax.BindingBlock(bindings)], r), T4)
    index = BindingIndex("main", func)
    assert {v.name for v in index.used} == {"x", "c", "r"}
    assert index.why_not_killed("a") == (
        "never used: the kill pass kills a variable only after its last use"
    )
