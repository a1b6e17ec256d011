"""The package's layout rules: imports follow the layers, modules stay small.

The layers and what each may import (the README's Layout section says the same):
``errors``, ``files``, ``hooks``, ``stats`` and ``vocabulary`` are the foundation every
layer may use (they import nothing of benchkill's but one another).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "benchkill"
FOUNDATION = {"errors", "files", "hooks", "stats", "vocabulary"}
#: layer -> layers it may import (besides itself and the foundation)
ALLOWED = {
    "relax": set(),
    "passes": {"relax"},
    "analysis": {"relax"},
    "inputs": {"relax"},
    "execution": {"relax", "passes", "analysis", "inputs"},
    "fuzz": {"relax", "passes", "analysis", "inputs", "execution"},
    "bench": {"relax", "passes", "analysis", "inputs", "execution"},
    # the results and reports see the bench layer's record model and machine metadata only
    "results": {"bench.model", "bench.machine"},
    "reporting": {"results", "bench.model", "bench.machine"},
    "cli": {
        "relax",
        "passes",
        "analysis",
        "inputs",
        "execution",
        "fuzz",
        "bench",
        "results",
        "reporting",
    },  # fmt: skip
}
#: third-party packages only some layers may import
RESTRICTED = {"hypothesis": {"fuzz"}, "matplotlib": {"reporting"}}
MAX_LINES = 400


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _dotted(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_only(tree: ast.AST) -> set[int]:
    """ids of the nodes under ``if TYPE_CHECKING:`` (never run)."""
    guarded = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            guarded |= {id(n) for child in node.body for n in ast.walk(child)}
    return guarded


def _imports(path: Path, run_only: bool = False) -> list[tuple[int, str]]:
    """(line, absolute module) of every import in ``path``, function-level ones included
    (``run_only``: not those under ``if TYPE_CHECKING:``)."""
    me = _dotted(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    found = []
    tree = ast.parse(path.read_text())
    skipped = _type_only(tree) if run_only else set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            # ``from benchkill.x import y`` may name a submodule y
            found += [
                (node.lineno, sub) for a in node.names if _is_module(sub := f"{module}.{a.name}")
            ]
    return found


def _is_module(dotted: str) -> bool:
    path = PACKAGE.parent.joinpath(*dotted.split("."))
    return path.is_dir() or path.with_suffix(".py").is_file()


def _layer(module: str) -> str | None:
    """The layer of a benchkill module (None: not benchkill's, or its top-level modules)."""
    parts = module.split(".")
    if parts[0] != "benchkill" or len(parts) < 2 or parts[1] not in set(ALLOWED) | FOUNDATION:
        return None  # not benchkill's, a top-level module, or a name like __version__
    return parts[1]


def _may_import(importer: str, target: str) -> bool:
    src, dst = _layer(importer), _layer(target)
    if dst is None or dst in FOUNDATION or src == dst:
        return True
    if src is None:  # benchkill/__init__.py (lazy exports by name) and __main__.py
        return importer == "benchkill.__main__" and dst == "cli"
    if src in FOUNDATION:
        return dst in FOUNDATION
    allowed = ALLOWED[src]
    return dst in allowed or ".".join(target.split(".")[1:3]) in allowed


def test_every_import_follows_the_layers():
    wrong = []
    for path in _modules():
        importer = _dotted(path)
        for line, target in _imports(path):
            if not _may_import(importer, target):
                wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {target}")
    assert not wrong, "imports against the layers:\n" + "\n".join(wrong)


def test_every_layer_is_known():
    layers = {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert layers == set(ALLOWED)
    files = {p.stem for p in PACKAGE.glob("*.py")}
    assert files == FOUNDATION | {"__init__", "__main__"}


@pytest.mark.parametrize("package, allowed", sorted(RESTRICTED.items()))
def test_restricted_packages_are_imported_by_their_layers_only(package, allowed):
    wrong = [
        f"{path.relative_to(PACKAGE.parent)}:{line}"
        for path in _modules()
        for line, target in _imports(path)
        if target.split(".")[0] == package and _layer(_dotted(path)) not in allowed
    ]
    assert not wrong, f"{package} imported outside {sorted(allowed)}: {wrong}"


def test_modules_are_small_unless_one_state_machine():
    long = []
    for path in _modules():
        lines = len(path.read_text().splitlines())
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        if lines > MAX_LINES and "state machine" not in doc:
            long.append(f"{path.relative_to(PACKAGE.parent)}: {lines} lines")
    assert not long, "modules above 400 lines (not a hot-path state machine):\n" + "\n".join(long)


def test_no_utils_module():
    assert not [p for p in _modules() if p.stem in ("utils", "util", "helpers", "misc")]


def test_the_rule_checker_sees_a_wrong_import(tmp_path):
    """The checker itself: an import against the direction is reported."""
    assert not _may_import("benchkill.passes.plan", "benchkill.bench.runner")
    assert not _may_import("benchkill.analysis.verifier", "benchkill.passes")
    assert not _may_import("benchkill.reporting.plot", "benchkill.bench.suites.vm_suite")
    assert _may_import("benchkill.reporting.plot", "benchkill.bench.model")
    assert _may_import("benchkill.cli.main", "benchkill.reporting.plot")
    assert not _may_import("benchkill.relax.ops", "benchkill.cli.main")


def _import_graph() -> dict[str, set[str]]:
    """benchkill module -> the benchkill modules it imports when it runs (function-level
    imports too; not the type-checking ones).

    A module's own parent packages are left out: Python runs them before the module in
    any case (``from benchkill.passes import plan`` inside ``benchkill.passes.x``)."""
    modules = {_dotted(path): path for path in _modules()}
    return {
        name: {
            target
            for _, target in _imports(path, run_only=True)
            if target in modules and target != name and not name.startswith(target + ".")
        }
        for name, path in modules.items()
    }


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle():
    """No two modules import each other, directly or through others (lazy imports count)."""
    circles = _circles(_import_graph())
    assert not circles, "import circles:\n" + "\n".join(" <-> ".join(c) for c in circles)


def test_the_circle_finder_sees_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(graph) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []
