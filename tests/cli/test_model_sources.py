"""A model's front doors (``--model``, ``--torch``, ``--onnx`` with ``--dynamic``) in
``memory``, ``profile`` and ``equivalence`` and in ``benchkill.load_model``: one spelling,
the VM's outputs checked against the framework's, bad input one line and exit 2."""

from __future__ import annotations

import numpy as np
import pytest

import benchkill
from benchkill.cli.main import main
from benchkill.errors import BenchkillError
from tests.conftest import entry_point_package
from tests.frameworks import require

#: Entry points: a Relax module of the user's own Python, a PyTorch model, and ones
#: that go wrong.
ENTRY_POINTS = """
import numpy as np
import tvm
from tvm import relax


def _mod():
    bb = relax.BlockBuilder()
    n = tvm.tirx.Var("n", "int64")
    x = relax.Var("x", relax.TensorType((n, 4), "float32"))
    with bb.function("main", [x]):
        y = bb.emit(relax.op.multiply(x, relax.const(2.0, "float32")))
        bb.emit_func_output(bb.emit(relax.op.add(y, relax.const(1.0, "float32"))))
    return bb.get()


X = np.arange(12, dtype="float32").reshape(3, 4)


def relax_model():
    return {"mod": _mod(), "inputs": [X], "expected": [X * 2 + 1]}


def relax_model_wrong_expected():
    return {"mod": _mod(), "inputs": [X], "expected": [X * 2 + 1.5]}


def torch_model():
    import torch

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    return net, (torch.randn(3, 4, generator=torch.Generator().manual_seed(0)),)


def wrong_thing():
    return 42


def raises():
    raise ValueError("the user's bug")
"""


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A module of entry points in the current directory; its name."""
    return entry_point_package(tmp_path, monkeypatch, ENTRY_POINTS, "front_door")


def _onnx_file(path):
    onnx = require("onnx")
    require("onnxruntime")
    from onnx import TensorProto, helper

    w = np.arange(12, dtype="float32").reshape(4, 3) / 10
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["h"]), helper.make_node("Relu", ["h"], ["y"])],
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor("W", TensorProto.FLOAT, [4, 3], w.ravel().tolist())],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


MEMORY = ["--kill", "none", "tvm", "--no-trace", "--exec-mode", "bytecode"]


def test_memory_of_a_python_entry_point_checks_its_expected_outputs(package, capsys):
    assert main(["memory", "--model", f"{package}:relax_model", *MEMORY]) == 0
    out = capsys.readouterr().out
    assert f"{package}:relax_model" in out and "outputs match" in out
    assert main(["memory", "--model", f"{package}:relax_model_wrong_expected", *MEMORY]) == 1
    out = capsys.readouterr().out
    assert "MISMATCH" in out and "output 0 differs" in out


def test_memory_profile_and_equivalence_of_a_pytorch_model(package, capsys):
    require("torch")
    spec = ["--torch", f"{package}:torch_model", "--dynamic", "input:0"]
    assert main(["memory", *spec, *MEMORY]) == 0
    out = capsys.readouterr().out
    assert "outputs match PyTorch eager" in out
    assert main(["profile", *spec, "--repeats", "1"]) == 0
    assert "bindings, CPU microseconds per binding" in capsys.readouterr().out
    assert main(["equivalence", *spec, "--stages", "lowered"]) == 0
    out = capsys.readouterr().out
    assert "0 mismatch(es)" in out and "lowered" in out


def test_memory_of_an_onnx_file_with_a_bounded_dynamic_batch(tmp_path, capsys):
    path = _onnx_file(tmp_path / "tiny.onnx")
    argv = ["memory", "--onnx", str(path), "--dynamic", "x:0<=8", *MEMORY]
    assert main(argv) == 0
    assert "outputs match onnxruntime" in capsys.readouterr().out


def test_load_model_is_the_same_front_door(package, tmp_path):
    w = benchkill.load_model(model=f"{package}:relax_model")
    assert w.expected and w.func == "main"
    with pytest.raises(BenchkillError, match="exactly one of model, torch, onnx"):
        benchkill.load_model(model=f"{package}:relax_model", onnx="x.onnx")
    with pytest.raises(BenchkillError, match="dynamic dimensions apply to torch and onnx"):
        benchkill.load_model(model=f"{package}:relax_model", dynamic="x:0")


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--model", "{p}:wrong_thing"], "returned a int"),
        (["--model", "{p}:raises"], "raised ValueError: the user's bug"),
        (["--model", "broken_{p}:relax_model"], "raised RuntimeError: broken at import"),
        (["--model", "no_such_pkg_xyz:f"], "no module named 'no_such_pkg_xyz'"),
        (["--model", "{p}:relax_model", "--dynamic", "x:0"], "dynamic dimensions apply"),
        (["--model", "{p}:relax_model", "--func", "main"], "not to --model"),
        (["--model", "{p}:relax_model", "--quick"], "--quick applies to --workload"),
        (["--workload", "chain", "--dynamic", "x:0"], "--dynamic applies to --torch"),
        (["--model", "{p}:relax_model", "--onnx", "a.onnx"], "not allowed with argument"),
    ],
)
def test_bad_model_input_is_one_line_and_exit_2(package, argv, fragment, capsys):
    argv = [a.format(p=package) for a in argv]
    assert main(["memory", *argv, *MEMORY]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and fragment in err[0], err


def test_equivalence_takes_paths_or_a_model_not_both(package, capsys):
    assert main(["equivalence"]) == 2
    assert "give PATHs or one of --model" in capsys.readouterr().err
    assert main(["equivalence", "x.py", "--model", f"{package}:relax_model"]) == 2
    assert "not both" in capsys.readouterr().err


def test_memory_explains_which_case_a_model_is_in(package, capsys):
    """The trace splits each variant's peak: storage sized by an unbounded batch, which
    kills free under the naive allocator."""
    require("torch")
    spec = ["--torch", f"{package}:torch_model", "--dynamic", "input:0"]
    argv = ["memory", *spec, "--kill", "none", "tvm", "--memory-cfg", "naive"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    why = out.split("why the peak, bytecode", 1)[1]
    assert "kill=none: peak" in why and "kill=tvm: peak" in why
    assert why.count("case: ") == 2 and "planned" in why and "pooled free" in why
