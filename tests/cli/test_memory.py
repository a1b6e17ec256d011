"""``benchkill memory``: real builds and runs in child processes, side by side per kill
variant; bad input is one line and exit code 2."""

from __future__ import annotations

import pytest

from benchkill.cli.main import main
from benchkill.execution.peak import peak_supported
from tests.cli.test_commands import one_error_line

needs_peak = pytest.mark.skipif(not peak_supported(), reason="needs /proc/self/clear_refs")

MODULE = """
from tvm.script import relax as R
from tvm.script import tirx as T

@R.function
def main(x: R.Tensor(("n",), "float32"), cond: R.Prim("bool")):
    n = T.int64()
    a = R.add(x, x)
    b = R.multiply(a, a)
    c = R.add(b, x)
    return c
"""


@pytest.mark.slow
@needs_peak
def test_memory_of_the_if_workload_names_the_holders_and_compares_kills(capsys):
    argv = ["--workload", "if_chain", "--quick", "--kill", "tvm", "beyond", "--top", "3"]
    code = main(["memory", *argv])
    out = capsys.readouterr().out
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0].startswith("if_chain-8x4MiB") and "pooled allocator" in lines[0]
    header = next(line for line in lines if line.split() == ["tvm", "beyond"])
    table = lines[lines.index(header) : lines.index(header) + 10]
    measured = next(line for line in table if line.startswith("measured peak")).split()
    assert float(measured[-2]) > 2 * float(measured[-1])  # tvm keeps the chain, beyond not
    assert "at the peak, kill=tvm, bytecode: 10 buffers, 40.000 MiB (trace)" in out
    assert "no kill after the If at main binding" in out
    assert "the result of an If branch" in out  # what beyond cannot kill
    waste = lines[
        lines.index("waste per function (MiB x bindings held after last use), bytecode") + 2
    ]
    tvm_waste, beyond_waste = (float(v) for v in waste.split()[1:])
    assert waste.startswith("main") and beyond_waste < tvm_waste


@pytest.mark.slow
@needs_peak
def test_memory_of_a_file_with_a_symbolic_dimension(tmp_path, capsys):
    path = tmp_path / "mod.py"
    path.write_text(MODULE)
    argv = ["memory", str(path), "--set", "n=262144", "--kill", "none", "benchkill"]
    assert main([*argv, "--exec-mode", "compiled", "--no-trace"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{path} (n=262144, cond=True): function main")
    assert "compiled" in out.splitlines() and "(static)" in out
    measured = next(line for line in out.splitlines() if line.startswith("measured peak"))
    none, benchkill = (float(v) for v in measured.split()[-2:])
    # 1 MiB tensors: without kills a, b and c are live at the end; with them a's storage
    # is free when c is computed
    assert none == pytest.approx(3, abs=0.1) and benchkill == pytest.approx(2, abs=0.1)


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["--workload", "chain", "--set", "n=3"], "--set and --func apply to FILE"),
        (["{missing}"], "cannot read"),
        (["{file}"], "dimension 'n' of parameter 'x' is symbolic: give it a value with --set n=N"),
        (["{file}", "--set", "n"], "expected NAME=VALUE"),
        (["{file}", "--set", "m=1", "--set", "n=1"], "--set names nothing in 'main''s"),
        (["{file}", "--set", "n=4", "--func", "nope"], "no Relax function 'nope'"),
        (["--workload", "nope"], "invalid choice: 'nope'"),
        (["--workload", "chain", "--kill", "some"], "invalid choice: 'some'"),
        (["--workload", "chain", "--repeats", "0"], "must be at least 1"),
        (["{file}", "--quick"], "--quick applies to --workload, not to FILE"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, fragment, tmp_path, capsys):
    path = tmp_path / "mod.py"
    path.write_text(MODULE)
    argv = [a.format(missing=tmp_path / "nope.py", file=path) for a in argv]
    one_error_line(capsys, ["memory", *argv], fragment)
