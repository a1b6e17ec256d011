"""The VM's outputs against the framework's own: a kill that frees a live buffer shows.

A model from PyTorch or ONNX (:mod:`benchkill.inputs.torch_import`,
:mod:`benchkill.inputs.onnx_import`) carries the outputs its framework computed on the
same inputs (:attr:`~benchkill.inputs.workload_spec.Workload.expected`); :func:`compare_outputs`
holds the VM's outputs to them within

``|vm - expected| <= ATOL_SCALE * max(1, max|expected|) + RTOL * |expected|``

per element, with the same shapes (dtypes may differ: a framework's int64 index may be
TVM's int32).  Why these numbers: TVM's LLVM kernels and PyTorch's or onnxruntime's sum in
other orders and fuse differently, so float32 results differ in their last bits; over the
registry's models (:mod:`benchkill.inputs.real_models`) the largest difference measured is
9.4e-7 of the output's largest magnitude (ResNet-18; docs/notes/real-models.md has the
figures), so ``ATOL_SCALE = 1e-4`` and ``RTOL = 1e-4`` leave a margin of 100x for deeper
models and other CPUs.  A
kill that frees a buffer still in use gives its memory to a later allocation, which
overwrites it with unrelated values: differences of the order of the values themselves,
thousands of times the tolerance (or a crash, which the measurement records).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

#: Relative tolerance, per element.
RTOL = 1e-4
#: Absolute tolerance, as a fraction of the expected output's largest magnitude (at least 1).
ATOL_SCALE = 1e-4


def compare_outputs(
    got: Sequence[Any],
    expected: Sequence[Any],
    *,
    rtol: float = RTOL,
    atol_scale: float = ATOL_SCALE,
    reference: str = "the reference",
) -> str | None:
    """None if ``got`` matches ``expected`` output by output (module docstring), else one
    line saying which output differs and by how much."""
    if len(got) != len(expected):
        return f"{len(got)} outputs, {reference} gives {len(expected)}"
    for i, (a, b) in enumerate(zip(got, expected, strict=True)):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return f"output {i} has shape {a.shape}, {reference} {b.shape}"
        if b.size == 0:
            continue
        if b.dtype == bool or a.dtype == bool:
            if not np.array_equal(a.astype(bool), b.astype(bool)):
                return f"output {i} differs from {reference}"
            continue
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        if not (np.isfinite(a64) == np.isfinite(b64)).all():
            return f"output {i}: non-finite values differ from {reference}"
        finite = np.isfinite(b64)
        scale = max(1.0, float(np.abs(b64[finite]).max(initial=0.0)))
        diff = np.abs(a64 - b64)[finite]
        allowed = atol_scale * scale + rtol * np.abs(b64[finite])
        if (diff > allowed).any():
            worst = float(diff.max())
            return (
                f"output {i} differs from {reference}: max |difference| {worst:.3g} "
                f"(largest |value| {scale:.3g}, tolerance {atol_scale:g} of it + rtol {rtol:g})"
            )
        if not (a64[~finite] == b64[~finite]).all():
            return f"output {i}: non-finite values differ from {reference}"
    return None


def max_difference(got: Sequence[Any], expected: Sequence[Any]) -> float:
    """The largest |difference| of any output, as a fraction of that output's largest
    magnitude (at least 1): the figure the tolerance above is chosen against."""
    worst = 0.0
    for a, b in zip(got, expected, strict=True):
        a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
        finite = np.isfinite(b64) & np.isfinite(a64)
        if not finite.any():
            continue
        scale = max(1.0, float(np.abs(b64[finite]).max()))
        worst = max(worst, float(np.abs(a64 - b64)[finite].max()) / scale)
    return worst
