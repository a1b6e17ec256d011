"""``benchkill apply``: the pass on a module file from the command line."""

from __future__ import annotations

from benchkill.cli.main import main

MODULE = """
from tvm.script import ir as I
from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function(pure=False)
    def main(x: R.Tensor([16, 32], "float32")):
        storage = R.memory.alloc_storage(R.shape([2048]), 0, "global", "uint8")
        y = R.memory.alloc_tensor(storage, 0, R.shape([16, 32]), "float32")
        shape_heap: R.Any = R.null_value()
        _dummy = R.call_packed("use_shape_heap", [shape_heap], ty_args=(R.Tuple,))
        z = R.add(x, y)
        return z
"""


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
    assert main(["apply", str(src), "--variant", "legacy"]) == 0
    captured = capsys.readouterr()
    assert "R.vm.kill_object(shape_heap)" in captured.out
    assert "1 kill_object" in captured.err


def test_apply_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    broken = tmp_path / "broken.py"
    broken.write_text("@I.ir_module\nclass M:\n    def main(:\n")
    for argv in (
        ["apply", str(tmp_path / "missing.py")],
        ["apply", str(broken)],
        ["apply", "--generate", "chain", "many"],
        ["apply", "--generate", "chain", "3", "--variant", "fastest"],
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("benchkill: error:") and "\n" not in err
