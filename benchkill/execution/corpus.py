"""Finding the Relax modules of Python files, without running them (``benchkill equivalence``).

A *candidate* is a class decorated ``@I.ir_module`` (``@tvm.script.ir_module``, ``@ir_module``,
with or without arguments) or a free ``@R.function`` (``@relax.function``: one not inside an
ir_module class or another Relax function), at any depth of a TVMScript file or a Python
test file: at module level, in a class body, or inside a function.  ``R.rewriter`` classes
(pattern and replacement pairs) are not modules.

:func:`find_candidates` reads a file's AST; :mod:`benchkill.execution.corpus_task` builds each
candidate in a child process.  One evaluated when its file is executed (module level, class
bodies) is fetched from the file's namespace; one inside a function is rebuilt by
:func:`isolate`: a copy of each enclosing function and class (same names and line numbers,
so TVMScript finds the candidate's source and ``__qualname__`` is the file's) that keeps only
the definition-like statements before the candidate (imports, assignments, definitions),
each guarded by ``try``, and returns the candidate; a function's parameters get the first
value of a ``pytest.mark.parametrize`` or a module-level ``tvm.testing.parameter(s)`` when
there is one (else None).
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field

#: decorators: (exact names, or a suffix after a dot)
_IR_MODULE = (("ir_module",), ".ir_module")
_RELAX_FUNCTION = (
    ("R.function", "relax.function", "rx.function", "script.relax.function"),
    ".script.relax.function",
)
_REWRITER = (("R.rewriter", "rewriter", "relax.rewriter"), ".rewriter")
_SCOPES = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
#: statements :func:`isolate` keeps before a candidate inside a function
_DEFINITIONS = (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign, ast.AugAssign, *_SCOPES)


@dataclass
class Candidate:
    """One Relax module of a file: ``kind`` is ``"ir_module"`` or ``"function"``."""

    kind: str
    qualname: str
    line: int
    node: ast.AST = field(repr=False)
    ancestors: list = field(repr=False)  # the enclosing nodes, outermost first

    @property
    def key(self) -> tuple[str, int]:
        return (self.qualname, self.line)

    @property
    def nested(self) -> bool:
        """Inside a function (rebuilt by :func:`isolate`), not built when its file runs."""
        return any(isinstance(a, _FUNCTIONS) for a in self.ancestors)


def _dotted(node) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _decorated(node, kind: tuple) -> bool:
    names, suffix = kind
    return any(_dotted(d) in names or _dotted(d).endswith(suffix) for d in node.decorator_list)


def find_candidates(tree: ast.Module) -> list[Candidate]:
    """The candidates of a parsed file, in source order."""
    found: list[Candidate] = []

    def walk(node, ancestors: list, inside: bool) -> None:
        for child in ast.iter_child_nodes(node):
            below = [*ancestors, child]
            if isinstance(child, ast.ClassDef) and _decorated(child, _REWRITER):
                walk(child, below, True)
            elif isinstance(child, ast.ClassDef) and _decorated(child, _IR_MODULE):
                if not inside:
                    found.append(_candidate("ir_module", child, ancestors))
                walk(child, below, True)
            elif isinstance(child, _FUNCTIONS) and _decorated(child, _RELAX_FUNCTION):
                if not inside:
                    found.append(_candidate("function", child, ancestors))
                walk(child, below, True)
            else:
                walk(child, below, inside)

    walk(tree, [], False)
    return found


def _candidate(kind: str, node, ancestors: list) -> Candidate:
    names = [a.name for a in ancestors if isinstance(a, _SCOPES)]
    return Candidate(kind, ".".join([*names, node.name]), node.lineno, node, list(ancestors))


# -- parameter values of enclosing test functions ------------------------------------------
def _literal(node) -> tuple[bool, object]:
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def module_parameters(tree: ast.Module) -> dict:
    """First values of module-level ``x = tvm.testing.parameter(v, ...)`` and
    ``a, b = tvm.testing.parameters((va, vb), ...)``."""
    out: dict = {}
    for stmt in tree.body:
        if not (isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call)):
            continue
        name, args = _dotted(stmt.value.func), stmt.value.args
        target = stmt.targets[0]
        if not args:
            continue
        ok, value = _literal(args[0])
        if not ok:
            continue
        if name.endswith("testing.parameter") and isinstance(target, ast.Name):
            out[target.id] = value
        elif name.endswith("testing.parameters") and isinstance(target, ast.Tuple):
            if isinstance(value, (tuple, list)):
                for elt, v in zip(target.elts, value, strict=False):
                    if isinstance(elt, ast.Name):
                        out[elt.id] = v
    return out


def _parametrized(func) -> dict:
    out: dict = {}
    for dec in func.decorator_list:
        if not (isinstance(dec, ast.Call) and _dotted(dec.func).endswith("mark.parametrize")):
            continue
        if len(dec.args) < 2:
            continue
        (ok_names, names), (ok_values, values) = _literal(dec.args[0]), _literal(dec.args[1])
        if not (ok_names and ok_values and values):
            continue
        if isinstance(names, str):
            names = [n.strip() for n in names.split(",") if n.strip()]
        first = values[0]
        if len(names) == 1:
            out[names[0]] = first
        elif isinstance(first, (tuple, list)):
            out.update(zip(names, first, strict=False))
    return out


# -- isolating a candidate inside a function -------------------------------------------------
def _guarded(stmt):
    """``try: stmt`` / ``except Exception: pass``, at the statement's lines."""
    handler = ast.ExceptHandler(
        type=ast.Name("Exception", ast.Load()), name=None, body=[ast.Pass()]
    )
    return ast.copy_location(ast.Try([stmt], [handler], [], []), stmt)


def _path_to(container, target) -> list | None:
    """``(body, statement)`` pairs from ``container``'s body down to ``target``."""
    for name in ("body", "orelse", "finalbody", "handlers"):
        body = getattr(container, name, None) or []
        for stmt in body:
            if stmt is target:
                return [(body, stmt)]
            if isinstance(stmt, _SCOPES):
                continue
            below = _path_to(stmt, target)
            if below is not None:
                return [(body, stmt), *below]
    return None


def _prelude(body: list, upto) -> list:
    out = []
    for stmt in body:
        if stmt is upto:
            break
        if isinstance(stmt, _DEFINITIONS):
            out.append(_guarded(copy.deepcopy(stmt)))
    return out


_VALUE = "__benchkill_candidate__"


def isolate(candidate: Candidate, parameters: dict) -> tuple[ast.Module, ast.Expression, str]:
    """``(module, accessor, name)``: ``module`` defines, at its top, a copy of the outermost
    scope ``name`` that encloses the candidate; evaluating ``accessor`` after it returns the
    candidate (see the module docstring).  Raises ValueError if it cannot be placed."""
    scopes = [a for a in candidate.ancestors if isinstance(a, _SCOPES)]
    inner, built = candidate.node, None
    for level in reversed(scopes):
        path = _path_to(level, inner)
        if path is None:
            raise ValueError(f"cannot find {candidate.qualname} in its scope")
        body = [stmt for container, stmt in path for stmt in _prelude(container, stmt)]
        if built is None:
            body.append(copy.deepcopy(candidate.node))
            value = ast.Name(candidate.node.name, ast.Load())
        else:
            body.append(built[0])
            value = built[1]
        if isinstance(level, ast.ClassDef):
            body.append(ast.Assign([ast.Name(_VALUE, ast.Store())], value))
            node = ast.ClassDef(level.name, [], [], body, [], type_params=[])
            accessor = ast.Attribute(ast.Name(level.name, ast.Load()), _VALUE, ast.Load())
        else:
            values = {**parameters, **_parametrized(level)}
            args = level.args
            names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
            assigns = [
                ast.Assign([ast.Name(n, ast.Store())], _value_node(values.get(n)))
                for n in names
                if n not in ("self", "cls")
            ]
            no_args = ast.arguments([], [], None, [], [], None, [])
            node = ast.FunctionDef(
                level.name, no_args, [*assigns, *body, ast.Return(value)], [], None, type_params=[]
            )
            accessor = ast.Call(ast.Name(level.name, ast.Load()), [], [])
        ast.copy_location(node, level)
        built, inner = (node, accessor), level
    node, accessor = built
    module = ast.fix_missing_locations(ast.Module([node], []))
    return module, ast.fix_missing_locations(ast.Expression(accessor)), node.name


def _value_node(value):
    if isinstance(value, (int, float, str, bool, type(None))):
        return ast.Constant(value)
    try:
        return ast.parse(repr(value), mode="eval").body
    except SyntaxError:
        return ast.Constant(None)
