"""Dynamic dimensions of a model's inputs, spelled by input name and axis.

One spelling for the PyTorch and ONNX importers (:mod:`.torch_import`, :mod:`.onnx_import`)
and, later, the command line's ``--dynamic``:

``x:0``
    axis 0 of the input named ``x`` is dynamic, with no upper bound;
``x:0<=16``
    the same with the upper bound 16 (the function gets ``tir_var_upper_bound``, which lets
    ``StaticPlanBlockMemory`` plan the dimension's storage);
``x:0=batch`` / ``x:0=batch<=16``
    the dimension is named ``batch``: dimensions of several inputs given one name are one
    dimension (PyTorch's ``torch.export`` needs that when the model makes them equal,
    e.g. ``x:0=batch y:0=batch``).  Without a name the dimension is ``x_0``.

An input's name is the parameter name of ``forward`` (PyTorch) or the graph input's name
(ONNX); the axis counts from 0.  Bounds given to one name must agree.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from benchkill.errors import BenchkillError

_SPEC = re.compile(
    r"(?P<input>[^:\s]+):(?P<axis>\d+)(?:=(?P<name>[A-Za-z_]\w*))?(?:<=(?P<max>\d+))?"
)


@dataclass(frozen=True)
class DynamicDim:
    """Axis ``axis`` of input ``input`` is the dynamic dimension ``name``, at most
    ``max`` (None: unbounded)."""

    input: str
    axis: int
    name: str
    max: int | None = None

    def __str__(self) -> str:
        bound = "" if self.max is None else f"<={self.max}"
        return f"{self.input}:{self.axis}={self.name}{bound}"


def parse_dynamic(spec: str | DynamicDim) -> DynamicDim:
    """The :class:`DynamicDim` of one spelling (module docstring); BenchkillError if it
    is not one."""
    if isinstance(spec, DynamicDim):
        return spec
    match = _SPEC.fullmatch(spec.strip()) if isinstance(spec, str) else None
    if match is None:
        raise BenchkillError(
            f"dynamic dimension {spec!r} is not INPUT:AXIS, INPUT:AXIS<=MAX or "
            "INPUT:AXIS=NAME[<=MAX] (e.g. x:0 or x:0<=16)"
        )
    axis = int(match["axis"])
    bound = None if match["max"] is None else int(match["max"])
    if bound is not None and bound < 1:
        raise BenchkillError(f"dynamic dimension {spec!r}: the upper bound must be at least 1")
    name = match["name"] or re.sub(r"\W", "_", f"{match['input']}_{axis}")
    return DynamicDim(match["input"], axis, name, bound)


def parse_all(specs: Iterable[str | DynamicDim] | str | None) -> tuple[DynamicDim, ...]:
    """Every spelling of ``specs`` (a string may hold several, separated by commas or
    spaces), checked together: one axis given twice, or one name given two bounds, is an
    error."""
    if specs is None:
        return ()
    if isinstance(specs, str):
        specs = [s for s in re.split(r"[,\s]+", specs) if s]
    dims = tuple(parse_dynamic(s) for s in specs)
    seen: dict[tuple[str, int], DynamicDim] = {}
    bounds: dict[str, int | None] = {}
    for dim in dims:
        if (dim.input, dim.axis) in seen:
            raise BenchkillError(f"dynamic dimension {dim.input}:{dim.axis} is given twice")
        seen[(dim.input, dim.axis)] = dim
        if dim.name in bounds and bounds[dim.name] != dim.max:
            raise BenchkillError(f"dynamic dimension {dim.name} is given two upper bounds")
        bounds[dim.name] = dim.max
    return dims


def check_inputs(dims: Iterable[DynamicDim], shapes: dict[str, tuple[int, ...]]) -> None:
    """BenchkillError unless each dimension names an input of ``shapes`` (input name ->
    its example shape) and an axis it has, and its example size is within its bound."""
    for dim in dims:
        if dim.input not in shapes:
            names = ", ".join(shapes) or "none"
            raise BenchkillError(
                f"dynamic dimension {dim}: the model has no input {dim.input!r} (inputs: {names})"
            )
        shape = shapes[dim.input]
        if dim.axis >= len(shape):
            raise BenchkillError(
                f"dynamic dimension {dim}: input {dim.input!r} has {len(shape)} axes"
            )
        if dim.max is not None and shape[dim.axis] > dim.max:
            raise BenchkillError(
                f"dynamic dimension {dim}: the example size {shape[dim.axis]} is above the bound"
            )
