"""benchkill.KillAfterLastUse as a pass object: errors, use in a Sequential, a fresh process.

The Before/Expected scenarios are in ``cases.py`` (run by ``test_before_expected.py``)."""

from __future__ import annotations

import pytest
import tvm
from tvm import relax
from tvm.script import ir as I
from tvm.script import relax as R

import benchkill
from benchkill.errors import BenchkillError

from .cases import IfBefore


def test_preexisting_kill_of_constant_is_a_benchkill_error():
    @I.ir_module
    class Before:
        @R.function(pure=False)
        def main(x: R.Tensor([4], "float32")):
            k = R.const(1.0, "float32")
            y = R.call_packed("f", x, k, ty_args=(R.Tensor([4], "float32"),))
            _ = R.memory.kill_tensor(k)
            return y

    with pytest.raises(tvm.error.InternalError):  # TVM's own pass rejects it too
        relax.transform.KillAfterLastUse()(Before)
    with pytest.raises(BenchkillError, match="kill"):
        benchkill.KillAfterLastUse()(Before)


def test_not_an_irmodule_is_a_benchkill_error():
    with pytest.raises(BenchkillError, match="IRModule"):
        benchkill.KillAfterLastUse()("not a module")


def test_non_normalized_kill_argument_is_a_benchkill_error():
    x = relax.Var("x", relax.TensorType((4,), "float32"))
    kill = relax.Call(tvm.ir.Op.get("relax.memory.kill_tensor"), [relax.Tuple([x])])
    bb = relax.BlockBuilder()
    with bb.function("main", [x], pure=False):
        bb.emit(kill)
        bb.emit_func_output(x)
    with pytest.raises(BenchkillError, match="non-normalized"):
        benchkill.KillAfterLastUse()(bb.get())


def test_returns_a_relax_function_pass_usable_in_sequential():
    mod = IfBefore
    pass_ = benchkill.KillAfterLastUse()
    assert isinstance(pass_, tvm.ir.transform.Pass)
    out = tvm.transform.Sequential([relax.transform.Normalize(), pass_])(mod)
    reference = relax.transform.KillAfterLastUse()(relax.transform.Normalize()(mod))
    tvm.ir.assert_structural_equal(out, reference, map_free_vars=True)


def test_pass_works_in_a_fresh_process_without_tvm_script():
    """The pass imports every TVM module it needs itself (other imports could hide a gap)."""
    import subprocess
    import sys

    code = """
import sys
from tvm import relax
print("tvm.relax.op.vm" in sys.modules)
import benchkill.passes
x = relax.Var("x", relax.TensorType((4,), "float32"))
bb = relax.BlockBuilder()
with bb.function("main", [x], pure=False):
    nv = bb.emit(relax.op.null_value())
    ty = relax.TensorType((4,), "float32")
    r = bb.emit(relax.Call(relax.ExternFunc("use"), [nv, x], ty_args=[ty]))
    bb.emit_func_output(r)
mod = benchkill.passes.KillAfterLastUse(exclude_null_value=False)(bb.get())
print(mod["main"].script().count("R.vm.kill_object"))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    already_imported, kills = out.stdout.split()
    assert already_imported == "False"  # else the check below would prove nothing
    assert int(kills) == 1
