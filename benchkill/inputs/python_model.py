"""A model from the user's own Python: an entry point that returns a Relax module and inputs.

The protocol of ``package.module:function`` (:func:`from_python`): the function takes no
arguments and returns either

``(mod, inputs)``
    ``mod`` a ``tvm.IRModule`` holding a high-level Relax function ``main`` (anything
    ``relax.build`` accepts: tensor constants, symbolic shapes, subfunctions, ``If``);
    ``inputs`` the values of ``main``'s parameters: a sequence in parameter order, or a
    mapping from parameter name to value;
a mapping with the keys
    ``"mod"`` and ``"inputs"`` (as above), and optionally ``"func"`` (the function to run,
    default ``"main"``), ``"params"`` (weights: a mapping from parameter name to array,
    bound into the module as constants with ``relax.transform.BindParams``, so that
    ``inputs`` gives only the other parameters) and ``"expected"`` (the outputs the run
    must give, flattened depth-first, checked within the tolerance of
    :mod:`benchkill.execution.outputs`).

A value is a numpy array (a ``tvm.runtime.Tensor`` is converted) for a tensor parameter,
and a Python ``bool``, ``int`` or ``float`` for a ``R.Prim`` parameter (such as an ``If``
condition).  Weights are given either way: as trailing parameters in ``inputs`` (what
``relax.frontend.nn``'s ``export_tvm`` gives: ``[*inputs, *weights]``), through
``"params"``, or already in the module as constants.  Each array must have its
parameter's dtype, rank and static sizes; a symbolic size takes the array's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from benchkill.errors import BenchkillError
from benchkill.inputs.entry_points import call_entry_point
from benchkill.inputs.workload_spec import Workload


def from_python(spec: str) -> Workload:
    """The workload the entry point ``spec`` (``package.module:function``) returns
    (protocol in the module docstring)."""
    return workload_of(call_entry_point(spec), spec)


def workload_of(value: Any, name: str) -> Workload:
    """The :class:`~benchkill.inputs.workload_spec.Workload` of what an entry point returned."""
    import tvm
    from tvm import relax

    func, params, expected = "main", None, ()
    if isinstance(value, Mapping):
        missing = [k for k in ("mod", "inputs") if k not in value]
        unknown = sorted(set(value) - {"mod", "inputs", "func", "params", "expected"})
        if missing or unknown:
            bad = f"has no {missing[0]!r}" if missing else f"has an unknown key {unknown[0]!r}"
            raise BenchkillError(f"{name} returned a mapping that {bad}")
        mod, inputs = value["mod"], value["inputs"]
        func, params = value.get("func", "main"), value.get("params")
        expected = tuple(np.asarray(e) for e in value.get("expected", ()))
    elif isinstance(value, (tuple, list)) and len(value) == 2:
        mod, inputs = value
    else:
        raise BenchkillError(
            f"{name} returned a {type(value).__name__}; expected (mod, inputs) or a mapping "
            "with 'mod' and 'inputs'"
        )
    if not isinstance(mod, tvm.IRModule):
        raise BenchkillError(f"{name} returned a {type(mod).__name__} as mod, not a tvm.IRModule")
    fn = mod[func] if func in [gv.name_hint for gv in mod.get_global_vars()] else None
    if not isinstance(fn, relax.Function):
        raise BenchkillError(f"{name}: the module has no Relax function {func!r}")
    if params:
        if not isinstance(params, Mapping):
            raise BenchkillError(f"{name}: 'params' must map parameter names to arrays")
        known = {p.name for p in fn.params}
        for key in params:
            if key not in known:
                raise BenchkillError(f"{name}: 'params' names {key!r}, not a parameter of {func}")
        bound = {k: tvm.runtime.tensor(np.ascontiguousarray(v)) for k, v in params.items()}
        mod = relax.transform.BindParams(func, bound)(mod)
        fn = mod[func]
    args = check_inputs(fn, inputs, name)
    shapes = {p.name: a.shape for p, a in zip(fn.params, args, strict=True) if hasattr(a, "shape")}
    return Workload(
        name=name,
        mod=mod,
        inputs=tuple(args),
        func=func,
        input_shapes=shapes,
        expected=expected,
        reference="the entry point's expected outputs" if expected else "",
        description=f"the module of {name}",
    )


def _value(value: Any) -> Any:
    import tvm

    if isinstance(value, tvm.runtime.Tensor):
        return value.numpy()
    if isinstance(value, np.generic):
        return value.item()
    return value


def check_inputs(fn: Any, inputs: Any, name: str) -> list[Any]:
    """``inputs`` (a sequence, or a mapping by parameter name) as the list of ``fn``'s
    arguments, each checked against its parameter's type; BenchkillError naming the first
    that does not fit."""
    import tvm
    from tvm import relax

    params = list(fn.params)
    if isinstance(inputs, Mapping):
        names = [p.name for p in params]
        missing = [n for n in names if n not in inputs]
        extra = [k for k in inputs if k not in names]
        if missing or extra:
            what = f"no value for {missing[0]!r}" if missing else f"no parameter {extra[0]!r}"
            raise BenchkillError(f"{name}: inputs give {what}")
        inputs = [inputs[n] for n in names]
    if not isinstance(inputs, Sequence) or isinstance(inputs, (str, bytes)):
        raise BenchkillError(f"{name}: inputs must be a sequence or a mapping")
    if len(inputs) != len(params):
        raise BenchkillError(
            f"{name}: {len(inputs)} inputs for the {len(params)} parameters of the function"
        )
    out = []
    for param, raw in zip(params, inputs, strict=True):
        value, ty, where = _value(raw), param.ty, f"{name}: input {param.name!r}"
        if isinstance(ty, relax.TensorType):
            if not isinstance(value, np.ndarray):
                raise BenchkillError(f"{where} is a {type(value).__name__}, not a numpy array")
            if ty.dtype is not None and str(ty.dtype) != str(value.dtype):
                raise BenchkillError(f"{where} is {value.dtype}, the parameter {ty.dtype}")
            if ty.ndim >= 0 and ty.ndim != value.ndim:
                raise BenchkillError(f"{where} has {value.ndim} axes, the parameter {ty.ndim}")
            dims = getattr(ty.shape, "values", None) or ()
            for axis, dim in enumerate(dims):
                if isinstance(dim, tvm.tirx.IntImm) and int(dim) != value.shape[axis]:
                    raise BenchkillError(
                        f"{where} has size {value.shape[axis]} on axis {axis}, the parameter "
                        f"{int(dim)}"
                    )
        elif isinstance(ty, tvm.ir.PrimType):
            if not isinstance(value, (bool, int, float)):
                raise BenchkillError(f"{where} is a {type(value).__name__}, not a scalar")
        out.append(value)
    return out
