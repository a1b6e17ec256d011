"""Each rule by which TVM's pass rebuilds a function (benchkill/passes/canonicalize.py lists
them), on a small module written here: benchkill's output equals TVM's in every
PassContext, every mode canonicalizes as TVM does, and the function takes the path the
rule says (benchkill's fast path, or the fallback)."""

from __future__ import annotations

import textwrap

import pytest
import tvm
import tvm_ffi
from tvm import relax
from tvm.script import ir as I
from tvm.script import relax as R
from tvm.script import tirx as T

import benchkill
from benchkill.analysis.verifier import verify_kills
from benchkill.errors import BenchkillError
from benchkill.fuzz.properties import FuzzMismatch, check_example
from benchkill.passes import fallback
from benchkill.passes.last_use import sweep_function
from benchkill.passes.plan import plan_kills
from benchkill.passes.rewrite import rewrite_function


def parse(src) -> tvm.IRModule:
    """The module of TVMScript ``src``, or the one that ``src()`` builds with the API."""
    if callable(src):
        return src()
    extra = {"I": I, "R": R, "T": T, "tvm": tvm, "relax": relax}
    return tvm.script.from_source(textwrap.dedent(src), extra_vars=extra, check_well_formed=False)


CALL_TIR_KERNEL = """
            @T.prim_func(private=True)
            def double(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
                for i in range(4):
                    with T.sblock("b"):
                        vi = T.axis.spatial(4, i)
                        B[vi] = A[vi] * T.float32(2)
"""


def _rebinding(use: str) -> tvm.IRModule:
    """``a = f(x); y: R.Tensor(ndim=1) = a`` and then ``use`` of ``y``: ``b = f(y)`` ("call"),
    ``return y`` ("result"), ``b: R.Tensor(ndim=1) = R.add(y, w)`` ("add"), or with ``y``
    declared R.Any an unused ``R.match_cast(y, R.Tensor((4,)))`` ("match_cast"), built with
    the API (TVMScript gives a rebinding its value's type)."""
    import tvm.ir._ffi_api as ir_api

    t4 = relax.TensorType((4,), "float32")
    loose = relax.TensorType(None, "float32", ndim=1)
    x, w, a, y = relax.Var("x", t4), relax.Var("w", t4), relax.Var("a", t4), relax.Var("y", loose)
    f = relax.ExternFunc("f")
    bindings = [
        relax.VarBinding(a, ir_api.Call(t4, f, [x], None, [t4], None)),
        relax.VarBinding(y, a),
    ]
    if use == "match_cast":  # y: R.Any = a; m = R.match_cast(y, R.Tensor((4,))); return a
        y = relax.Var("y", relax.AnyType())
        bindings[1] = relax.VarBinding(y, a)
        bindings.append(relax.MatchCast(relax.Var("m", t4), y, t4))
        result = a
    elif use == "result":
        result = y
    else:
        b = relax.Var("b", t4 if use == "call" else loose)
        value = (
            ir_api.Call(t4, f, [y], None, [t4], None)
            if use == "call"
            else ir_api.Call(loose, tvm.ir.Op.get("relax.add"), [y, w], None, [], None)
        )
        bindings.append(relax.VarBinding(b, value))
        result = b
    body = relax.SeqExpr([relax.BindingBlock(bindings)], result)
    tvm.relax._ffi_api.UpdateType(body, result.ty)
    func = relax.Function([x, w], body, result.ty, is_pure=False)
    return tvm.IRModule({"main": func})


#: rule -> (module, whether the fallback computes it)
MODULES = {
    # 1: the call is rebuilt (m -> x) and re-inferred as R.Shape([4]): a new Var
    "1 shape declared less specific": (
        """
        @I.ir_module
        class Module:
            @R.function
            def main(x: R.Tensor((4,), "float32")):
                m = R.match_cast(x, R.Tensor((4,), "float32"))
                sh: R.Shape(ndim=1) = R.shape_of(m)
                return sh
        """,
        True,
    ),
    # 1: an annotation more specific than what inference gives, after an alias
    "1 tensor declared more specific": (
        """
        @I.ir_module
        class Module:
            @R.function(pure=False)
            def main(a: R.Tensor((4,), "float32"), b: R.Tensor(ndim=1, dtype="float32")):
                c = R.call_packed("f", a, ty_args=(R.Tensor((4,), "float32"),))
                d = c
                e: R.Tensor((4,), "float32") = R.add(d, b)
                f = R.call_packed("g", e, ty_args=(R.Tensor((4,), "float32"),))
                return f
        """,
        True,
    ),
    # 1, untouched: a declared type TVM keeps because nothing rebuilds the binding
    "1 declared type of an untouched call": (
        """
        @I.ir_module
        class Module:
            @R.function(pure=False)
            def main(x: R.Tensor((4,), "float32")):
                a: R.Tensor(ndim=1) = R.call_packed("f", x, ty_args=(R.Tensor((4,), "float32"),))
                b: R.Any = R.call_packed("f", a, ty_args=(R.Tensor((4,), "float32"),))
                return b
        """,
        False,
    ),
    # 1, touched with the same type: canonicalized in Python
    "1 alias of the same type": (
        """
        @I.ir_module
        class Module:
            @R.function(pure=False)
            def main(x: R.Tensor((4,), "float32")):
                a = R.call_packed("f", x, ty_args=(R.Tensor((4,), "float32"),))
                y = a
                b = R.call_packed("f", y, ty_args=(R.Tensor((4,), "float32"),))
                return b
        """,
        False,
    ),
    # 1, a trivial rebinding declared R.Tensor(ndim=1) to an R.Tensor((4,)): TVM replaces
    # the variable whatever the types, and the call re-inferred with the replacement keeps
    # its declared type
    "1 rebinding to another type, used by a call": (lambda: _rebinding("call"), False),
    # 1 and 10, the same rebinding in the result: TVM's rebuilt SeqExpr takes the
    # replacement's type
    "1 rebinding to another type, returned": (lambda: _rebinding("result"), True),
    # 1, the same rebinding in R.add declared R.Tensor(ndim=1): re-inferred as (4,), TVM
    # binds a new Var
    "1 rebinding to another type, changing a call's type": (lambda: _rebinding("add"), True),
    # 1, a rebinding of R.Any to a tensor, then an unused match_cast of it to the type of
    # the tensor: canonicalized, TVM's UnusedTrivialBindingRemover finds the match_cast trivial
    "1 rebinding to another type, then an unused match_cast": (
        lambda: _rebinding("match_cast"),
        True,
    ),
    # 2: a return annotation incomparable with the body's type
    "2 incomparable return type": (
        """
        @I.ir_module
        class Module:
            @R.function(pure=False)
            def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float16"):
                a = R.call_packed("f", x, ty_args=(R.Tensor((4,), "float32"),))
                return a
        """,
        True,
    ),
    # 3: branches of (4,) and (8,) under an If of R.Tensor(ndim=1): both are wrapped
    "3 If branches of other types": (
        """
        @I.ir_module
        class Module:
            @R.function(pure=False)
            def main(c: R.Prim("bool"), x: R.Tensor((4,), "float32")):
                if c:
                    a = R.call_packed("f", x, ty_args=(R.Tensor((4,), "float32"),))
                    y = a
                else:
                    y = R.call_packed("f", x, ty_args=(R.Tensor((8,), "float32"),))
                z = R.call_packed("g", y, ty_args=(R.Tensor((4,), "float32"),))
                return z
        """,
        True,
    ),
    # 4: chained symbolic match_casts (the module pass would canonicalize them twice)
    "4 chained symbolic match_casts": (
        """
        @I.ir_module
        class Module:
            @R.function(pure=False)
            def main(x: R.Tensor((4,), "float32")):
                n = T.int64()
                k = T.int64()
                m1 = R.match_cast(x, R.Tensor((n,), "float32"))
                m2 = R.match_cast(m1, R.Tensor((k,), "float32"))
                a = R.call_packed("f", m2, ty_args=(R.Tensor((4,), "float32"),))
                return a
        """,
        True,
    ),
    # 5: FNormalize of call_tir in-lines a variable argument tuple
    "5 call_tir of a tuple variable": (
        """
        @I.ir_module(check_well_formed=False)
        class Module:
            @R.function
            def main(x: R.Tensor((4,), "float32")):
                cls = Module
                args = (x,)
                y = relax.Call(
                    tvm.ir.Op.get("relax.call_tir"), [cls.double, args], ty_args=[x.ty]
                )
                z = R.add(y, y)
                return z
        """
        + CALL_TIR_KERNEL,
        True,
    ),
    # 5b: a function returning a void variable returns R.tuple()
    "5b void result": (
        """
        @I.ir_module
        class Module:
            @R.function(pure=False)
            def main(x: R.Tensor((4,), "float32")):
                return R.print(x, format="{}")
        """,
        True,
    ),
    # 6: an alias in a dataflow block (opt_level=0 used to skip its canonicalization)
    "6 dataflow alias": (
        """
        @I.ir_module
        class Module:
            @R.function
            def main(x: R.Tensor((4,), "float32")):
                with R.dataflow():
                    y = R.add(x, x)
                    z = y
                    w = R.multiply(z, z)
                    R.output(w)
                return w
        """,
        True,
    ),
    # 7: an alloc_tensor result declared R.Any gets R.vm.kill_object
    "7 alloc_tensor declared R.Any": (
        """
        @I.ir_module
        class Module:
            @R.function(pure=False)
            def main(x: R.Tensor((4,), "float32")):
                st = R.memory.alloc_storage(
                    R.shape([16]), R.prim_value(0), R.str("global"), R.dtype("uint8")
                )
                a: R.Any = R.memory.alloc_tensor(
                    st, R.prim_value(0), R.shape([4]), R.dtype("float32")
                )
                _ = R.call_packed("fill", a, ty_args=[R.Tuple()])
                b = R.call_packed("g", x, ty_args=[R.Tensor((4,), "float32")])
                return b
        """,
        False,
    ),
    # 10: the result's size is defined by the second parameter (found by scanning the
    # parameters past the first): TVM keeps the type, so the fast path rebuilds it
    "10 result sized by a later parameter": (
        """
        @I.ir_module
        class Module:
            @R.function(pure=False)
            def main(w: R.Tensor((4,), "float32"), x: R.Tensor(("n",), "float32")):
                n = T.int64()
                a = R.call_packed("f", x, w, ty_args=(R.Tensor((n,), "float32"),))
                y = a
                b = R.call_packed("f", y, ty_args=(R.Tensor((n,), "float32"),))
                return b
        """,
        False,
    ),
    # 10: a result sized by a variable no parameter defines: TVM's rebuilt SeqExpr erases it
    "10 result sized by no parameter": (
        """
        @I.ir_module
        class Module:
            @R.function(pure=False)
            def main(w: R.Tensor((4,), "float32"), x: R.Tensor(("n",), "float32")):
                m = T.int64()
                a = R.call_packed("f", x, w, ty_args=(R.Tensor((m,), "float32"),))
                y = a
                b = R.call_packed("f", y, ty_args=(R.Tensor((m,), "float32"),))
                return b
        """,
        True,
    ),
    # 11: a local function (no kills after it in TVM's pass)
    "11 local function": (
        """
        @I.ir_module
        class Module:
            @R.function(pure=False)
            def main(x: R.Tensor((4,), "float32")):
                a = R.call_packed("f", x, ty_args=(R.Tensor((4,), "float32"),))

                @R.function(pure=False)
                def inner(p: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
                    q = R.call_packed("g", p, a, ty_args=(R.Tensor((4,), "float32"),))
                    return q

                r = inner(a)
                s = R.call_packed("f", r, ty_args=(R.Tensor((4,), "float32"),))
                return s
        """,
        True,
    ),
}

CONTEXTS = {
    "default": {},
    "opt_level=0": {"opt_level": 0},
    "disabled": {"disabled_pass": ["CanonicalizeRelaxBindings", "CanonicalizeBindings"]},
}
MODES = {"beyond": {"tvm_compatible": False}, "legacy": {"exclude_null_value": False}}


@pytest.fixture
def fallback_calls(monkeypatch) -> list:
    calls = []
    original = fallback.kill_function

    def counting(func, **modes):
        calls.append(modes)
        return original(func, **modes)

    monkeypatch.setattr(fallback, "kill_function", counting)
    return calls


@pytest.mark.parametrize("context", sorted(CONTEXTS))
@pytest.mark.parametrize("name", sorted(MODULES))
def test_benchkill_gives_tvms_output_in_every_context(name, context, fallback_calls):
    src, falls_back = MODULES[name]
    mod = parse(src)
    with tvm.transform.PassContext(**CONTEXTS[context]):
        expected = relax.transform.KillAfterLastUse()(mod)
        actual = benchkill.KillAfterLastUse()(mod)
        others = {mode: benchkill.KillAfterLastUse(**kw)(mod) for mode, kw in MODES.items()}
    tvm.ir.assert_structural_equal(actual, expected, map_free_vars=True)
    assert bool(fallback_calls) == falls_back
    for out in (actual, *others.values()):
        assert [v for v in verify_kills(out) if v.rule != "kill-null-value"] == []
        bare = fallback.without_kills(out["main"])
        assert tvm_ffi.structural_equal(bare, fallback.without_kills(actual["main"]))


@pytest.mark.parametrize("name", sorted(MODULES))
def test_the_fuzzing_properties_hold_on_every_rule(name):
    check_example(parse(MODULES[name][0]))


def test_rule_7_kill_kind_follows_the_type():
    out = benchkill.KillAfterLastUse()(parse(MODULES["7 alloc_tensor declared R.Any"][0]))
    assert "R.vm.kill_object(a)" in out["main"].script()


def test_rule_5_raises_where_tvm_raises_in_every_mode():
    mod = parse(
        """
        @I.ir_module(check_well_formed=False)
        class Module:
            @R.function
            def main(x: R.Tensor((4,), "float32")):
                cls = Module
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
        """
    )
    with pytest.raises(ValueError, match="out of range"):
        relax.transform.KillAfterLastUse()(mod)
    for modes in ({}, *MODES.values()):
        with pytest.raises(BenchkillError, match="TVM's KillAfterLastUse rejects it: .*range"):
            benchkill.KillAfterLastUse(**modes)(mod)


def test_the_fallback_ignores_the_callers_pass_context():
    """An instrument that vetoes every pass, and opt_level=0, change nothing: the fallback
    runs TVM's pass in a fresh PassContext (never the module pass CanonicalizeBindings)."""

    @tvm.instrument.pass_instrument
    class Veto:
        def should_run(self, mod, info):
            return info.name == "benchkill.KillAfterLastUse"

    mod = parse(MODULES["6 dataflow alias"][0])
    expected = relax.transform.KillAfterLastUse()(mod)
    with tvm.transform.PassContext(opt_level=0, instruments=[Veto()]):
        actual = benchkill.KillAfterLastUse()(mod)
    tvm.ir.assert_structural_equal(actual, expected, map_free_vars=True)
    assert verify_kills(actual) == []  # z = y is gone before y is killed: no use after kill


def test_the_opt_level_0_property_catches_the_old_fallback(monkeypatch):
    """The fuzzing properties check every output under PassContext(opt_level=0): the old
    fallback (the module pass CanonicalizeBindings, which opt_level=0 skips) fails them."""

    def old_kill(func):  # canonicalized by the module pass, then killed without it
        canonical = relax.transform.CanonicalizeBindings()(tvm.IRModule({"f": func}))["f"]
        sweep = sweep_function(canonical, canonicalize=False)
        plan = plan_kills(sweep, exclude_null_value=True, tvm_compatible=True)
        return rewrite_function(canonical, sweep, plan)

    monkeypatch.setattr(fallback, "tvm_kill", old_kill)
    mod = parse(MODULES["6 dataflow alias"][0])
    with pytest.raises(FuzzMismatch, match=r"opt_level=0"):
        check_example(mod)
    with tvm.transform.PassContext(opt_level=0):
        out = benchkill.KillAfterLastUse()(mod)
    assert any(v.rule == "use-after-kill" for v in verify_kills(out))


def test_a_kill_with_a_variable_not_void_cannot_be_planned_in_other_modes():
    """The other modes tell TVM's own kills from the input's by their variables; a kill
    bound to a variable of another type could be either: refused, not guessed."""
    mod = parse(
        """
        @I.ir_module
        class Module:
            @R.function(pure=False)
            def main(x: R.Tensor((4,), "float32")):
                a = R.call_packed("f", x, ty_args=(R.Tensor((4,), "float32"),))
                with R.dataflow():
                    y = R.call_pure_packed("g", x, ty_args=(R.Tensor((4,), "float32"),))
                    R.output(y)
                b = R.call_packed("f", a, y, ty_args=(R.Tensor((4,), "float32"),))
                k: R.Any = R.memory.kill_tensor(a)
                return b
        """
    )
    tvm.ir.assert_structural_equal(
        benchkill.KillAfterLastUse()(mod), relax.transform.KillAfterLastUse()(mod)
    )
    with pytest.raises(BenchkillError, match="not void"):
        benchkill.KillAfterLastUse(tvm_compatible=False)(mod)


def _void_use_after_an_if() -> tvm.IRModule:
    """``v: R.Tuple() = p(x)``, an If, then ``h(r, v)``: built with the raw constructors (the
    TVMScript parser normalizes, so it would write ``R.tuple()`` for the use itself)."""
    from benchkill.relax import ffi as ir

    t4, void = relax.TensorType((4,), "float32"), relax.TupleType([])
    new_var, new_call = tvm.ir._ffi_api.Var, tvm.ir._ffi_api.Call

    def call(ty, name, args):
        return new_call(ty, relax.ExternFunc(name), list(args), None, [ty], None)

    def seq(bindings, result):
        body = ir.make_seq_expr([ir.make_binding_block(bindings, None)], result, None)
        ir.update_type(body, result.ty)
        return body

    x, c = new_var("x", t4, None), new_var("c", relax.TensorType((), "bool"), None)
    v, y, a, b, r, w = (new_var(n, void if n == "v" else t4, None) for n in "vyabrw")
    branch = ir.make_if(
        c,
        seq([ir.make_var_binding(a, call(t4, "g", [y]), None)], a),
        seq([ir.make_var_binding(b, call(t4, "k", [y]), None)], b),
        None,
    )
    ir.update_type(branch, t4)
    body = seq(
        [
            ir.make_var_binding(v, call(void, "p", [x]), None),
            ir.make_var_binding(y, call(t4, "f", [x]), None),
            ir.make_var_binding(r, branch, None),
            ir.make_var_binding(w, call(t4, "h", [r, v]), None),
        ],
        w,
    )
    attrs = tvm.ir.DictAttrs({"global_symbol": "main"})
    return tvm.IRModule({"main": ir.make_function([x, c], body, t4, False, attrs, None)})


def test_rule_5b_a_void_variable_used_after_the_first_if_goes_to_the_fallback(fallback_calls):
    """TVM's Normalizer writes ``R.tuple()`` for the use of ``v``; the plan reads the type of
    every used variable, also where no kill goes (at or after a scope's first If), so the
    function goes to the fallback."""
    mod = _void_use_after_an_if()
    expected = relax.transform.KillAfterLastUse()(mod)
    assert "R.tuple()" in expected["main"].script()
    tvm.ir.assert_structural_equal(benchkill.KillAfterLastUse()(mod), expected)
    assert fallback_calls


def _retyped_alias() -> tvm.IRModule:
    """``o: R.Any = f(y)`` (the call typed R.Tensor((4,))) after ``y = x``, then
    ``m = R.match_cast(o, R.Tensor((4,)))``, returned; a local function sends it to the
    fallback.  TVM's canonicalization rebuilds o's call, re-types o to the tensor (rule 1),
    and the match_cast is left an alias of o: the VM gives both one register."""
    import tvm.ir._ffi_api as ir_api

    t4, any_ty = relax.TensorType((4,), "float32"), relax.AnyType()
    x, y, o, m = (relax.Var(n, t) for n, t in (("x", t4), ("y", t4), ("o", any_ty), ("m", t4)))
    p = relax.Var("p", t4)
    inner_body = relax.SeqExpr([], p)
    tvm.relax._ffi_api.UpdateType(inner_body, t4)
    g = relax.Var("g", relax.FuncType([t4], t4))
    bindings = [
        relax.VarBinding(g, relax.Function([p], inner_body, t4, is_pure=False)),
        relax.VarBinding(y, x),
        relax.VarBinding(o, ir_api.Call(t4, relax.ExternFunc("f"), [y], None, [t4], None)),
        relax.MatchCast(m, o, t4),
    ]
    body = relax.SeqExpr([relax.BindingBlock(bindings)], m)
    tvm.relax._ffi_api.UpdateType(body, t4)
    return tvm.IRModule({"main": relax.Function([x], body, t4, is_pure=False)})


def test_beyond_mode_keeps_the_source_of_a_match_cast_alias_alive(fallback_calls):
    """The beyond mode plans on TVM's canonicalized function, where a match_cast to its
    source's own type is an alias: the source is not killed while the alias lives (here:
    never, the alias is the result); TVM's mode (and so the default mode) does not know."""
    mod = _retyped_alias()
    beyond = benchkill.KillAfterLastUse(tvm_compatible=False)(mod)
    assert fallback_calls  # the local function
    assert verify_kills(beyond) == []
    assert "kill_tensor(o)" not in beyond["main"].script()
    default = benchkill.KillAfterLastUse()(mod)
    tvm.ir.assert_structural_equal(default, relax.transform.KillAfterLastUse()(mod))
    check_example(mod)  # every mode's properties, TVM's output included


def test_beyond_mode_never_kills_a_match_cast_alias_itself(fallback_calls):
    """``y: R.Any = x`` (a parameter), ``m = R.match_cast(y, R.Tensor((4,)))``, ``f(m)``,
    ``f(x)``: canonicalized, m is an alias of the parameter x.  TVM's pass kills m after
    f(m), a kill of x's register before f(x) (verify_kills: kill-param, use-after-kill;
    the fuzzer does not draw this shape); the beyond mode kills neither."""
    import tvm.ir._ffi_api as ir_api

    t4, any_ty = relax.TensorType((4,), "float32"), relax.AnyType()
    x, y, m = relax.Var("x", t4), relax.Var("y", any_ty), relax.Var("m", t4)
    a, b = relax.Var("a", t4), relax.Var("b", t4)
    f = relax.ExternFunc("f")
    bindings = [
        relax.VarBinding(y, x),
        relax.MatchCast(m, y, t4),
        relax.VarBinding(a, ir_api.Call(t4, f, [m], None, [t4], None)),
        relax.VarBinding(b, ir_api.Call(t4, f, [x, a], None, [t4], None)),
    ]
    body = relax.SeqExpr([relax.BindingBlock(bindings)], b)
    tvm.relax._ffi_api.UpdateType(body, t4)
    mod = tvm.IRModule({"main": relax.Function([x], body, t4, is_pure=False)})
    tvm_out = relax.transform.KillAfterLastUse()(mod)
    assert {v.rule for v in verify_kills(tvm_out)} >= {"kill-param"}
    beyond = benchkill.KillAfterLastUse(tvm_compatible=False)(mod)
    assert fallback_calls  # the match_cast's value is replaced by another type
    assert verify_kills(beyond) == []
    assert "kill_tensor(m)" not in beyond["main"].script()
    tvm.ir.assert_structural_equal(benchkill.KillAfterLastUse()(mod), tvm_out)


def test_a_call_with_an_inlined_constant_is_rebuilt_from_the_sweep(fallback_calls):
    """``c = R.const(...)`` used by a call: TVM's canonicalization inlines the constant into
    the call and re-infers it; benchkill takes the sweep's fast path (the new arguments,
    the constant among them, kept in ``Scope.rebuilt``), with TVM's output."""
    mod = parse(
        """
        @I.ir_module
        class Module:
            @R.function(pure=False)
            def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
                c = R.const(2.0, "float32")
                y = R.call_packed("f", x, c, sinfo_args=R.Tensor((4,), "float32"))
                z = R.call_packed("g", y, sinfo_args=R.Tensor((4,), "float32"))
                return z
        """
    )
    sweep = sweep_function(mod["main"])
    (entry,) = sweep.root.rebuilt.values()
    assert [type(arg).__name__ for arg in entry[3]] == ["Var", "GenericConst"]  # x, the constant
    expected = relax.transform.KillAfterLastUse()(mod)
    actual = benchkill.KillAfterLastUse()(mod)
    tvm.ir.assert_structural_equal(actual, expected, map_free_vars=True)
    assert "R.const(2" in actual.script() and not fallback_calls


_SUBSTITUTED_ARGS = """
@I.ir_module
class Module:
    @R.function(pure=False)
    def main(x: R.Tensor((4,), "float32"), w: R.Tensor((4,), "float32")):
        c = R.const(2.0, "float32")
        y0 = R.call_packed("f", x, sinfo_args=R.Tensor((4,), "float32"))
        y = y0
        z = R.call_packed(
            "g", x, c, y, w, R.prim_value(3){tuple}, sinfo_args=R.Tensor((4,), "float32")
        )
        return z
"""


@pytest.mark.parametrize("with_tuple", [False, True])
def test_a_call_with_every_kind_of_argument_after_the_first_substituted_one(
    with_tuple, fallback_calls
):
    """The sweep's loop over a call's arguments from the first one canonicalization
    substitutes (an inlined constant, read by the hot path), then a rebound variable, a plain
    one, a leaf and, with ``with_tuple``, a tuple (a call whose new arguments are not all
    variables or leaves is rebuilt by the canonicalizer, not from the sweep's arguments):
    uses are recorded as uses of the replacements, and the output is TVM's."""
    mod = parse(_SUBSTITUTED_ARGS.replace("{tuple}", ", (w, y)" if with_tuple else ""))
    sweep = sweep_function(mod["main"])
    root = sweep.root
    assert root.touched == {3}  # z's call, at position 3 (y = y0 is removed)
    assert root.removed == {2}
    if with_tuple:
        assert not root.rebuilt
    else:
        ((_, _, _, args),) = root.rebuilt.values()
        names = [a.name if isinstance(a, relax.Var) else type(a).__name__ for a in args]
        assert names == ["x", "GenericConst", "y0", "w", "IntImm"]
    y0 = list(root.last)[1]
    assert root.last[y0] == 3  # its use through y
    expected = relax.transform.KillAfterLastUse()(mod)
    actual = benchkill.KillAfterLastUse()(mod)
    tvm.ir.assert_structural_equal(actual, expected, map_free_vars=True)
    assert not fallback_calls


def _ill_typed_call_after_a_rebinding() -> tvm.IRModule:
    """``lv = x; _ = k(lv, lv); return x`` where the PrimFunc ``k`` takes 8x8 buffers and
    ``x`` is 16x16: a call no parser makes (it infers, and raises), built with the raw
    constructors, whose substituted argument ``x`` keeps ``lv``'s type."""

    @I.ir_module
    class Kernel:
        @T.prim_func
        def k(a: T.Buffer((8, 8), "float32"), b: T.Buffer((8, 8), "float32")):
            T.evaluate(0)

    from benchkill.relax import ffi as ir

    gv, ty, void = (
        Kernel.get_global_var("k"),
        relax.TensorType((16, 16), "float32"),
        relax.TupleType([]),
    )
    x, lv = relax.Var("x", ty), relax.Var("lv", ty)
    call = ir.make_call(void, gv, [lv, lv], None, [], None)
    bindings = [relax.VarBinding(lv, x), relax.VarBinding(relax.Var("u", void), call)]
    body = relax.SeqExpr([relax.BindingBlock(bindings)], x)
    ir.update_type(body, ty)
    main = relax.Function([x], body, ty, is_pure=False)
    return tvm.IRModule({gv: Kernel["k"], tvm.ir.GlobalVar("main"): main})


def test_a_call_whose_substituted_arguments_keep_their_types_is_still_inferred():
    """Why "a call whose substituted arguments keep their types keeps its type" is not
    exact: TVM's mutator re-infers the rebuilt call, and DeriveCallRetType checks every
    argument against the callee's parameters (``src/relax/analysis/type_analysis.cc:
    847-858`` at 5d4dc87), raising on a mismatch the input call never met; benchkill must
    raise there too, so it infers (rule 1)."""
    mod = _ill_typed_call_after_a_rebinding()
    with pytest.raises(ValueError, match="Argument 0 type mismatch"):
        relax.transform.KillAfterLastUse()(mod)
    with pytest.raises(BenchkillError, match="rejects it: Argument 0 type mismatch"):
        benchkill.KillAfterLastUse()(mod)
