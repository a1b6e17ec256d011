"""The kill verifier: each rule on small TVMScript modules, what it finds in the outputs of
TVM's pass and of benchkill's on lowered If/null_value modules, file reading and the CLI."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tvm
from tvm import relax

import benchkill
from benchkill.analysis.verifier import RULES, Violation, verify_kills
from benchkill.cli.main import main
from benchkill.errors import BenchkillError
from benchkill.execution.pipeline import build_pipeline, lower_to_kill_input
from benchkill.fuzz.properties import tvm_keeps_on_purpose
from benchkill.inputs.families import generate
from benchkill.relax import ops
from benchkill.relax.counting import count_bindings
from benchkill.relax.text import read_module

from .. import scenarios

T4 = 'R.Tensor((4,), "float32")'
PARAMS = f'x: {T4}, obj: R.Any, c: R.Prim("bool")'


def module(body: str, params: str = PARAMS) -> tvm.IRModule:
    """``main(params)`` with ``body`` (TVMScript lines); ``f(...)`` is an extern call."""
    lines = textwrap.dedent(body).strip("\n")
    lines = lines.replace("f(", 'R.call_packed("f", ').replace("ANY)", "ty_args=(R.Any,))")
    lines = lines.replace("T4)", f"ty_args=({T4},))")
    src = f"@R.function(pure=False)\ndef main({params}):\n" + textwrap.indent(lines, "    ")
    return tvm.IRModule({"main": tvm.script.from_source(src)})


def found(mod: tvm.IRModule, expect_complete: bool = False) -> list[tuple[str, str, str]]:
    return [(v.rule, v.variable, v.binding) for v in verify_kills(mod, expect_complete)]


def top_bindings(mod: tvm.IRModule) -> list:
    """The bindings of main's body (not those inside If branches)."""
    return [b for block in mod["main"].body.blocks for b in block.bindings]


def last_read(mod: tvm.IRModule, name: str) -> int:
    """The position in main's body of the last binding that reads the variable ``name``."""
    return max(
        i
        for i, b in enumerate(top_bindings(mod))
        if name in {v.name for v in relax.analysis.free_vars(b.value)}
    )


# --- each rule ----------------------------------------------------------------------------


def test_a_kill_after_the_last_use_is_clean():
    mod = module("""
        a = f(x, T4)
        b = f(a, T4)
        R.memory.kill_tensor(a)
        return b
    """)
    assert found(mod) == []
    assert found(mod, expect_complete=True) == []


def test_kills_of_register_less_values():
    mod = module("""
        n = R.null_value()
        m = n
        k = R.const(1.0, "float32")
        s = R.str("text")
        sh = R.shape([4])
        p = R.prim_value(3)
        a = f(x, n, m, k, s, sh, p, T4)
        R.vm.kill_object(n)
        R.vm.kill_object(m)
        R.memory.kill_tensor(k)
        R.vm.kill_object(s)
        R.vm.kill_object(sh)
        R.vm.kill_object(p)
        R.vm.kill_object(c)
        return a
    """)
    assert found(mod) == [
        ("kill-null-value", "n", "7"),
        ("kill-null-value", "m", "8"),  # an alias: CanonicalizeBindings makes it n
        ("kill-constant", "k", "9"),
        ("kill-constant", "s", "10"),  # R.str has no register either (see below)
        ("kill-no-register-type", "sh", "11"),
        ("kill-constant", "p", "12"),  # a prim value is a constant too
        ("kill-no-register-type", "c", "13"),  # PrimType
    ]


def test_use_after_kill_also_through_aliases():
    mod = module("""
        a = f(x, T4)
        y = a
        m = R.match_cast(a, R.Tensor((4,), "float32"))
        R.memory.kill_tensor(a)
        b = f(y, T4)
        d = f(m, T4)
        e = f(a, T4)
        return e
    """)
    assert found(mod) == [
        ("use-after-kill", "y", "4"),
        ("use-after-kill", "m", "5"),
        ("use-after-kill", "a", "6"),
    ]


def test_a_refining_match_cast_and_a_tuple_hold_their_own_reference():
    # The VM gives the match_cast result its own register, and the tuple keeps its field
    # alive: TVM's pass itself kills o after the match_cast and a after the tuple.
    mod = module("""
        o = f(x, ANY)
        m = R.match_cast(o, R.Tensor((4,), "float32"))
        R.vm.kill_object(o)
        a = f(m, T4)
        t = (a, m)
        R.memory.kill_tensor(a)
        b = f(m, t, T4)
        return b
    """)
    assert found(mod) == []
    # But CanonicalizeBindings replaces an item of a tuple *literal* by the field itself.
    items = module("""
        a = f(x, T4)
        m = f(x, T4)
        t = (a, m)
        R.memory.kill_tensor(a)
        u = t[1]
        R.memory.kill_tensor(m)
        v = t[0]
        b = f(u, v, T4)
        return b
    """)
    assert found(items) == [("use-after-kill", "u", "7"), ("use-after-kill", "v", "7")]


def test_a_copy_of_a_tuple_is_an_alias_only_of_a_parameter():
    # CanonicalizeBindings turns (p[0], p[1]) into p for a parameter p; for any other
    # tuple the copy stays, and it is no tuple literal either (its items are not merged).
    params = f"x: {T4}, pair: R.Tuple({T4}, R.Any)"
    copy_of_param = module(
        """
        a = pair[0]
        b = pair[1]
        t = (a, b)
        R.vm.kill_object(t)
        return x
    """,
        params,
    )
    assert found(copy_of_param) == [("kill-param", "t", "3")]
    copy_of_result = module(
        """
        p = R.call_packed("f", x, ty_args=(R.Tuple(R.Tensor((4,), "float32"), R.Any),))
        a = p[0]
        b = p[1]
        t = (a, b)
        R.memory.kill_tensor(a)
        u = t[0]
        v = f(u, T4)
        return v
    """,
        params,
    )
    assert found(copy_of_result) == []


def test_use_after_kill_follows_paths_through_if():
    mod = module("""
        a = f(x, T4)
        b = f(x, T4)
        if c:
            R.memory.kill_tensor(a)
            R.memory.kill_tensor(b)
            r = x
        else:
            u = f(a, T4)
            r = b
        z = f(a, T4)
        return z
    """)
    assert found(mod) == [
        ("use-after-kill", "a", "3"),  # killed on the then-path: a use after the If is not safe
    ]


def test_a_killed_branch_result_is_a_use_after_kill():
    mod = module("""
        if c:
            a = f(x, T4)
            R.memory.kill_tensor(a)
            r = a
        else:
            r = x
        return r
    """)
    assert found(mod) == [("use-after-kill", "a", "0.then.result")]


def test_double_kills():
    mod = module("""
        a = f(x, T4)
        b = f(x, T4)
        y = b
        d = f(x, T4)
        R.memory.kill_tensor(a)
        R.memory.kill_tensor(a)
        R.memory.kill_tensor(b)
        R.memory.kill_tensor(y)
        if c:
            R.memory.kill_tensor(d)
            r = x
        else:
            R.memory.kill_tensor(d)
            r = x
        return r
    """)
    assert found(mod) == [("double-kill", "a", "5"), ("double-kill", "y", "7")]
    again = module("""
        d = f(x, T4)
        if c:
            R.memory.kill_tensor(d)
            r = x
        else:
            r = x
        R.memory.kill_tensor(d)
        return r
    """)
    assert found(again) == [("double-kill", "d", "2")]


def test_kills_of_outputs_and_parameters():
    mod = module("""
        a = f(x, T4)
        y = x
        R.memory.kill_tensor(a)
        R.memory.kill_tensor(y)
        t = (a, obj)
        return t
    """)
    assert found(mod) == [("kill-param", "y", "3"), ("use-after-kill", "a", "4")]
    returned = module("""
        a = f(x, T4)
        R.memory.kill_tensor(a)
        return a
    """)
    assert found(returned) == [("kill-output", "a", "return")]


def test_a_kill_without_a_variable_is_malformed():
    x = relax.Var("x", relax.TensorType((4,), "float32"))
    kill = relax.Call(tvm.ir.Op.get("relax.memory.kill_tensor"), [relax.const(1.0, "float32")])
    body = relax.SeqExpr([relax.BindingBlock([relax.VarBinding(relax.Var("_"), kill)])], x)
    func = relax.Function([x], body, relax.TensorType((4,), "float32"), is_pure=False)
    assert found(tvm.IRModule({"main": func})) == [("kill-malformed", "const", "0")]


def test_missed_kills_per_scope_and_across_if():
    mod = module("""
        s = R.memory.alloc_storage(R.shape([16]), 0, "global", "uint8")
        a = R.memory.alloc_tensor(s, 0, R.shape([4]), "float32")
        b = f(a, T4)
        unused = f(x, T4)
        if c:
            u = f(b, T4)
            R.memory.kill_tensor(b)
            r = u
        else:
            v = f(x, T4)
            w = f(v, T4)
            r = w
        return r
    """)
    assert found(mod) == []
    assert found(mod, expect_complete=True) == [
        ("missed-kill", "v", "4.else.1"),  # w uses v last; the branch result w is exempt
        ("missed-kill", "s", "1"),
        ("missed-kill", "a", "2"),
        ("missed-kill", "b", "4"),  # killed on the then-path only; `unused` is never used
    ]


def test_a_kill_in_both_branches_completes():
    mod = module("""
        a = f(x, T4)
        if c:
            R.memory.kill_tensor(a)
            r = x
        else:
            b = f(a, T4)
            R.memory.kill_tensor(a)
            r = b
        return r
    """)
    assert found(mod, expect_complete=True) == []


def test_violation_is_a_frozen_record_printed_on_one_line():
    mod = module("""
        if c:
            a = f(x, T4)
            R.memory.kill_tensor(a)
            R.memory.kill_tensor(a)
            r = a
        else:
            r = x
        return r
    """)
    first = verify_kills(mod)[0]
    assert first == Violation(
        function="main",
        variable="a",
        binding="0.then.2",
        description="R.memory.kill_tensor(a)",
        rule="double-kill",
        message="a is already killed by R.memory.kill_tensor(a) at 0.then.1",
    )
    assert str(first) == (
        "main @0.then.2 double-kill: a is already killed by R.memory.kill_tensor(a) at "
        "0.then.1 [R.memory.kill_tensor(a)]"
    )
    with pytest.raises(AttributeError):
        first.rule = "other"  # type: ignore[misc]
    assert set(RULES) >= {v.rule for v in verify_kills(mod, True)}


def test_a_use_outside_the_defining_scope_is_reported():
    """TVM's default pipeline lowers this program to IR that reuses a storage bound in a
    branch after the If (its StaticPlanBlockMemory; tests/scenarios.py), and the VM
    then reads a register that was never written."""
    lowered = lower_to_kill_input(scenarios.PLANNER_BUG)
    after_if = top_bindings(lowered)[1]  # v4's tensor, in the storage of a branch
    storage = after_if.value.args[0].name
    assert found(lowered) == [("use-out-of-scope", storage, "1")]
    assert "ill-formed IR" in verify_kills(lowered)[0].message


def test_only_modules_are_accepted():
    with pytest.raises(BenchkillError, match="IRModule"):
        verify_kills("main")  # type: ignore[arg-type]


def test_no_recursion_over_deeply_nested_ifs():
    """1500 nested Ifs (over Python's recursion limit of 1000) and 3000 more bindings."""
    t4 = relax.TensorType((4,), "float32")
    x = relax.Var("x", t4)
    cond = relax.Var("c", tvm.ir.PrimType("bool"))
    call = lambda *args: relax.Call(relax.ExternFunc("f"), list(args), ty_args=[t4])  # noqa: E731
    inner = relax.SeqExpr([], x)
    for depth in range(1500):
        a = relax.Var(f"a{depth}", t4)
        kill = relax.Call(tvm.ir.Op.get("relax.memory.kill_tensor"), [a])
        branch = relax.SeqExpr(
            [
                relax.BindingBlock(
                    [
                        relax.VarBinding(a, call(x)),
                        relax.VarBinding(relax.Var("r", t4), relax.If(cond, inner, x)),
                        relax.VarBinding(relax.Var("u", t4), call(a)),
                        relax.VarBinding(relax.Var("_"), kill),
                    ]
                )
            ],
            x,
        )
        inner = branch
    prev, bindings = x, []
    for i in range(3000):
        var = relax.Var(f"s{i}", t4)
        bindings.append(relax.VarBinding(var, call(prev)))
        prev = var
    bindings.append(relax.VarBinding(relax.Var("top", t4), relax.If(cond, inner, x)))
    func = relax.Function(
        [x, cond], relax.SeqExpr([relax.BindingBlock(bindings)], prev), t4, is_pure=False
    )
    mod = tvm.IRModule({"main": func})
    assert found(mod) == []
    missed = found(mod, expect_complete=True)
    assert len(missed) == 2999  # every s_i but the result; each a_d is killed in its branch
    assert missed[0] == ("missed-kill", "s0", "1")


# --- what it finds in real pass outputs -----------------------------------------------------


@pytest.fixture(scope="module")
def lowered_if() -> tvm.IRModule:
    """A high-level If/else program lowered by TVM's default pipeline up to its kill step."""
    return scenarios.lowered_if()


@pytest.fixture(scope="module")
def tvm_missed(lowered_if) -> list[tuple[str, str, str]]:
    """The kills TVM's pass misses on ``lowered_if``: at or after the If, it emits none.

    They are named by the lowering (y and r are renames of the tensors it allocates)."""
    top = top_bindings(lowered_if)
    value = {b.var.name: b.value for b in top}
    y_tensor = value["y"].name
    r_storage = value[value["r"].name].args[0].name
    return [
        ("missed-kill", y_tensor, str(last_read(lowered_if, "y"))),  # read last by the If
        ("missed-kill", "out", str(last_read(lowered_if, "out"))),
        ("missed-kill", r_storage, str(last_read(lowered_if, r_storage))),
    ]


def test_pipeline_input_misses_every_kill(lowered_if):
    assert found(lowered_if) == []
    missed = found(lowered_if, expect_complete=True)
    assert {rule for rule, _, _ in missed} == {"missed-kill"}
    # no kills yet: every storage is missed, and tensors, but not the function's result
    storages, tensors = _allocated_names(lowered_if["main"])
    names = {name for _, name, _ in missed}
    assert storages <= names
    assert names - storages <= tensors | {b.var.name for b in top_bindings(lowered_if)}
    assert lowered_if["main"].body.body.name not in names


def _allocated_names(func) -> tuple[set[str], set[str]]:
    """The variables bound to alloc_storage and to alloc_tensor anywhere in ``func``."""
    storages: set[str] = set()
    tensors: set[str] = set()

    def visit(expr):
        if isinstance(expr, relax.SeqExpr):
            for block in expr.blocks:
                for b in block.bindings:
                    name = getattr(getattr(b.value, "op", None), "name", None)
                    if name in ops.ALLOC_STORAGE:
                        storages.add(b.var.name)
                    elif name in ops.ALLOC_TENSOR:
                        tensors.add(b.var.name)

    relax.analysis.post_order_visit(func, visit)
    return storages, tensors


def test_tvm_pass_after_if_misses_kills_that_beyond_mode_makes(lowered_if, tvm_missed):
    tvm_out = relax.transform.KillAfterLastUse()(lowered_if)
    ours = benchkill.KillAfterLastUse()(lowered_if)
    beyond = benchkill.KillAfterLastUse(tvm_compatible=False)(lowered_if)
    assert found(tvm_out) == found(ours) == found(beyond) == []
    assert found(tvm_out, expect_complete=True) == tvm_missed
    assert found(ours, expect_complete=True) == tvm_missed
    assert found(beyond, expect_complete=True) == []


NULL_VALUE_SRC = f"""
@R.function(pure=False)
def main(x: {T4}) -> {T4}:
    heap = R.null_value()
    s = R.memory.alloc_storage(R.shape([16]), 0, "global", "uint8")
    a = R.memory.alloc_tensor(s, 0, R.shape([4]), "float32")
    b = R.call_packed("f", x, a, heap, ty_args=({T4},))
    c = R.call_packed("f", b, heap, ty_args=({T4},))
    return c
"""


def test_legacy_mode_kills_null_value_and_the_fixed_passes_do_not():
    mod = tvm.IRModule({"main": tvm.script.from_source(NULL_VALUE_SRC)})
    legacy = benchkill.KillAfterLastUse(exclude_null_value=False)(mod)
    assert found(legacy) == [("kill-null-value", "heap", "8")]  # with b, s and c killed too
    for out in (relax.transform.KillAfterLastUse()(mod), benchkill.KillAfterLastUse()(mod)):
        assert found(out, expect_complete=True) == []


STRING_SRC = f"""
@R.function(pure=False)
def main(x: {T4}) -> {T4}:
    s = R.str("hello")
    a = R.call_packed("test.benchkill.identity", x, s, ty_args=({T4},))
    b = R.call_packed("test.benchkill.identity", a, s, ty_args=({T4},))
    return b
"""


def test_tvm_kills_a_variable_bound_to_a_string_and_the_build_fails():
    """A TVM 0.27 bug the verifier finds: R.str is a constant (no VM register), but
    KillAfterLastUse treats only tensor constants as such and emits R.vm.kill_object(s);
    both VM code generators then fail.  benchkill's default mode reproduces TVM."""
    mod = tvm.IRModule({"main": tvm.script.from_source(STRING_SRC)})
    for out in (relax.transform.KillAfterLastUse()(mod), benchkill.KillAfterLastUse()(mod)):
        assert found(out) == [("kill-constant", "s", "4")]  # after b and kill_tensor(a)
    with pytest.raises(Exception, match="Expected the object to be killed to be stored in a reg"):
        relax.build(mod, "llvm", relax_pipeline=build_pipeline(kill="tvm"), exec_mode="bytecode")
    ex = relax.build(mod, "llvm", relax_pipeline=build_pipeline(kill=None), exec_mode="bytecode")
    x = np.arange(4, dtype="float32")
    out = relax.VirtualMachine(ex, tvm.cpu())["main"](tvm.runtime.tensor(x))
    np.testing.assert_array_equal(out.numpy(), x)


@tvm.register_global_func("test.benchkill.identity", override=True)
def _identity(value, _text):
    return value


def test_generated_families_with_each_pass():
    """The project's generated families: TVM's pass misses kills after Ifs only (control,
    mixed), beyond mode misses none, the legacy mode kills the shape heap (shape_heap)."""
    for family in ("control", "mixed", "shape_heap"):
        mod = generate(family, 400, seed=3)
        tvm_out = relax.transform.KillAfterLastUse()(mod)
        missed = verify_kills(tvm_out, True)
        assert all(tvm_keeps_on_purpose(tvm_out, v) for v in missed)
        assert bool(missed) == (family != "shape_heap")
        assert verify_kills(benchkill.KillAfterLastUse(tvm_compatible=False)(mod), True) == []
        legacy = verify_kills(benchkill.KillAfterLastUse(exclude_null_value=False)(mod))
        expected = [("kill-null-value", "shape_heap")] if family == "shape_heap" else []
        assert [(v.rule, v.variable) for v in legacy] == expected
    assert count_bindings(mod) > 1000


# --- files and the command line ------------------------------------------------------------


def test_read_module_tvmscript_with_imports_and_a_bare_function(tmp_path, lowered_if):
    path = tmp_path / "mod.py"
    path.write_text(
        "from tvm.script import ir as I\nfrom tvm.script import relax as R\n"
        "from tvm.script import tirx as T\n\n" + lowered_if.script()
    )
    tvm.ir.assert_structural_equal(read_module(path), lowered_if, map_free_vars=True)
    bare = tmp_path / "func.py"
    bare.write_text(NULL_VALUE_SRC)
    assert list(read_module(bare).functions.keys())[0].name_hint == "main"


def _object_module() -> tvm.IRModule:
    """A module that kills a parameter."""
    return module(
        """
        a = f(obj, ANY)
        R.vm.kill_object(obj)
        return a
    """,
        params="obj: R.Any",
    )


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("missing.py", None, "cannot read"),
        ("syntax.py", "def f(:\n", "cannot parse .* as TVMScript: invalid syntax"),
        ("empty.py", "", "is empty"),
        ("broken.json", "{bad", "cannot parse .* as TVMScript"),
    ],
)
def test_read_module_errors_are_one_line(tmp_path, name, text, message):
    path = tmp_path / name
    if text is not None:
        path.write_text(text)
    with pytest.raises(BenchkillError, match=message) as info:
        read_module(path)
    assert "\n" not in str(info.value)


def test_cli_exit_codes(tmp_path, capsys, lowered_if, tvm_missed):
    clean = tmp_path / "clean.py"
    clean.write_text(relax.transform.KillAfterLastUse()(lowered_if).script())
    assert main(["verify", str(clean)]) == 0
    assert "ok: no violations" in capsys.readouterr().out
    assert main(["verify", str(clean), "--expect-complete"]) == 1
    out = capsys.readouterr().out.splitlines()
    _, name, where = tvm_missed[0]
    assert out[0].startswith(f"main @{where} missed-kill: tensor {name} is not killed")
    assert out[-1] == f"{len(tvm_missed)} violation(s) in {clean}"
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert main(["verify", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("benchkill: error: cannot parse") and err.count("\n") == 1


def test_cli_in_a_real_process(tmp_path):
    path = tmp_path / "mod.py"
    path.write_text(_object_module().script())
    proc = subprocess.run(
        [sys.executable, "-m", "benchkill", "verify", str(path)], capture_output=True, text=True
    )
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[0] == (
        "main @1 kill-param: obj is a parameter of the function [R.vm.kill_object(obj)]"
    )
    assert proc.stderr == ""
