"""ONNX files in: read and checked, dynamic dimensions by graph input name, TVM's frontend,
onnxruntime's outputs as the reference; bad files one line.  Needs onnx and onnxruntime."""

from __future__ import annotations

import os

import numpy as np
import pytest

from benchkill.errors import BenchkillError
from benchkill.inputs.onnx_import import from_onnx_file, read_onnx
from tests.frameworks import require

require("onnxruntime")
onnx = require("onnx")
from onnx import TensorProto, helper  # noqa: E402


def _model(batch=2):
    """``y = relu(x @ W) + 1``, ``x`` of shape (batch, 4), W an initializer."""
    w = np.arange(12, dtype="float32").reshape(4, 3) / 10
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "W"], ["h"]),
            helper.make_node("Relu", ["h"], ["r"]),
            helper.make_node("Add", ["r", "one"], ["y"]),
        ],
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 3])],
        [
            helper.make_tensor("W", TensorProto.FLOAT, [4, 3], w.ravel().tolist()),
            helper.make_tensor("one", TensorProto.FLOAT, [], [1.0]),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.fixture
def model_file(tmp_path):
    path = tmp_path / "tiny.onnx"
    onnx.save(_model(), str(path))
    return path


def _symbols(mod):
    import tvm

    return [d for d in mod["main"].params[0].ty.shape.values if not isinstance(d, tvm.tirx.IntImm)]


def test_static_import_and_onnxruntime_reference(model_file):
    w = from_onnx_file(model_file)
    assert _symbols(w.mod) == [] and w.inputs[0].shape == (2, 4)
    weights = np.arange(12, dtype="float32").reshape(4, 3) / 10
    np.testing.assert_allclose(w.expected[0], np.maximum(w.inputs[0] @ weights, 0) + 1, rtol=1e-6)
    assert w.reference == "onnxruntime"


def test_dynamic_batch_with_and_without_a_bound(model_file):
    w = from_onnx_file(model_file, dynamic="x:0<=8")
    (symbol,) = _symbols(w.mod)
    assert symbol.name == "x_0"
    assert dict(w.mod["main"].attrs["tir_var_upper_bound"]) == {"x_0": 8}
    w = from_onnx_file(model_file, dynamic="x:0=batch")
    assert [s.name for s in _symbols(w.mod)] == ["batch"]
    assert "tir_var_upper_bound" not in (w.mod["main"].attrs or {})


def test_given_inputs_are_used(model_file):
    x = np.ones((5, 4), "float32")
    w = from_onnx_file(model_file, dynamic="x:0", inputs={"x": x})
    assert w.inputs[0].shape == (5, 4) and w.expected[0].shape == (5, 3)


def test_bad_files_and_dimensions_are_one_line(model_file, tmp_path):
    data = model_file.read_bytes()
    cases = {}
    (tmp_path / "corrupt.onnx").write_bytes(b"\xff\xfe not protobuf \x00" * 10)
    cases[tmp_path / "corrupt.onnx"] = "corrupt or truncated"
    (tmp_path / "truncated.onnx").write_bytes(data[: len(data) // 2])
    cases[tmp_path / "truncated.onnx"] = "corrupt or truncated|checker|empty graph"
    (tmp_path / "empty.onnx").write_bytes(b"")
    cases[tmp_path / "empty.onnx"] = "checker|empty graph"
    os.mkfifo(tmp_path / "fifo.onnx")
    cases[tmp_path / "fifo.onnx"] = "not a regular file"
    cases["/dev/zero"] = "not a regular file"
    cases[tmp_path] = "Is a directory"
    cases[tmp_path / "missing.onnx"] = "No such file"
    for path, message in cases.items():
        with pytest.raises(BenchkillError, match=message) as info:
            read_onnx(path)
        assert "\n" not in str(info.value), path
    with pytest.raises(BenchkillError, match="no input 'y' \\(inputs: x\\)"):
        from_onnx_file(model_file, dynamic="y:0")
    with pytest.raises(BenchkillError, match="has 2 axes"):
        from_onnx_file(model_file, dynamic="x:5")
    with pytest.raises(BenchkillError, match="no input 'z'"):
        from_onnx_file(model_file, inputs={"z": np.ones(2)})


def test_a_file_beyond_the_size_limit_is_refused_unread(model_file, monkeypatch):
    from benchkill.inputs import onnx_import

    monkeypatch.setattr(onnx_import, "MAX_ONNX_BYTES", 10)
    with pytest.raises(BenchkillError, match="larger than 10 for an ONNX model"):
        read_onnx(model_file)
