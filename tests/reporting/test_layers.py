"""The layers of this area import only along the allowed directions (read from the source)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "benchkill"
FOUNDATION = {"benchkill", "benchkill.errors", "benchkill.hooks", "benchkill.stats"}
#: module or package -> the benchkill modules it may import (beside itself)
ALLOWED = {
    "benchkill.bench.model": set(),
    "benchkill.results": FOUNDATION | {"benchkill.bench.model"},
    "benchkill.reporting": FOUNDATION | {"benchkill.bench.model", "benchkill.results"},
}


def _imports(path: Path) -> set[str]:
    """The benchkill modules ``path`` imports, at module level or inside functions."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return {m for m in found if m == "benchkill" or m.startswith("benchkill.")}


def _files(owner: str) -> list[Path]:
    relative = Path(*owner.split(".")[1:])
    single = (PACKAGE / relative).with_suffix(".py")
    return [single] if single.exists() else sorted((PACKAGE / relative).rglob("*.py"))


@pytest.mark.parametrize("owner", list(ALLOWED))
def test_imports_follow_the_layers(owner):
    allowed = ALLOWED[owner] | {owner}
    packages = tuple(a + "." for a in allowed if a != "benchkill")  # the root: __version__
    for path in _files(owner):
        for module in _imports(path):
            assert module in allowed or module.startswith(packages), (
                f"{path.relative_to(PACKAGE)} imports {module}"
            )


def test_bench_never_imports_results_or_reporting():
    for path in sorted((PACKAGE / "bench").rglob("*.py")):
        for module in _imports(path):
            assert not module.startswith(("benchkill.results", "benchkill.reporting")), path
