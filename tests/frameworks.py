"""The optional frameworks of the real-model tests (the ``models`` extra).

A test module that needs torch (or onnx, onnxruntime) imports it through
:func:`require`: without the package it is skipped, except in CI (``CI=true``), where a
missing extra fails loudly so that CI really runs these tests.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

import pytest


def require(*names: str) -> Any:
    """Import each of ``names`` (the last one is returned); skip the module without them,
    or fail in CI."""
    module = None
    for name in names:
        try:
            module = importlib.import_module(name)
        except ImportError:
            if os.environ.get("CI") == "true":
                raise
            pytest.skip(
                f"{name} is not installed (pip install -e '.[models]')", allow_module_level=True
            )
    return module
