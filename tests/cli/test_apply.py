"""``benchkill apply``: the pass on a module file from the command line."""

from __future__ import annotations

from collections import Counter

import pytest

import benchkill
from benchkill.cli.main import main

from ..passes.cases import NullValueBefore

#: the R.null_value() scenario of tests/passes/cases.py, as a file would hold it
MODULE = NullValueBefore.script()


def test_apply_prints_summary_and_writes_tvmscript(tmp_path, capsys):
    src = tmp_path / "mod.py"
    src.write_text(MODULE)
    out = tmp_path / "out.py"
    assert main(["apply", str(src), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "inserted 1 kill_tensor, 1 kill_storage, 0 kill_object" in err
    assert main(["verify", str(out)]) == 0  # the written file parses back, kills are sound
    assert "R.memory.kill_storage(storage)" in out.read_text()


def test_apply_legacy_kills_the_null_value(tmp_path, capsys):
    src = tmp_path / "mod.py"
    src.write_text(MODULE)
    assert main(["apply", str(src), "--kill", "legacy"]) == 0
    captured = capsys.readouterr()
    assert "R.vm.kill_object(shape_heap)" in captured.out
    assert "1 kill_object" in captured.err


#: A module TVM's KillAfterLastUse rejects (its kill names a constant, not a variable).
KILL_OF_A_CONSTANT = """
@I.ir_module
class Module:
    @R.function(pure=False)
    def main(x: R.Tensor([16, 32], "float32")):
        _k = R.memory.kill_tensor(R.const(1, "float32"))
        return x
"""


@pytest.mark.parametrize("variant", ["tvm", "benchkill"])
def test_a_module_the_pass_rejects_is_one_line_and_exit_2(tmp_path, capsys, variant):
    src = tmp_path / "bad.py"
    src.write_text(KILL_OF_A_CONSTANT)
    assert main(["apply", str(src), "--kill", variant]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    assert "kill_tensor" in err, err
    if variant == "tvm":
        assert err.startswith("benchkill: error: the pass rejected the module: Check failed")
    assert captured.out == ""


def test_apply_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    broken = tmp_path / "broken.py"
    broken.write_text("@I.ir_module\nclass M:\n    def main(:\n")
    for argv in (
        ["apply", str(tmp_path / "missing.py")],
        ["apply", str(broken)],
        ["apply", "--generate", "chain", "many"],
        ["apply", "--generate", "chain", "0"],
        ["apply", "--generate", "nosuch", "3"],
        ["apply", "--generate", "chain", "3", "--kill", "fastest"],
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("benchkill: error:") and "\n" not in err
        if "chain" in argv and "--kill" not in argv:
            assert "argument --generate: N " in err, err


def _kill_calls(mod):
    """Operator name -> number of its calls in ``mod``'s Relax functions."""
    from tvm import relax

    from benchkill.relax.ops import op_name

    counts = Counter()

    def visit(expr):
        if isinstance(expr, relax.Call):
            counts[op_name(expr)] += 1

    for _, fn in mod.functions_items():
        if isinstance(fn, relax.Function):
            relax.analysis.post_order_visit(fn, visit)
    return counts


def test_apply_generated_module_counts_the_kills_of_every_operator(capsys):
    from benchkill.inputs.families import generate
    from benchkill.relax.ops import KILLS

    assert main(["apply", "--generate", "chain", "3", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    calls = _kill_calls(benchkill.KillAfterLastUse()(generate("chain", 3)))
    assert calls[KILLS[0]] > 0 and calls[KILLS[1]] > 0
    counts = ", ".join(f"{calls[op]} {op.rsplit('.', 1)[-1]}" for op in KILLS)
    assert f"benchkill: inserted {counts} in " in captured.err
