"""Differential fuzzing: the generator, the properties on a few hundred drawn modules, the
buildable programs on the VM, and the failures the fuzzer found (as fixed reproducers)."""

from __future__ import annotations

import re
import textwrap

import numpy as np
import pytest
import tvm
import tvm.ir._ffi_api as _ir_ffi
import tvm.relax._ffi_api as _rx_ffi
import tvm_ffi
from hypothesis import HealthCheck, given, settings
from tvm import relax

import benchkill
from benchkill.analysis.verifier import verify_kills
from benchkill.cli.cmd_fuzz import KNOWN_FAILURE_FLAGS
from benchkill.cli.main import main
from benchkill.errors import BenchkillError
from benchkill.execution.pipeline import build_pipeline, lower_to_kill_input
from benchkill.fuzz.buildable import buildable_modules, check_vm_equivalence_in_child
from benchkill.fuzz.campaign import run_campaign
from benchkill.fuzz.lowered import lowered_modules
from benchkill.fuzz.properties import (
    KNOWN_FAILURES,
    FuzzMismatch,
    check_example,
    tvm_keeps_on_purpose,
)
from benchkill.relax.ops import ALLOC_STORAGE, ALLOC_TENSOR, get_op

from .. import scenarios

# Deterministic (and, by the "benchkill" profile of conftest.py, database-free), so CI
# runs the same examples every time.
CI = dict(
    deadline=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)


def parse(src: str) -> tvm.IRModule:
    return tvm.IRModule({"main": tvm.script.from_source(textwrap.dedent(src))})


# --- the generator ---------------------------------------------------------------------------


@settings(max_examples=15, **CI)
@given(lowered_modules())
def test_drawn_modules_are_well_formed_valid_and_typed_as_tvmscript_types_them(mod):
    relax.analysis.well_formed(mod)  # raises on the first violation, types included
    assert verify_kills(mod) == []  # pre-existing kills come after every use
    # Re-parsing infers every type from scratch: equal means the raw-built nodes are typed
    # exactly as TVM types them, and the printed reproducers parse back.  (TVMScript has
    # no syntax for two adjacent binding blocks: compare with the blocks merged.)
    reparsed = tvm.script.from_source(mod.script())
    tvm.ir.assert_structural_equal(reparsed, _merged_blocks(mod), map_free_vars=True)


def _merged_blocks(mod: tvm.IRModule) -> tvm.IRModule:
    """``mod`` as TVMScript parses it back: adjacent blocks of one kind merged, and a call's
    type that of its variable's annotation (the parser puts an annotation on both)."""

    def binding_as_parsed(binding):
        value = binding.value
        if isinstance(value, relax.If):
            branches = scope(value.true_branch), scope(value.false_branch)
            new_if = _rx_ffi.If(value.cond, *branches, None)
            _rx_ffi.UpdateType(new_if, value.ty)
            return _rx_ffi.VarBinding(binding.var, new_if, None)
        if isinstance(value, relax.Function):
            func = _rx_ffi.Function(
                value.params, scope(value.body), value.ret_ty, value.is_pure, value.attrs, None
            )
            return _rx_ffi.VarBinding(binding.var, func, None)
        if isinstance(value, relax.Call) and not tvm_ffi.structural_equal(binding.var.ty, value.ty):
            call = _ir_ffi.Call(
                binding.var.ty, value.op, value.args, value.attrs, value.ty_args, None
            )
            return _rx_ffi.VarBinding(binding.var, call, None)
        return binding

    def scope(seq):
        blocks = []  # [dataflow, bindings]
        for block in seq.blocks:
            dataflow = isinstance(block, relax.DataflowBlock)
            bindings = [binding_as_parsed(b) for b in block.bindings]
            if blocks and blocks[-1][0] == dataflow:
                blocks[-1][1].extend(bindings)
            else:
                blocks.append([dataflow, bindings])
        made = [
            (_rx_ffi.DataflowBlock if dataflow else _rx_ffi.BindingBlock)(bindings, None)
            for dataflow, bindings in blocks
        ]
        new_seq = _rx_ffi.SeqExpr(made, seq.body, None)
        _rx_ffi.UpdateType(new_seq, seq.ty)
        return new_seq

    main = mod["main"]
    func = _rx_ffi.Function(
        main.params, scope(main.body), main.ret_ty, main.is_pure, main.attrs, None
    )
    return tvm.IRModule(
        {
            **{gv: f for gv, f in mod.functions_items() if gv.name_hint != "main"},
            mod.get_global_var("main"): func,
        }
    )


def _if_depth(text: str) -> int:
    indents = [
        len(line) - len(line.lstrip())
        for line in text.splitlines()
        if line.lstrip().startswith("if ")
    ]
    return max(indents, default=0) // 4  # function body at 4 spaces: a top-level If is 1


FEATURES = {
    "If nested two deep": lambda t: _if_depth(t) >= 2,
    "tuple literal and TupleGetItem": lambda t: (
        re.search(r"= \(.*\)$", t, re.M) and re.search(r"= \w+\[\d\]$", t, re.M)
    ),
    "match_cast to the same type": lambda t: re.search(
        r': (R\.Tensor\(\(4,\), dtype="float32"\)) = R\.match_cast\(\w+, \1\)', t
    ),
    "match_cast refining an object": lambda t: "R.match_cast(o" in t,
    "symbolic match_cast": "R.Tensor((n,)",
    "trivial rebinding": lambda t: re.search(r"^\s+y\d+: .* = \w+$", t, re.M),
    "tensor constant": "= R.const(",
    "dtype constant": ": R.Any = R.dtype(",
    "shape value": "= R.shape([4])\n",
    "prim value": lambda t: re.search(r": T.int64 = \d$", t, re.M),
    "null value": "= R.null_value()",
    "storage reused by two tensors": lambda t: any(
        len(re.findall(rf"alloc_tensor\({s},", t)) >= 2
        for s in re.findall(r"(storage\d+): R.Any = ", t)
    ),
    "vm and memory allocators": lambda t: (
        "R.vm.alloc_storage" in t and "R.memory.alloc_storage" in t
    ),
    "pre-existing kill": lambda t: re.search(
        r"R\.(memory\.kill_tensor|memory\.kill_storage|"
        r"vm\.kill_object)\(",
        t,
    ),
    "extern call taking and returning objects": lambda t: re.search(
        r': R.Any = R.call_packed\("[\w.]+", o\d+', t
    ),
    "PrimFunc call": lambda t: re.search(r"\b(unary|binary)\(", t),
    "computed If condition": lambda t: re.search(r"^\s+if o\d+:", t, re.M),
    # the shapes of IR nobody here wrote (benchkill.fuzz.shapes)
    "call declared less specific": lambda t: re.search(
        r': R\.Tensor\(dtype="float32", ndim=1\) = R\.call_packed', t
    ),
    "tensor declared without shape or dtype": ": R.Tensor = ",
    "tensor allocation declared R.Any": lambda t: re.search(
        r": R\.Any = R\.(memory|vm)\.alloc_tensor\(", t
    ),
    "shape declared R.Shape(ndim=1)": ": R.Shape(ndim=1) = R.shape_of(",
    "pure extern call": "R.call_pure_packed(",
    "dataflow block": "with R.dataflow():",
    "local function": "@R.function(pure=False)",
    "If branch of another shape": "R.Tensor((8,)",
    "incomparable return annotation": 'dtype="float16"):',
    "symbolic variable CanonicalizeBindings infers": lambda t: re.search(
        r"R\.match_cast\((x|alloc\d+|r\d+|item\d+), R\.Tensor\(\(n,\)", t
    ),
    "symbolic variable used at run time": "R.shape([n])",
    "symbolic variable in a call's type": 'ty_args=(R.Tensor((n,), dtype="float32"),)',
}


def test_the_generator_reaches_every_feature():
    seen: set[str] = set()

    @settings(max_examples=500, **CI)
    @given(lowered_modules())
    def collect(mod):
        text = mod["main"].script()
        for name, test in FEATURES.items():
            hit = test in text if isinstance(test, str) else test(text)
            if hit:
                seen.add(name)

    collect()
    assert sorted(set(FEATURES) - seen) == []


def test_unknown_generator_option():
    with pytest.raises(BenchkillError, match="unknown generator options: typo"):
        lowered_modules(typo=True)


# --- the properties -----------------------------------------------------------------------


@settings(max_examples=300, **CI)
@given(lowered_modules())
def test_benchkill_equals_tvm_and_its_kills_verify(mod):
    check_example(mod)


@pytest.fixture(scope="module")
def lowered_if() -> tvm.IRModule:
    return scenarios.lowered_if()


def _bindings(seq) -> list:
    return [b for block in seq.blocks for b in block.bindings]


def _allocated(bindings, ops) -> list[str]:
    return [b.var.name for b in bindings if getattr(b.value, "op", None) in ops]


def test_missed_kills_tvm_keeps_on_purpose_are_those_at_or_after_an_if(lowered_if):
    # The lowered input, named as TVM's lowering names it: top level, storage/tensor for y
    # then the If, then storage/tensor for r; one storage/tensor in each branch.
    top = _bindings(lowered_if["main"].body)
    at = next(i for i, b in enumerate(top) if isinstance(b.value, relax.If))
    storage_op, tensor_op = get_op(ALLOC_STORAGE[0]), get_op(ALLOC_TENSOR[0])
    (storage_before,) = _allocated(top[:at], [storage_op])
    (tensor_before,) = _allocated(top[:at], [tensor_op])
    (storage_after,) = _allocated(top[at + 1 :], [storage_op])
    branches = top[at].value.true_branch, top[at].value.false_branch
    in_branches = [name for seq in branches for name in _allocated(_bindings(seq), [storage_op])]
    assert len(in_branches) == 2

    tvm_out = relax.transform.KillAfterLastUse()(lowered_if)
    missed = verify_kills(tvm_out, expect_complete=True)
    # the tensor the If reads, the If's result and the storage after it: at or after the If
    assert [v.variable for v in missed] == [tensor_before, top[at].var.name, storage_after]
    assert all(tvm_keeps_on_purpose(tvm_out, v) for v in missed)
    # On the input, the missed kills not explained are exactly those TVM's pass makes.
    before = verify_kills(lowered_if, expect_complete=True)
    unexplained = {v.variable for v in before if not tvm_keeps_on_purpose(lowered_if, v)}
    killed = set(re.findall(r"R\.memory\.kill_\w+\((\w+)\)", tvm_out["main"].script()))
    assert unexplained == killed == {storage_before, *in_branches}


# --- buildable programs on the VM ---------------------------------------------------------


@pytest.mark.slow
@settings(max_examples=3, **CI)
@given(buildable_modules())
def test_buildable_programs_give_the_same_outputs_with_every_kill_variant(example):
    mod, inputs = example
    check_vm_equivalence_in_child(mod, inputs)  # tvm, benchkill, beyond, None x both modes


# --- what the fuzzer found --------------------------------------------------------------------


def test_adjacent_binding_blocks_are_merged_as_tvm_merges_them():
    """Found by the fuzzer (then as ``--split-blocks``), fixed in the pass: TVM's pass
    merges adjacent binding blocks; TVMScript cannot show the difference."""
    t4 = relax.TensorType((4,), "float32")
    x, a = relax.Var("x", t4), relax.Var("a", t4)
    call = relax.Call(relax.ExternFunc("f"), [x], ty_args=[t4])
    blocks = [
        relax.BindingBlock([relax.VarBinding(a, call)]),
        relax.BindingBlock([relax.VarBinding(relax.Var("b", t4), call)]),
    ]
    seq = relax.SeqExpr(blocks, a)
    _rx_ffi.UpdateType(seq, t4)
    mod = tvm.IRModule({"main": relax.Function([x], seq, t4, is_pure=False)})
    expected, actual = relax.transform.KillAfterLastUse()(mod), benchkill.KillAfterLastUse()(mod)
    assert len(expected["main"].body.blocks) == 1
    tvm.ir.assert_structural_equal(actual, expected, map_free_vars=True)


@pytest.mark.xfail(
    strict=True,
    reason="a pre-existing kill on one path stops both passes from "
    "killing on the other path, also with tvm_compatible=False (reported; "
    "`benchkill fuzz --branch-kills` finds it)",
)
def test_beyond_mode_kills_on_the_path_without_the_pre_existing_kill():
    mod = parse("""
        @R.function(pure=False)
        def main(x: R.Tensor((4,), "float32"), c: R.Prim("bool")):
            a = R.call_packed("f", x, ty_args=(R.Tensor((4,), "float32"),))
            b = R.call_packed("f", a, ty_args=(R.Tensor((4,), "float32"),))
            if c:
                R.memory.kill_tensor(a)
                r = b
            else:
                r = b
            return r
    """)
    assert verify_kills(mod) == []  # a valid input
    beyond = benchkill.KillAfterLastUse(tvm_compatible=False)(mod)
    assert verify_kills(beyond, expect_complete=True) == []  # a is never killed if not c


SYMBOLIC = """
    @R.function(pure=False)
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        n = T.int64()
        m = R.match_cast(x, R.Tensor((n,), "float32"))
        y = R.call_packed("test.benchkill.fuzz.identity", m, ty_args=(R.Tensor((4,), "float32"),))
        R.memory.kill_tensor(m)
        return x
"""


@tvm.register_global_func("test.benchkill.fuzz.identity", override=True)
def _identity(value):
    return value


def test_tvm_turns_a_kill_of_a_symbolic_match_cast_into_a_kill_of_the_parameter():
    """Found by the fuzzer (TVM 0.27 and benchkill alike): CanonicalizeBindings infers
    n = 4, so ``m`` becomes a trivial alias of ``x`` and the valid kill of ``m`` (its own
    VM register) turns into a kill of the parameter ``x``, which is then returned: the
    function returns None instead of its argument."""
    mod = parse(SYMBOLIC)
    assert verify_kills(mod) == []
    for out in (
        relax.transform.KillAfterLastUse()(mod),
        benchkill.KillAfterLastUse()(mod),
        benchkill.KillAfterLastUse(tvm_compatible=False)(mod),
    ):
        assert [(v.rule, v.variable) for v in verify_kills(out)] == [
            ("kill-param", "x"),
            ("kill-output", "x"),
        ]
    x = tvm.runtime.tensor(np.arange(4, dtype="float32"))
    results = {}
    for kill in (None, "tvm"):
        ex = relax.build(
            mod, "llvm", relax_pipeline=build_pipeline(kill=kill), exec_mode="bytecode"
        )
        results[kill] = relax.VirtualMachine(ex, tvm.cpu())["main"](x)
    np.testing.assert_array_equal(results[None].numpy(), x.numpy())
    assert results["tvm"] is None


def test_tvm_turns_a_kill_of_a_tuple_copy_into_a_kill_of_the_parameter():
    """Found by the fuzzer (TVM 0.27 and benchkill alike): ``(pair[0], pair[1])`` is a
    new tuple with its own register, but CanonicalizeBindings replaces it by the parameter
    ``pair``, so its pre-existing kill becomes a kill of the parameter."""
    mod = parse("""
        @R.function(pure=False)
        def main(x: R.Tensor((4,), "float32"), pair: R.Tuple(R.Tensor((4,), "float32"), R.Any)):
            a = pair[0]
            b = pair[1]
            t = (a, b)
            y = R.call_packed("f", t, ty_args=(R.Tensor((4,), "float32"),))
            R.vm.kill_object(t)
            return y
    """)
    # The verifier already sees t as pair (it follows CanonicalizeBindings' aliases)...
    assert [(v.rule, v.variable) for v in verify_kills(mod)] == [("kill-param", "t")]
    for out in (relax.transform.KillAfterLastUse()(mod), benchkill.KillAfterLastUse()(mod)):
        # ... and the passes write it so: R.vm.kill_object(pair).
        assert "R.vm.kill_object(pair)" in out["main"].script()
        assert [(v.rule, v.variable) for v in verify_kills(out)] == [("kill-param", "pair")]


@pytest.mark.slow
def test_tvm_storage_planner_reuses_a_branch_storage_after_the_if():
    """Found by the buildable fuzzing (TVM 0.27's default pipeline, no kill involved):
    StaticPlanBlockMemory allocates a storage in an If branch and reuses it after the If,
    so the lowered IR is ill-formed and the VM segfaults when the branch did not run.
    buildable_modules() skips such programs; the child process turns the crash into a
    FuzzMismatch instead of killing the caller."""
    mod = scenarios.PLANNER_BUG
    with pytest.raises(Exception, match="Var storage is not defined"):
        relax.analysis.well_formed(lower_to_kill_input(mod))
    inputs = [np.ones(4, "float32"), np.array(True)]
    with pytest.raises(FuzzMismatch, match=r"died of SIGSEGV at kill=None exec_mode=bytecode"):
        check_vm_equivalence_in_child(mod, inputs)


# --- campaigns and the command line ---------------------------------------------------------


def test_known_failures_are_documented_and_have_cli_flags():
    assert set(KNOWN_FAILURES) == set(KNOWN_FAILURE_FLAGS) == {"string_vars", "branch_kills"}


def test_a_campaign_shrinks_a_failure_to_a_minimal_reproducer():
    def no_kills(mod):  # a property that fails on any pre-existing kill
        if "kill" in mod.script():
            raise FuzzMismatch("a kill")

    result = run_campaign(200, seed_value=1, check=no_kills)
    assert not result.ok and result.failure == "a kill"
    body = result.reproducer.split("def main", 1)[1].splitlines()[2:-1]
    assert len(body) == 2 and "R.call_packed" in body[0] and "kill" in body[1]
    reparsed = tvm.script.from_source(result.reproducer)
    assert verify_kills(reparsed) == []


def test_campaign_arguments_are_checked():
    with pytest.raises(BenchkillError, match="examples must be a positive integer"):
        run_campaign(0)


def test_fuzz_command(capsys):
    assert main(["fuzz", "--repeats", "25", "--seed", "4"]) == 0
    out = capsys.readouterr().out
    assert re.fullmatch(r"fuzz: 25 lowered modules \(seed 4\) in [\d.]+ s: no mismatch\n", out)
    assert main(["fuzz", "--repeats", "many"]) == 2
    assert "expected an integer" in capsys.readouterr().err
    assert main(["fuzz", "--repeats", "0"]) == 2


def test_tvm_kills_constants_its_canonicalization_made_dataflow_vars():
    """Found by the fuzzer (TVM 0.27): CanonicalizeBindings makes ``dt`` and ``item``, used
    only inside their dataflow block, DataflowVars, and then misses its plan to inline the
    constants they are bound to (the plan is keyed by the old variables); the KillInserter,
    for which only a variable bound to a tensor constant itself is a constant, then kills
    them.  benchkill gives TVM's output in every mode (the fallback plans on TVM's
    canonicalized function); verify_kills reports the kills."""
    mod = parse("""
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            with R.dataflow():
                dt = R.dtype("float32")
                c = R.const(1.0, "float32")
                t = (dt, c)
                pair = (R.const(0.5, "float32"),)
                item = pair[0]
                u = (item,)
                R.output(dt, c, t, pair, item, u)
            return x
    """)
    expected = relax.transform.KillAfterLastUse()(mod)
    text = expected["main"].script()
    assert "R.vm.kill_object(dt)" in text and "R.memory.kill_tensor(item)" in text
    assert [v.rule for v in verify_kills(expected)] == ["kill-constant", "kill-constant"]
    tvm.ir.assert_structural_equal(benchkill.KillAfterLastUse()(mod), expected)
    beyond = benchkill.KillAfterLastUse(tvm_compatible=False)(mod)
    tvm.ir.assert_structural_equal(beyond, expected)
