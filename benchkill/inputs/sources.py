"""Where a model comes from: one spelling for the command line and the Python API.

Three front doors, the same in ``benchkill memory``, ``profile`` and ``equivalence``
(``--model``, ``--torch``, ``--onnx`` with ``--dynamic``) and in :func:`load_model`:

``model="package.module:function"``
    the user's own Python: the function returns a high-level ``IRModule`` and its inputs
    (the protocol of :mod:`benchkill.inputs.python_model`);
``torch="package.module:function"``
    the function returns a ``torch.nn.Module`` and example inputs, exported with
    ``torch.export`` and imported with TVM's PyTorch frontend
    (:mod:`benchkill.inputs.torch_import`);
``onnx="FILE"``
    an ONNX file, imported with TVM's ONNX frontend (:mod:`benchkill.inputs.onnx_import`).

``dynamic`` (PyTorch and ONNX) names the dynamic dimensions, ``x:0`` or ``x:0<=16``
(:mod:`benchkill.inputs.dynamic`); a Python entry point states its own shapes.  The
workload carries the framework's outputs on its inputs (``expected``; for ``model``, the
entry point's ``"expected"`` if it gives them), which measurements check the VM's
outputs against (:mod:`benchkill.execution.outputs`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from benchkill.errors import BenchkillError

if TYPE_CHECKING:
    from benchkill.inputs.dynamic import DynamicDim
    from benchkill.inputs.workload_spec import Workload

#: The front doors, by keyword of :func:`load_model` (and option of the command line).
MODEL_SOURCES = ("model", "torch", "onnx")


def load_model(
    *,
    model: str | None = None,
    torch: str | None = None,
    onnx: str | None = None,
    dynamic: Iterable[str | DynamicDim] | str | None = None,
    params: str = "constants",
) -> Workload:
    """The workload of a model from one front door (exactly one of ``model``, ``torch``,
    ``onnx``).

    Parameters
    ----------
    model : str, optional
        ``package.module:function`` returning ``(IRModule, inputs)`` or a mapping with
        ``"mod"`` and ``"inputs"`` (:mod:`benchkill.inputs.python_model`).
    torch : str, optional
        ``package.module:function`` returning ``(torch.nn.Module, example_inputs)``.
    onnx : str, optional
        The path of an ONNX file.
    dynamic : str or sequence of str, optional
        Dynamic dimensions (``torch`` and ``onnx`` only): ``x:0``, ``x:0<=16``,
        ``x:0=batch<=16``.
    params : {"constants", "inputs"}
        ``torch`` only: weights as tensor constants of ``main`` or as its trailing
        parameters.

    Returns
    -------
    benchkill.Workload
        The high-level module, its inputs, and the framework's outputs on them.

    Raises
    ------
    benchkill.BenchkillError
        A bad spelling, an entry point that does not import, raises or returns the wrong
        thing, a bad file, a model a frontend rejects, or a framework that is not
        installed (the message says what to install).
    """
    given = {k: v for k, v in (("model", model), ("torch", torch), ("onnx", onnx)) if v}
    if len(given) != 1:
        names = ", ".join(given) if given else "none"
        raise BenchkillError(f"give exactly one of model, torch, onnx (given: {names})")
    ((kind, spec),) = given.items()
    if kind == "model":
        if dynamic:
            raise BenchkillError(
                "dynamic dimensions apply to torch and onnx; a Python entry point's module "
                "states its own shapes"
            )
        from benchkill.inputs.python_model import from_python

        return from_python(spec)
    if kind == "torch":
        from benchkill.inputs.torch_import import from_torch

        return from_torch(spec, dynamic=dynamic, params=params)
    from benchkill.inputs.onnx_import import from_onnx_file

    return from_onnx_file(spec, dynamic=dynamic)
