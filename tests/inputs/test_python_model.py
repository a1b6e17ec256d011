"""The Python entry point: ``package.module:function`` returning a Relax module and its
inputs (the documented protocol), and every way it can go wrong as one line."""

from __future__ import annotations

import numpy as np
import pytest

from benchkill.errors import BenchkillError
from benchkill.inputs.entry_points import call_entry_point, require
from benchkill.inputs.python_model import from_python
from tests.conftest import entry_point_package

MODULE = """
import numpy as np
import tvm
from tvm import relax


def _mod():
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((tvm.tirx.Var("n", "int64"), 4), "float32"))
    w = relax.Var("w", relax.TensorType((4,), "float32"))
    with bb.function("main", [x, w]):
        bb.emit_func_output(bb.emit(relax.op.add(x, w)))
    return bb.get()


X, W = np.ones((3, 4), "float32"), np.arange(4, dtype="float32")


def pair():
    return _mod(), [X, W]


def by_name():
    return {"mod": _mod(), "inputs": {"w": W, "x": X}, "expected": [X + W]}


def with_params():
    return {"mod": _mod(), "inputs": [X], "params": {"w": W}}


def wrong_type():
    return 42


def wrong_count():
    return _mod(), [X]


def wrong_dtype():
    return _mod(), [X.astype("float64"), W]


def wrong_size():
    return _mod(), [X, np.ones(5, "float32")]


def unknown_key():
    return {"mod": _mod(), "inputs": [X, W], "weights": {}}


def not_a_module():
    return "main", [X, W]


def raises():
    raise ValueError("the user's bug")


NOT_CALLABLE = 3
"""


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A module of entry points in the current directory; its name."""
    return entry_point_package(tmp_path, monkeypatch, MODULE, "user_model")


def test_a_pair_of_module_and_inputs(package):
    w = from_python(f"{package}:pair")
    assert w.func == "main" and len(w.inputs) == 2 and w.expected == ()
    assert dict(w.input_shapes) == {"x": (3, 4), "w": (4,)}


def test_a_mapping_by_parameter_name_with_expected_outputs(package):
    w = from_python(f"{package}:by_name")
    np.testing.assert_array_equal(w.inputs[0], np.ones((3, 4), "float32"))  # x first
    assert len(w.expected) == 1 and w.reference


def test_params_are_bound_as_constants(package):
    w = from_python(f"{package}:with_params")
    assert [p.name for p in w.mod["main"].params] == ["x"] and len(w.inputs) == 1


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("{p}:wrong_type", "returned a int; expected \\(mod, inputs\\)"),
        ("{p}:wrong_count", "1 inputs for the 2 parameters"),
        ("{p}:wrong_dtype", "input 'x' is float64, the parameter float32"),
        ("{p}:wrong_size", "input 'w' has size 5 on axis 0, the parameter 4"),
        ("{p}:unknown_key", "unknown key 'weights'"),
        ("{p}:not_a_module", "returned a str as mod"),
        ("{p}:raises", "raised ValueError: the user's bug"),
        ("{p}:missing", "has no 'missing'"),
        ("{p}:NOT_CALLABLE", "NOT_CALLABLE is a int"),
        ("broken_{p}:pair", "importing broken_.* raised RuntimeError: broken at import"),
        ("no_such_package_xyz.mod:f", "no module named 'no_such_package_xyz'"),
        ("not an entry point", "is not package.module:function"),
    ],
)
def test_bad_entry_points_are_one_line_errors(package, entry, message):
    with pytest.raises(BenchkillError, match=message) as info:
        from_python(entry.format(p=package))
    assert "\n" not in str(info.value)


def test_the_entry_point_is_called_with_no_arguments(package):
    mod, inputs = call_entry_point(f"{package}:pair")
    assert len(inputs) == 2


def test_a_missing_framework_says_what_to_install():
    with pytest.raises(
        BenchkillError, match=r"needs no_such_framework_xyz.*pip install -e '\.\[models\]'"
    ):
        require("no_such_framework_xyz", "a model")
