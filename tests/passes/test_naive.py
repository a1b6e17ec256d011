"""The naive port beyond the Before/Expected table: pass contexts and generated modules."""

from __future__ import annotations

import pytest
import tvm
from tvm import relax

from benchkill.inputs.families import FAMILIES, generate
from benchkill.passes import NaiveKillAfterLastUse


def _same_as_tvm(mod: tvm.IRModule) -> tvm.IRModule:
    after = NaiveKillAfterLastUse()(mod)
    expected = relax.transform.KillAfterLastUse()(mod)
    tvm.ir.assert_structural_equal(after, expected, map_free_vars=True)
    return after


def test_canonicalization_runs_whatever_the_pass_context():
    mod = generate("mixed", 60, seed=1)
    with tvm.transform.PassContext(opt_level=0, disabled_pass=["CanonicalizeBindings"]):
        after = _same_as_tvm(mod)
    # the generated trivial rebindings are gone, as TVM's canonicalization removes them
    assert _rebindings(mod) > 0
    assert _rebindings(after) == 0


def _rebindings(mod: tvm.IRModule) -> int:
    """How many bindings of ``main`` (outside If branches) bind a bare variable."""
    return sum(
        isinstance(b, relax.VarBinding) and isinstance(b.value, relax.Var)
        for block in mod["main"].body.blocks
        for b in block.bindings
    )


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("seed", [0, 5])
def test_equals_tvm_on_generated_family(family, seed):
    after = _same_as_tvm(generate(family, 40, seed))
    assert "kill" in after.script()
