"""PyTorch models in: ``torch.export``, then TVM's ``from_exported_program``.

The protocol of a PyTorch entry point ``package.module:function`` (:func:`from_torch`):
the function takes no arguments and returns ``(module, example_inputs)``: a
``torch.nn.Module`` and the positional arguments of its ``forward``, a tensor or a tuple
of tensors.  The module is put in eval mode and exported with
``torch.export.export(module, example_inputs, dynamic_shapes=...)``, the dynamic
dimensions named by ``forward``'s parameter names (:mod:`.dynamic`: ``x:0``, ``x:0<=16``),
then imported with ``tvm.relax.frontend.torch.from_exported_program``.  Its weights
become tensor constants of ``main`` (``params="constants"``), or trailing parameters of
``main`` whose values follow the inputs (``params="inputs"``, TVM's
``keep_params_as_input``; batch-norm statistics stay constants either way).  The run's
inputs are the example inputs, and its expected outputs are the module's own eager outputs
on them (flattened depth-first), which the VM's outputs are checked against
(:mod:`benchkill.execution.outputs`).

Needs torch (``pip install -e '.[models]'``); every failure of the entry point, of
``torch.export`` or of TVM's frontend is one line of BenchkillError.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from typing import Any

import numpy as np

from benchkill.errors import BenchkillError, one_line
from benchkill.inputs.dynamic import DynamicDim, check_inputs, parse_all
from benchkill.inputs.entry_points import call_entry_point, require
from benchkill.inputs.workload_spec import Workload

PARAMS = ("constants", "inputs")


def from_torch(
    spec: str, *, dynamic: Iterable[str | DynamicDim] | str | None = None, params: str = "constants"
) -> Workload:
    """The workload of the PyTorch entry point ``spec`` (module docstring)."""
    torch = require("torch", "a PyTorch model")
    value = call_entry_point(spec)
    if not (isinstance(value, (tuple, list)) and len(value) == 2):
        raise BenchkillError(
            f"{spec} returned a {type(value).__name__}; expected (torch.nn.Module, example inputs)"
        )
    module, inputs = value
    if isinstance(inputs, torch.Tensor):
        inputs = (inputs,)
    return export_torch(module, inputs, dynamic=dynamic, params=params, name=spec)


def _flatten(value: Any, out: list[np.ndarray]) -> list[np.ndarray]:
    """The tensors of a model's output, depth-first (dict values in their order)."""
    import torch

    if isinstance(value, torch.Tensor):
        out.append(value.detach().cpu().numpy())
    elif isinstance(value, dict):
        for item in value.values():
            _flatten(item, out)
    elif isinstance(value, (tuple, list)):
        for item in value:
            _flatten(item, out)
    elif value is not None:
        out.append(np.asarray(value))
    return out


def export_torch(
    module: Any,
    inputs: Any,
    *,
    dynamic: Iterable[str | DynamicDim] | str | None = None,
    params: str = "constants",
    name: str | None = None,
) -> Workload:
    """The workload of ``module`` (a ``torch.nn.Module``) on the example ``inputs`` (a
    tuple of tensors), exported with the dynamic dimensions ``dynamic``."""
    torch = require("torch", "a PyTorch model")
    name = name or type(module).__name__
    if params not in PARAMS:
        raise BenchkillError(f"params must be one of {', '.join(PARAMS)}, not {params!r}")
    if not isinstance(module, torch.nn.Module):
        raise BenchkillError(f"{name}: a {type(module).__name__}, not a torch.nn.Module")
    if not isinstance(inputs, (tuple, list)) or not all(
        isinstance(t, torch.Tensor) for t in inputs
    ):
        raise BenchkillError(f"{name}: the example inputs must be a tensor or a tuple of tensors")
    inputs = tuple(inputs)
    module = module.eval()
    names = _input_names(module, len(inputs), name)
    dims = parse_all(dynamic)
    check_inputs(dims, {n: tuple(t.shape) for n, t in zip(names, inputs, strict=True)})
    with torch.no_grad():
        try:
            expected = _flatten(module(*inputs), [])
        except Exception as exc:  # noqa: BLE001 - the user's model may raise anything
            raise BenchkillError(
                f"{name}: the model raised {type(exc).__name__}: {one_line(exc)}"
            ) from None
    try:
        program = torch.export.export(module, inputs, dynamic_shapes=_dynamic_shapes(names, dims))
    except Exception as exc:  # noqa: BLE001 - torch.export's errors are many kinds
        raise BenchkillError(f"{name}: torch.export failed: {one_line(exc)}") from None
    mod = _import_program(program, params == "inputs", name)
    args = [t.detach().cpu().numpy() for t in inputs]
    if params == "inputs":
        from tvm.relax.frontend import detach_params

        mod, weights = detach_params(mod)
        args += [w.numpy() for w in weights.get("main", ())]
    shapes = {p.name: a.shape for p, a in zip(mod["main"].params, args, strict=False)}
    kind = ", ".join(str(d) for d in dims) or "static"
    return Workload(
        name=name,
        mod=mod,
        inputs=tuple(args),
        input_shapes=shapes,
        expected=tuple(expected),
        reference="PyTorch eager",
        description=f"torch.export of {name} ({kind})",
    )


def _input_names(module: Any, count: int, name: str) -> list[str]:
    """The parameter names of ``forward`` that the ``count`` example inputs fill."""
    try:
        signature = inspect.signature(module.forward)
    except (TypeError, ValueError):
        return [f"arg{i}" for i in range(count)]
    names = [
        p.name
        for p in signature.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    if len(names) < count:
        raise BenchkillError(f"{name}: {count} example inputs, forward takes {len(names)}")
    return names[:count]


def _dynamic_shapes(names: list[str], dims: tuple[DynamicDim, ...]) -> dict[str, Any] | None:
    """``torch.export``'s ``dynamic_shapes``: one ``Dim`` per name, shared by the axes
    given that name."""
    from torch.export import Dim

    if not dims:
        return None
    by_name: dict[str, Any] = {}
    shapes: dict[str, Any] = {n: None for n in names}
    for dim in dims:
        if dim.name not in by_name:
            by_name[dim.name] = Dim(dim.name, max=dim.max) if dim.max else Dim(dim.name)
        shapes[dim.input] = {**(shapes[dim.input] or {}), dim.axis: by_name[dim.name]}
    return shapes


def _import_program(program: Any, keep_params: bool, name: str) -> Any:
    from tvm.relax.frontend.torch import from_exported_program

    try:
        return from_exported_program(program, keep_params_as_input=keep_params)
    except Exception as exc:  # noqa: BLE001 - the frontend's errors are many kinds
        raise BenchkillError(
            f"{name}: TVM's PyTorch frontend rejected the model: {type(exc).__name__}: "
            f"{one_line(exc)}"
        ) from None
