"""Every Before/Expected case of ``cases.py`` on benchkill's pass and on the naive port.

TVM's own pass is the oracle of the default mode: each case's default output is first
checked to be TVM's output, so a wrong expectation cannot pass unnoticed.
"""

from __future__ import annotations

import pytest
import tvm
from tvm import relax

from benchkill.passes import KillAfterLastUse, NaiveKillAfterLastUse

from .cases import CASES

#: implementation -> mode -> the pass (the naive port has no beyond mode)
PASSES = {
    "benchkill": {
        "default": KillAfterLastUse,
        "legacy": lambda: KillAfterLastUse(exclude_null_value=False),
        "beyond": lambda: KillAfterLastUse(tvm_compatible=False),
    },
    "naive": {
        "default": NaiveKillAfterLastUse,
        "legacy": lambda: NaiveKillAfterLastUse(exclude_null_value=False),
    },
}
RUNS = [(impl, mode) for impl, modes in PASSES.items() for mode in modes]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_default_expectation_is_tvms_output(case):
    actual = relax.transform.KillAfterLastUse()(case.before)
    tvm.ir.assert_structural_equal(actual, case.default, map_free_vars=True)


@pytest.mark.parametrize("impl, mode", RUNS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_output_equals_expected(case, impl, mode):
    after = PASSES[impl][mode]()(case.before)
    tvm.ir.assert_structural_equal(after, case.expected(mode), map_free_vars=True)


@pytest.mark.parametrize("impl", sorted(PASSES))
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_input_module_is_left_unchanged(case, impl):
    copy = tvm.script.from_source(case.before.script())
    PASSES[impl]["default"]()(case.before)
    tvm.ir.assert_structural_equal(case.before, copy, map_free_vars=True)
