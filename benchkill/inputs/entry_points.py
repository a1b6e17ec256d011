"""Entry points a user names as ``package.module:function``, and the optional frameworks.

:func:`call_entry_point` imports the module (the current directory first on the import
path, as ``python -c`` would find it), calls the function with no arguments and returns
what it returned; every failure (no such module, an import that raises, no such
function, a function that raises) is one line of BenchkillError.  :func:`require`
imports an optional framework (torch, torchvision, onnx, onnxruntime) or says in one line
what to install.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from typing import Any

from benchkill.errors import BenchkillError, one_line

#: What installs the optional frameworks of the real-model importers.
INSTALL_HINT = "pip install -e '.[models]'"

_ENTRY = re.compile(r"(?P<module>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*):(?P<function>[A-Za-z_]\w*)")


def require(module: str, what: str) -> Any:
    """The imported ``module``; BenchkillError naming what to install if it is missing
    (``what`` is the feature that needs it)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise BenchkillError(
            f"{what} needs {module}, which is not installed: {INSTALL_HINT}"
        ) from None


def _import(module: str, spec: str) -> Any:
    cwd = os.getcwd()
    added = cwd not in sys.path
    if added:
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(module)
    except Exception as exc:  # noqa: BLE001 - a user's module may raise anything
        if isinstance(exc, ModuleNotFoundError) and exc.name and module.startswith(exc.name):
            raise BenchkillError(f"{spec}: no module named {exc.name!r}") from None
        raise BenchkillError(
            f"{spec}: importing {module} raised {type(exc).__name__}: {one_line(exc)}"
        ) from None
    finally:
        if added and cwd in sys.path:
            sys.path.remove(cwd)


def load_entry_point(spec: Any) -> Any:
    """The function that ``spec`` (``"package.module:function"``) names, imported."""
    match = _ENTRY.fullmatch(spec) if isinstance(spec, str) else None
    if match is None:
        raise BenchkillError(f"entry point {spec!r} is not package.module:function")
    module = _import(match["module"], spec)
    function = getattr(module, match["function"], None)
    if function is None:
        raise BenchkillError(f"{spec}: module {match['module']} has no {match['function']!r}")
    if not callable(function):
        raise BenchkillError(f"{spec}: {match['function']} is a {type(function).__name__}")
    return function


def call_entry_point(spec: Any) -> Any:
    """What the function ``spec`` names returns when called with no arguments."""
    function = load_entry_point(spec)
    try:
        return function()
    except BenchkillError:
        raise
    except Exception as exc:  # noqa: BLE001 - a user's function may raise anything
        raise BenchkillError(f"{spec} raised {type(exc).__name__}: {one_line(exc)}") from None
