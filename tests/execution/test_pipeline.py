"""build_pipeline and the upstream null_value scenario, built on LLVM in both exec modes."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from tvm import relax
from tvm.script import ir as I
from tvm.script import relax as R

import benchkill
from benchkill.errors import BenchkillError
from benchkill.execution.pipeline import lower_to_kill_input
from benchkill.relax.ops import KILLS as KILL_OPS


@I.ir_module
class Small:
    @R.function
    def main(x: R.Tensor((1, 4), "float32")) -> R.Tensor((1, 4), "float32"):
        R.func_attr({"global_symbol": "main", "num_input": 1})
        y: R.Tensor((1, 4), "float32") = R.add(x, R.const(1.0, "float32"))
        z: R.Tensor((1, 4), "float32") = R.add(y, R.const(2.0, "float32"))
        return z


def _null_values_and_kills(func: relax.Function) -> tuple[list[str], list[str]]:
    """Names of the variables bound to R.null_value(), and of those an R.vm.kill_object
    targets."""
    null_op = tvm.ir.Op.get("relax.null_value")
    kill_op = tvm.ir.Op.get("relax.vm.kill_object")
    nulls, killed = [], []
    for block in func.body.blocks:
        for binding in block.bindings:
            value = binding.value
            if isinstance(value, relax.Call) and value.op.same_as(null_op):
                nulls.append(binding.var)
            elif isinstance(value, relax.Call) and value.op.same_as(kill_op):
                killed.append(value.args[0])
    return [n.name for n in nulls], [k.name for k in killed if any(k.same_as(n) for n in nulls)]


def _run_small(ex) -> None:
    """Run ``Small`` built as ``ex`` and check its output."""
    vm = relax.VirtualMachine(ex, tvm.cpu())
    x = np.arange(4, dtype="float32").reshape(1, 4)
    np.testing.assert_allclose(vm["main"](tvm.runtime.tensor(x)).numpy(), x + 3.0)


@pytest.fixture(scope="module")
def preoptimized(llvm_target):
    return relax.get_default_pipeline(llvm_target)(Small)


def test_reapplied_default_has_no_null_value_kill_and_builds_in_both_modes(
    preoptimized, llvm_target
):
    rekilled = benchkill.KillAfterLastUse()(preoptimized)
    nulls, killed = _null_values_and_kills(rekilled["main"])
    assert nulls and killed == []
    tvm.ir.assert_structural_equal(
        rekilled, relax.transform.KillAfterLastUse()(preoptimized), map_free_vars=True
    )
    for exec_mode in ("bytecode", "compiled"):
        _run_small(
            relax.build(rekilled, target=llvm_target, relax_pipeline="zero", exec_mode=exec_mode)
        )


def test_legacy_kills_null_value_and_compiled_build_fails(preoptimized, llvm_target):
    rekilled = benchkill.KillAfterLastUse(exclude_null_value=False)(preoptimized)
    nulls, killed = _null_values_and_kills(rekilled["main"])
    assert len(nulls) == 1 and killed == nulls  # VMShapeLower's shape heap
    _run_small(
        relax.build(rekilled, target=llvm_target, relax_pipeline="zero", exec_mode="bytecode")
    )
    with pytest.raises(tvm.error.InternalError):
        relax.build(rekilled, target=llvm_target, relax_pipeline="zero", exec_mode="compiled")


def _kill_calls(mod: tvm.IRModule) -> int:
    """Calls of the three kill operators in ``mod``'s ``main``."""
    kills = [tvm.ir.Op.get(name) for name in KILL_OPS]
    return sum(
        isinstance(b.value, relax.Call) and any(b.value.op.same_as(op) for op in kills)
        for block in mod["main"].body.blocks
        for b in block.bindings
    )


#: Small lowers to two storages (one per add) and a tensor in each; the second tensor is
#: returned: each kill step frees the two storages and the first tensor.
SMALL_KILLS = {"tvm": 3, "benchkill": 3, "beyond": 3, None: 0}


@pytest.mark.parametrize("exec_mode", ["bytecode", "compiled"])
@pytest.mark.parametrize("kill", ["tvm", "benchkill", "beyond", None])
def test_build_pipeline_builds_and_runs(kill, exec_mode, llvm_target):
    pipeline = benchkill.build_pipeline(kill=kill)
    assert _kill_calls(pipeline(Small)) == SMALL_KILLS[kill]
    ex = relax.build(Small, target=llvm_target, relax_pipeline=pipeline, exec_mode=exec_mode)
    if exec_mode == "bytecode":  # each kill is a call that clears its register
        assert ex.as_text().count("call  vm.builtin.null_value") == SMALL_KILLS[kill]
    _run_small(ex)


def test_build_pipeline_rejects_unknown_kill_variant():
    with pytest.raises(BenchkillError, match="unknown kill variant"):
        benchkill.build_pipeline(kill="fast")


@I.ir_module
class Branchy:
    """If/else over calls of a Relax subfunction: results are fresh tensors only kills free.

    (Tensors computed inline around an If are not used here: TVM 0.27's
    StaticPlanBlockMemory can reuse a storage allocated in one branch after the If,
    which crashes the default build; see benchkill's notes.)
    """

    @R.function
    def layer(x: R.Tensor((8, 8), "float32")) -> R.Tensor((8, 8), "float32"):
        y = R.multiply(x, R.const(0.5, "float32"))
        z = R.add(y, R.const(1.0, "float32"))
        return z

    @R.function
    def main(x: R.Tensor((8, 8), "float32"), flag: R.Prim("bool")) -> R.Tensor((8, 8), "float32"):
        cls = Branchy
        a = cls.layer(x)
        b = cls.layer(a)
        if flag:
            c = cls.layer(b)
            d = cls.layer(c)
            r = d
        else:
            e = cls.layer(b)
            r = e
        f = cls.layer(r)
        g = cls.layer(f)
        h = cls.layer(g)
        return h


@pytest.mark.parametrize("exec_mode", ["bytecode", "compiled"])
def test_beyond_kills_after_if_and_runs_like_no_kills(exec_mode, llvm_target):
    with llvm_target:
        lowered = lower_to_kill_input(Branchy)
    tvm_kills = relax.transform.KillAfterLastUse()(lowered)["main"].script().count("kill_")
    beyond = benchkill.KillAfterLastUse(tvm_compatible=False)(lowered)["main"].script()
    assert beyond.count("kill_") > tvm_kills

    x = np.random.default_rng(0).standard_normal((8, 8)).astype("float32")
    results = {}
    for kill in ("beyond", None):
        ex = relax.build(
            Branchy,
            target=llvm_target,
            relax_pipeline=benchkill.build_pipeline(kill=kill),
            exec_mode=exec_mode,
        )
        vm = relax.VirtualMachine(ex, tvm.cpu())
        results[kill] = [vm["main"](tvm.runtime.tensor(x), flag).numpy() for flag in (True, False)]
    for with_kills, without in zip(results["beyond"], results[None], strict=True):
        np.testing.assert_array_equal(with_kills, without)
