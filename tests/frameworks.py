"""The optional frameworks of the real-model tests (the ``models`` extra).

A test module that needs torch (or onnx, onnxruntime) imports it through
:func:`require`: without the package it is skipped, except in CI (``CI=true``), where a
missing extra fails loudly so that CI really runs these tests.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from typing import Any

import pytest

MODELS_EXTRA = ("torch", "torchvision")


def absent(*names: str) -> list[str]:
    """Those of ``names`` that cannot be imported (found by name, nothing imported)."""
    return [name for name in names if importlib.util.find_spec(name) is None]


def skip_without(*names: str) -> None:
    """Inside a test: skip it when one of ``names`` is not installed, or fail in CI."""
    missing = absent(*names)
    if missing:
        message = f"{' and '.join(missing)} not installed (pip install -e '.[models]')"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


def pretend_installed(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    """Make ``importlib.util.find_spec`` report ``names`` as installed, for tests of what
    benchkill lists (cases, help) when they are, which import none of them."""
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return object() if name in names else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


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
