"""Sphinx configuration of benchkill's documentation.

Build (CI runs the same; ``-W`` turns every warning into an error)::

    pip install -e '.[docs]' && python -m sphinx -W -b html docs docs/_build/html

Pages are Markdown (MyST-Parser).  The API reference is autodoc + napoleon (numpy-style
docstrings) and must document every name of ``benchkill.__all__`` (checked below); the
CLI reference is sphinx-argparse over :func:`benchkill.cli.main.full_parser`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import benchkill

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "benchkill"
author = "the benchkill developers"
copyright = "2026, the benchkill developers"
release = version = benchkill.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinxarg.ext",
    "terminal_help",  # docs/_ext: argparse help rendered as the terminal shows it
]

source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]
# `[text](page.md#a-heading)` links are checked like any cross-reference
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]
# options such as --quick stay two hyphens, not an en dash
smartquotes = False

# numpy-style docstrings only (the package's convention, as TVM's Python passes)
napoleon_google_docstring = False
napoleon_numpy_docstring = True
# "{"tvm", "benchkill", None}" value sets and "optional" rendered as numpydoc means them
napoleon_preprocess_types = True
autodoc_member_order = "bysource"
autodoc_typehints = "signature"

html_theme = "furo"
html_title = f"benchkill {release}"
html_static_path: list[str] = []


def _check_public_api(app, env) -> None:
    """Warn (an error under -W) for a public name the API reference does not document."""
    from sphinx.util import logging

    from benchkill import _EXPORTS

    documented = set(env.get_domain("py").objects)
    wanted = {f"{module}.{name}" for name, module in _EXPORTS.items()}
    wanted |= {f"benchkill.{name}" for name in benchkill.__all__ if name not in _EXPORTS}
    for name in sorted(wanted - documented):
        logging.getLogger(__name__).warning(
            "benchkill.__all__ names %s, which the API reference does not document "
            "(docs/reference/api.md)",
            name,
        )


def setup(app):
    app.connect("env-check-consistency", _check_public_api)
