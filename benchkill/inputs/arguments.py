"""Arguments for the entry function of any high-level Relax module, from its signature.

:func:`module_arguments` makes one value per parameter: a tensor of its shape (floats
normal with a fixed seed, integers and booleans zero) or a scalar for a ``R.Prim``
parameter, so that a module read from a file can be built and run without hand-written
inputs.  Symbolic dimensions and scalar parameters take their values from ``values``
(``{"n": 16, "cond": True}``); a scalar without one gets a default (True, 1 or 1.0).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from benchkill.errors import BenchkillError

#: Largest tensor made for a parameter (bytes): a typo in a dimension must not fill memory.
MAX_ARGUMENT_BYTES = 4 << 30


def _scalar(dtype: str, given: Any, name: str) -> Any:
    if given is None:
        return True if dtype == "bool" else 1.0 if dtype.startswith("float") else 1
    try:
        if dtype == "bool":
            text = str(given).lower()
            if text not in ("0", "1", "true", "false"):
                raise ValueError(text)
            return text in ("1", "true")
        return float(given) if dtype.startswith("float") else int(given)
    except ValueError:
        raise BenchkillError(f"parameter {name!r} is a {dtype}, not {given!r}") from None


def module_arguments(
    mod: Any, func: str = "main", values: Mapping[str, Any] | None = None
) -> tuple[list[Any], dict[str, tuple[int, ...]], dict[str, Any]]:
    """Arguments of ``mod[func]``, the shapes of its tensor parameters (for
    :func:`benchkill.estimate_memory`) and the value used for each name of ``values``
    or defaulted scalar."""
    import tvm
    from tvm import relax

    values = dict(values or {})
    fn = mod[func] if func in [gv.name_hint for gv in mod.get_global_vars()] else None
    if not isinstance(fn, relax.Function):
        raise BenchkillError(f"module has no Relax function {func!r}")
    rng = np.random.default_rng(0)
    args: list[Any] = []
    shapes: dict[str, tuple[int, ...]] = {}
    used: dict[str, Any] = {}
    for param in fn.params:
        ty = param.ty
        if isinstance(ty, tvm.ir.PrimType):
            value = _scalar(str(ty.dtype), values.get(param.name), param.name)
            used[param.name] = value
            args.append(value)
            continue
        if not isinstance(ty, relax.TensorType) or not isinstance(ty.shape, relax.ShapeExpr):
            raise BenchkillError(
                f"parameter {param.name!r} of {func!r} is not a tensor of known rank or a "
                "scalar; benchkill cannot make an argument for it"
            )
        dims = []
        for dim in ty.shape.values:
            if isinstance(dim, tvm.tirx.IntImm):
                dims.append(int(dim.value))
                continue
            name = str(dim)
            if name not in values:
                raise BenchkillError(
                    f"dimension {name!r} of parameter {param.name!r} is symbolic: "
                    f"give it a value with --set {name}=N"
                )
            dims.append(_scalar("int64", values[name], name))
            used[name] = dims[-1]
            if dims[-1] < 0:
                raise BenchkillError(
                    f"dimension {name!r} of parameter {param.name!r} is {dims[-1]}: "
                    "a dimension cannot be negative"
                )
        dtype = str(ty.dtype)
        nbytes = int(np.prod(dims)) * np.dtype(dtype).itemsize
        if nbytes > MAX_ARGUMENT_BYTES:
            raise BenchkillError(f"parameter {param.name!r} would take {nbytes:,} bytes")
        if dtype.startswith("float"):
            array = rng.standard_normal(dims).astype(dtype)
        else:
            array = np.zeros(dims, dtype)
        args.append(array)
        shapes[param.name] = tuple(dims)
    unknown = sorted(set(values) - set(used))
    if unknown:
        raise BenchkillError(f"--set names nothing in {func!r}'s signature: {', '.join(unknown)}")
    return args, shapes, used
