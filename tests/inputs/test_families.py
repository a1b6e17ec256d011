"""Generated modules: deterministic, of the announced size, typed as TVMScript types them,
accepted by TVM's pass, and real enough to build and run on the VM."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from tvm import relax

from benchkill.cli.main import main
from benchkill.errors import BenchkillError
from benchkill.inputs.families import FAMILIES, generate, ops_for_bindings
from benchkill.relax.counting import count_bindings

SEEDED = ("fanout", "control", "mixed")  # families whose structure depends on the seed
#: families whose IR benchkill builds itself (the "model" family's comes out of TVM's passes)
BUILT = sorted(set(FAMILIES) - {"model"})


def test_families_are_documented_in_one_line():
    assert set(FAMILIES) == {
        "chain",
        "fanout",
        "planned",
        "shape_heap",
        "control",
        "mixed",
        "model",
    }
    assert all(text and "\n" not in text for text in FAMILIES.values())


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_deterministic_per_family_size_and_seed(family):
    a, b = generate(family, 30, seed=4), generate(family, 30, seed=4)
    tvm.ir.assert_structural_equal(a, b, map_free_vars=True)
    assert a.script() == b.script()


@pytest.mark.parametrize("family", SEEDED)
def test_seed_changes_the_structure(family):
    assert generate(family, 60, seed=1).script() != generate(family, 60, seed=2).script()


@pytest.mark.parametrize("family", BUILT)
@pytest.mark.parametrize("n_ops", [1, 30])
def test_well_formed_and_typed_as_the_parser_types_it(family, n_ops):
    mod = generate(family, n_ops, seed=n_ops)
    relax.analysis.well_formed(mod)  # raises on the first violation, types included
    # Printing and re-parsing infers every type from scratch: equal means every node we
    # built has exactly the type TVM's normalizer gives it.
    reparsed = tvm.script.from_source(mod.script())
    tvm.ir.assert_structural_equal(mod, reparsed, map_free_vars=True)


@pytest.mark.parametrize(
    "family, bindings",
    [
        ("chain", lambda n: 3 * n),
        ("fanout", lambda n: 3 * n),
        ("planned", lambda n: 4 + 2 * n),
        ("shape_heap", lambda n: 2 + 4 * n),
    ],
)
def test_binding_counts_of_regular_families(family, bindings):
    for n_ops in (1, 10, 123):
        assert count_bindings(generate(family, n_ops)) == bindings(n_ops)


def test_binding_counts_of_irregular_families_grow_with_n_ops():
    for family in ("control", "mixed"):
        small, large = (count_bindings(generate(family, n)) for n in (100, 400))
        assert 3 * 100 <= small < large
        # bindings per op stays in a narrow band, so sizes scale linearly
        assert 0.8 < (large / 400) / (small / 100) < 1.25


def test_count_bindings_includes_nested_if_branches():
    mod = generate("control", 80, seed=0)
    body = mod["main"].body
    top_level = sum(len(block.bindings) for block in body.blocks)
    has_if = any(isinstance(b.value, relax.If) for block in body.blocks for b in block.bindings)
    assert has_if
    assert count_bindings(mod) > top_level


def test_control_nests_ifs_and_uses_both_kinds_of_condition():
    text = generate("control", 400, seed=0).script()
    assert "if cond:" in text
    assert "not cond" in text
    # nesting: some If appears at a deeper indentation than the function body
    depths = {
        len(line) - len(line.lstrip())
        for line in text.splitlines()
        if line.lstrip().startswith("if ")
    }
    assert len(depths) >= 2


def test_mixed_contains_every_ingredient():
    text = generate("mixed", 400, seed=0).script()
    for needle in (
        "R.match_cast",
        "R.null_value()",
        "R.memory.kill_tensor",
        "R.const(",
        "R.shape([16, 16])",
        "if ",
        "vm.builtin.match_shape",
        "[0]",
    ):
        assert needle in text, needle


def test_ops_for_bindings_inverts_the_size():
    assert ops_for_bindings("chain", 3_000) == 1_000
    assert count_bindings(generate("shape_heap", ops_for_bindings("shape_heap", 4_002))) == 4_002
    n = ops_for_bindings("mixed", 5_000)
    assert abs(count_bindings(generate("mixed", n)) - 5_000) < 0.05 * 5_000


@pytest.mark.parametrize(
    "family, n_ops, seed",
    [
        ("nope", 3, 0),
        ("chain", 0, 0),
        ("chain", -2, 0),
        ("chain", 2.5, 0),
        ("chain", True, 0),
        ("chain", 3, "x"),
    ],
)
def test_bad_arguments_raise_benchkill_error(family, n_ops, seed):
    with pytest.raises(BenchkillError):
        generate(family, n_ops, seed)


@pytest.mark.parametrize("bindings", [0, -3, 2.5, True])
def test_ops_for_bindings_rejects_bad_sizes(bindings):
    with pytest.raises(BenchkillError, match="bindings must be a positive integer"):
        ops_for_bindings("chain", bindings)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_tvm_pass_accepts_every_family_and_inserts_kills(family):
    mod = generate(family, 30, seed=1)
    after = relax.transform.KillAfterLastUse()(mod)
    assert count_bindings(after) > count_bindings(mod)


# The default pipeline's steps after KillAfterLastUse (benchkill.pipeline uses the same list).
def _after_kill() -> tvm.transform.Pass:
    t = relax.transform
    return tvm.transform.Sequential(
        [t.LowerRuntimeBuiltin(), t.ComputePrimValue(), t.VMShapeLower(), t.AttachGlobalSymbol()]
    )


@pytest.mark.parametrize("family", ["chain", "shape_heap", "control", "mixed"])
def test_builds_and_runs_on_the_vm_after_tvm_kill_pass(family):
    mod = relax.transform.KillAfterLastUse()(generate(family, 8, seed=2))
    # compiled mode would fail on a kill of the R.null_value() shape heap
    ex = relax.build(mod, target="llvm", relax_pipeline=_after_kill(), exec_mode="compiled")
    vm = relax.VirtualMachine(ex, tvm.cpu())
    x = np.linspace(-1, 1, 256, dtype="float32").reshape(16, 16)
    args = [tvm.runtime.tensor(x)] + ([True] if family in ("control", "mixed") else [])
    out = vm["main"](*args).numpy()
    assert out.shape == (16, 16) and np.isfinite(out).all()
    if family in ("chain", "shape_heap"):  # eight times out = 0.5 * a + 1
        expected = x
        for _ in range(8):
            expected = expected * np.float32(0.5) + np.float32(1)
        np.testing.assert_allclose(out, expected, rtol=1e-6)


@pytest.mark.slow
def test_600k_bindings_without_recursion_limits():
    mod = generate("chain", 200_000)
    assert count_bindings(mod) == 600_000
    bindings = mod["main"].body.blocks[0].bindings
    assert bindings[-1].value.args[-1].same_as(mod["main"].body.body)


def test_cli_prints_parseable_tvmscript(capsys):
    assert main(["generate", "planned", "5", "--seed", "2"]) == 0
    text = capsys.readouterr().out
    assert "R.memory.alloc_storage" in text
    tvm.ir.assert_structural_equal(
        tvm.script.from_source(text), generate("planned", 5, seed=2), map_free_vars=True
    )


def test_cli_count_and_errors(capsys):
    assert main(["generate", "chain", "7", "--count"]) == 0
    assert capsys.readouterr().out.strip() == "21"
    assert main(["generate", "bogus", "3"]) == 2
    assert "unknown family 'bogus'" in capsys.readouterr().err
    assert main(["generate", "chain", "-1"]) == 2
    assert main(["generate", "chain", "three"]) == 2
