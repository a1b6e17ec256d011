"""ONNX models in: a file read with ``onnx``, imported with TVM's ``from_onnx``.

:func:`from_onnx_file` reads the model (a regular file of at most :data:`MAX_ONNX_BYTES`,
checked with ``onnx.checker``), makes the dynamic dimensions ``dynamic`` symbolic (the
:mod:`.dynamic` spelling, by graph input name: ``x:0``, ``x:0<=16``; the input's size in
the file is the example size), and imports it with ``tvm.relax.frontend.onnx.from_onnx``
(initializers become tensor constants); an upper bound becomes the function's
``tir_var_upper_bound``.  A dimension the file already names (``dim_param``) stays
symbolic and takes its example size from ``sizes`` (by that name; 1 if not given).

The run's inputs are ``inputs`` (a mapping from graph input name to array) where given,
else made up deterministically: floating-point inputs from a standard normal (seed 0),
integer inputs zeros (a valid index for any embedding), booleans False.  Its expected
outputs are onnxruntime's on the same inputs (CPU execution provider).

Needs onnx and onnxruntime (``pip install -e '.[models]'``); a corrupt or truncated
file, a model the checker, onnxruntime or TVM's frontend rejects, or an unknown dynamic
dimension is one line of BenchkillError.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from benchkill.errors import BenchkillError, one_line
from benchkill.inputs.dynamic import DynamicDim, check_inputs, parse_all
from benchkill.inputs.entry_points import require
from benchkill.inputs.workload_spec import Workload
from benchkill.relax.text import check_regular_file

#: An ONNX file larger than this is refused unread (protobuf's own limit is 2 GiB).
MAX_ONNX_BYTES = 2 << 30


def read_onnx(path: str | Path) -> Any:
    """The checked ``onnx.ModelProto`` of the file ``path``."""
    onnx = require("onnx", "an ONNX model")
    check_regular_file(path, MAX_ONNX_BYTES, "an ONNX model")
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise BenchkillError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        model = onnx.load_from_string(data)
    except Exception as exc:  # noqa: BLE001 - protobuf's DecodeError and others
        raise BenchkillError(
            f"{path} is not an ONNX model (corrupt or truncated?): {one_line(exc)}"
        ) from None
    try:
        onnx.checker.check_model(model)
    except Exception as exc:  # noqa: BLE001 - the checker's ValidationError and others
        raise BenchkillError(f"{path}: the ONNX checker rejects it: {one_line(exc)}") from None
    if not model.graph.node:
        raise BenchkillError(f"{path}: the ONNX model has an empty graph (truncated?)")
    return model


def _graph_inputs(model: Any) -> list[Any]:
    initializers = {t.name for t in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in initializers]


def from_onnx_file(
    path: str | Path,
    *,
    dynamic: Iterable[str | DynamicDim] | str | None = None,
    inputs: Mapping[str, np.ndarray] | None = None,
    sizes: Mapping[str, int] | None = None,
) -> Workload:
    """The workload of the ONNX file ``path`` (module docstring)."""
    onnx = require("onnx", "an ONNX model")
    ort = require("onnxruntime", "an ONNX model's reference outputs")
    model = read_onnx(path)
    graph_inputs = _graph_inputs(model)
    shapes: dict[str, tuple[int, ...]] = {}
    dtypes: dict[str, np.dtype] = {}
    for value in graph_inputs:
        tensor = value.type.tensor_type
        dtypes[value.name] = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type))
        shapes[value.name] = tuple(
            d.dim_value if d.HasField("dim_value") else int((sizes or {}).get(d.dim_param, 1))
            for d in tensor.shape.dim
        )
    dims = parse_all(dynamic)
    check_inputs(dims, shapes)
    by_input = {v.name: v for v in graph_inputs}
    for dim in dims:
        axis = by_input[dim.input].type.tensor_type.shape.dim[dim.axis]
        axis.Clear()
        axis.dim_param = dim.name
    args = _arguments(graph_inputs, shapes, dtypes, inputs, path)
    try:
        runtime = ort.InferenceSession(
            model.SerializeToString(), providers=["CPUExecutionProvider"]
        )
        expected = runtime.run(None, dict(zip(shapes, args, strict=True)))
    except Exception as exc:  # noqa: BLE001 - onnxruntime's errors are many kinds
        raise BenchkillError(f"{path}: onnxruntime cannot run it: {one_line(exc)}") from None
    mod = _import(model, path)
    bounds = {d.name: d.max for d in dims if d.max is not None}
    if bounds:
        main = mod["main"].with_attr("tir_var_upper_bound", bounds)
        mod.update_func(mod.get_global_var("main"), main)
    kind = ", ".join(str(d) for d in dims) or "as in the file"
    return Workload(
        name=Path(path).name,
        mod=mod,
        inputs=tuple(args),
        input_shapes=shapes,
        expected=tuple(np.asarray(e) for e in expected),
        reference="onnxruntime",
        description=f"ONNX model {Path(path).name} (dynamic: {kind})",
    )


def _arguments(
    graph_inputs: list[Any],
    shapes: dict[str, tuple[int, ...]],
    dtypes: dict[str, np.dtype],
    given: Mapping[str, np.ndarray] | None,
    path: Any,
) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    given = dict(given or {})
    unknown = sorted(set(given) - set(shapes))
    if unknown:
        raise BenchkillError(f"{path}: the model has no input {unknown[0]!r}")
    args = []
    for value in graph_inputs:
        name, shape, dtype = value.name, shapes[value.name], dtypes[value.name]
        if name in given:
            array = np.asarray(given[name])
            if array.dtype != dtype or array.ndim != len(shape):
                raise BenchkillError(
                    f"{path}: input {name!r} must be {dtype} with {len(shape)} axes"
                )
        elif np.issubdtype(dtype, np.floating):
            array = rng.standard_normal(shape).astype(dtype)
        else:
            array = np.zeros(shape, dtype)
        args.append(np.ascontiguousarray(array))
    return args


def _import(model: Any, path: Any) -> Any:
    from tvm.relax.frontend.onnx import from_onnx

    try:
        return from_onnx(model, keep_params_in_input=False)
    except Exception as exc:  # noqa: BLE001 - the frontend's errors are many kinds
        raise BenchkillError(
            f"{path}: TVM's ONNX frontend rejected the model: {type(exc).__name__}: {one_line(exc)}"
        ) from None
