"""Spans of rebuilt bindings: benchkill's output carries exactly the spans TVM's has.

Structural equality ignores spans, so the equivalence checks elsewhere cannot see them.
TVM's ``ReEmitBinding`` builds a changed VarBinding without a span
(``VarBinding(new_var, new_value)``), a rebuilt call keeps its own span, and a binding
that does not change is reused with its span.  The module here is built with the API,
every binding and call given a span of its own (the TVMScript parser gives bindings
none), and it takes each of benchkill's rebuild paths: a removed rebinding, a call and
a tuple rebuilt with a replaced variable, an If rebuilt around a kill in its branch.
"""

from __future__ import annotations

import tvm
import tvm.ir._ffi_api as ir_api
import tvm_ffi
from tvm import relax

import benchkill
from benchkill.relax import ffi as ir


def _span(line: int):
    return tvm.ir.Span(tvm.ir.SourceName("spans.py"), line, line, 0, 1)


def _module() -> tvm.IRModule:
    t4 = relax.TensorType((4,), "float32")
    f = relax.ExternFunc("f")
    line = iter(range(1, 100))

    def call(*args):
        return ir_api.Call(t4, f, list(args), None, [t4], _span(next(line)))

    def bind(var, value):
        return relax.VarBinding(var, value, _span(next(line)))

    x, c = relax.Var("x", t4), relax.Var("c", tvm.ir.PrimType("bool"))
    a, y, b, w = (relax.Var(n, t4) for n in "aybw")
    pair = relax.Var("pair", relax.TupleType([t4, t4]))
    z, u = relax.Var("z", t4), relax.Var("u", t4)
    branch_body = relax.SeqExpr([relax.BindingBlock([bind(z, call(b)), bind(u, call(z))])], u)
    tvm.relax._ffi_api.UpdateType(branch_body, t4)
    other_body = relax.SeqExpr([], b)
    tvm.relax._ffi_api.UpdateType(other_body, t4)
    cond = relax.If(c, branch_body, other_body, _span(next(line)))
    tvm.relax._ffi_api.UpdateType(cond, t4)
    r = relax.Var("r", t4)
    bindings = [
        bind(a, call(x)),
        bind(y, a),  # a trivial rebinding: removed, its uses become uses of a
        bind(b, call(y)),  # a call rebuilt with the replaced argument
        bind(pair, relax.Tuple([y, b])),  # a tuple rebuilt
        bind(w, call(b)),
        bind(r, cond),  # an If whose branch gets the kill of z
    ]
    body = relax.SeqExpr([relax.BindingBlock(bindings)], relax.Tuple([pair, w, r]))
    tvm.relax._ffi_api.UpdateType(body, body.body.ty)
    func = relax.Function([x, c], body, body.ty, is_pure=False)
    return tvm.IRModule({"main": func})


def _spans(seq) -> list:
    """(kind of value, span line or None, call's span line or None) of every binding, in
    order, nested scopes included."""
    out = []
    for block in ir.items(seq.blocks):
        for binding in ir.items(block.bindings):
            value = binding.value
            call_span = value.span.line if type(value) is ir.Call and value.span else None
            out.append(
                (type(value).__name__, binding.span.line if binding.span else None, call_span)
            )
            if type(value) is ir.If:
                out += [("then", *_spans(value.true_branch))]
                out += [("else", *_spans(value.false_branch))]
    return out


def test_rebuilt_bindings_carry_tvms_spans():
    mod = _module()
    tvm_out = relax.transform.KillAfterLastUse()(mod)
    ours = benchkill.KillAfterLastUse()(mod)
    assert tvm_ffi.structural_equal(tvm_out, ours, map_free_vars=True)
    expected = _spans(tvm_out["main"].body)
    # the module takes every path: a binding without a span (re-emitted), reused ones with
    # theirs, and the kill in the If's branch
    flat = [entry for entry in expected if entry[0] not in ("then", "else")]
    unchanged, rebuilt = flat[0], flat[1]  # a = f(x), and b = f(a) (was f(y))
    assert unchanged[0] == "Call" and None not in unchanged
    assert rebuilt[0] == "Call" and rebuilt[1] is None and rebuilt[2] is not None
    assert ("Tuple", None, None) in flat
    assert flat[-1] == ("If", None, None)
    assert _spans(ours["main"].body) == expected
