"""The vocabulary: one table of names, imported by the command line, the suites, the
figures and the library, which therefore spell every name the same."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from benchkill import vocabulary as v

PACKAGE = Path(v.__file__).parent

#: The vocabulary's lists of names: no other module writes one out again (the library's
#: ``kill=None`` stands for ``"none"``).
LISTS = {
    "KILLS": v.KILLS,
    "KILL_PASSES": v.KILL_PASSES,
    "COMPARED_KILLS": v.COMPARED_KILLS,
    "EXEC_MODES": v.EXEC_MODES,
    "MEMORY_CFGS": v.MEMORY_CFGS,
    "SUITES": tuple(v.SUITES),
    "IMPLS": v.IMPLS,
    "FAMILIES": tuple(v.FAMILIES),
    "EQUIVALENCE_STAGES": v.EQUIVALENCE_STAGES,
    "KILL_RULES": tuple(v.KILL_RULES),
}


def test_it_imports_nothing_and_no_tvm():
    tree = ast.parse(Path(v.__file__).read_text())
    imports = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert [getattr(n, "module", None) for n in imports] == ["__future__"]
    code = "import sys, benchkill.vocabulary; print(sorted(m for m in sys.modules if 'tvm' in m))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_kill_variants():
    assert v.KILLS[0] == v.NO_KILLS == "none"
    assert set(v.KILL_PASSES) == set(v.KILLS) - {v.NO_KILLS}
    assert v.COMPARED_KILLS[0] == v.NO_KILLS and set(v.COMPARED_KILLS) < set(v.KILLS)
    assert [v.kill_arg(name) for name in v.KILLS] == [None, *v.KILL_PASSES]
    assert [v.kill_name(v.kill_arg(name)) for name in v.KILLS] == list(v.KILLS)
    assert all(text and "\n" not in text for text in v.KILL_VARIANTS.values())


def literal_names(node: ast.AST) -> tuple | None:
    """The names a tuple, list or set literal of constants spells (None for "none")."""
    if not isinstance(node, (ast.Tuple, ast.List, ast.Set)) or len(node.elts) < 2:
        return None
    if not all(isinstance(e, ast.Constant) and isinstance(e.value, str | None) for e in node.elts):
        return None
    return tuple(v.NO_KILLS if e.value is None else e.value for e in node.elts)


def test_no_module_writes_out_a_list_of_the_vocabulary_again():
    again = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "vocabulary.py" or "__pycache__" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = literal_names(node)
            for what, listed in LISTS.items():
                if names is not None and sorted(names) == sorted(listed):
                    again.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {what}")
    assert not again, again


def test_the_checker_finds_a_list_written_out_again():
    """(the check itself, on a line such as the one the kill variants had in the CLI)"""
    node = ast.parse('KILLS = ("none", "tvm", "benchkill", "beyond", "legacy")').body[0].value
    assert sorted(literal_names(node)) == sorted(v.KILLS)
    node = ast.parse('KILLS = (None, "tvm", "benchkill", "beyond")').body[0].value
    assert sorted(literal_names(node)) == sorted(v.COMPARED_KILLS)


def test_the_library_takes_its_names_from_it():
    from benchkill.bench import suites
    from benchkill.bench.suites import vm_suite
    from benchkill.execution import corpus_task, pipeline, vm_options
    from benchkill.reporting import palette

    assert pipeline.KILL_VARIANTS == tuple(map(v.kill_arg, v.KILLS))
    assert palette.KILL_ORDER == pipeline.KILL_VARIANTS
    assert palette.IMPL_ORDER is v.IMPLS
    assert vm_suite.KILLS == tuple(map(v.kill_arg, v.COMPARED_KILLS))
    assert vm_options.EXEC_MODES is v.EXEC_MODES and vm_options.MEMORY_CFGS is v.MEMORY_CFGS
    assert corpus_task.STAGES is v.EQUIVALENCE_STAGES
    assert sorted(suites.SUITES) == sorted(v.SUITES)  # (tests may have re-registered one)
    assert {mode for mode, _ in palette.MODE_ORDER} == set(v.EXEC_MODES)
    assert {cfg for _, cfg in palette.MODE_ORDER} == set(v.MEMORY_CFGS)
    assert palette.MODE_ORDER[0] == (v.EXEC_MODES[0], v.MEMORY_CFGS[0])  # the default
    # every variant and implementation has its colour and its legend words
    assert set(v.KILLS) | set(v.IMPLS) <= set(palette.COLOURS)
    assert set(v.KILLS) <= set(palette.KILL_LABELS) and set(v.IMPLS) <= set(palette.IMPL_LABELS)


def test_the_families_and_rules_are_the_generators_and_the_checkers():
    from benchkill.analysis.kill_rules import RULES, TABLE
    from benchkill.inputs import families, models

    assert families.FAMILIES is v.FAMILIES and models.NAME == v.MODEL_FAMILY
    assert [rule.name for rule in TABLE] == list(v.KILL_RULES) == list(RULES)


@pytest.mark.parametrize("name", v.KILL_PASSES)
def test_every_kill_pass_has_a_pass(name):
    from benchkill.execution.pipeline import kill_pass

    assert kill_pass(name) is not None
