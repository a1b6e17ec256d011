"""The shared options: old spellings parse as today's (with one warning line each) and
still work; the helpers of the module-source scheme and the kill variants."""

from __future__ import annotations

import argparse

import pytest

from benchkill.cli import common_args as common
from benchkill.cli.main import main

# --- old spellings: the same command, one warning line each --------------------------

#: (old argv, the same in today's spelling, the warnings of the old one)
ALIASES = [
    (
        ["apply", "m.py", "--variant", "tvm"],
        ["apply", "m.py", "--kill", "tvm"],
        ["--variant is deprecated; use --kill"],
    ),
    (
        ["memory", "--workload", "chain", "--runs", "3", "--full"],
        ["memory", "--workload", "chain", "--repeats", "3"],
        [
            "--runs is deprecated; use --repeats",
            "--full is deprecated; use no option (full sizes are the default)",
        ],
    ),  # fmt: skip
    (
        ["profile", "--module", "m.py", "--repeats", "1"],
        ["profile", "m.py", "--repeats", "1"],
        ["--module is deprecated; use FILE"],
    ),
    (
        ["trust", "--trials", "4", "--slowdown", "0.2", "--slowdown", "0.3", "--dir", "d"],
        ["trust", "--repeats", "4", "--hook", "0.2", "--hook", "0.3", "--out", "d"],
        ["--trials is deprecated; use --repeats"]
        + ["--slowdown is deprecated; use --hook"] * 2
        + ["--dir is deprecated; use --out"],
    ),
    (
        ["trust", "--hook", "0.2", "--slowdown", "0.3"],
        ["trust", "--hook", "0.2", "--hook", "0.3"],
        ["--slowdown is deprecated; use --hook"],
    ),
    (
        ["fuzz", "--examples", "20", "--seed", "3"],
        ["fuzz", "--repeats", "20", "--seed", "3"],
        ["--examples is deprecated; use --repeats"],
    ),
    (
        ["equivalence", "t.py", "--diffs", "d"],
        ["equivalence", "t.py", "--out", "d"],
        ["--diffs is deprecated; use --out"],
    ),
]


def parsed(argv: list[str]) -> dict:
    from benchkill.cli.main import make_parser

    return vars(make_parser(argv).parse_args(argv))


@pytest.mark.parametrize("old, new, warnings", ALIASES, ids=[" ".join(a[0]) for a in ALIASES])
def test_an_old_spelling_parses_as_the_new_one_with_a_warning_each(capsys, old, new, warnings):
    assert parsed(old) == parsed(new)
    assert capsys.readouterr().err.splitlines() == [f"benchkill: warning: {w}" for w in warnings]


def test_the_new_spellings_warn_of_nothing(capsys):
    for _, new, _ in ALIASES:
        parsed(new)
    assert capsys.readouterr().err == ""


def test_apply_with_the_old_variant_option_gives_the_same_module(tmp_path, capsys):
    from tests.cli.test_apply import MODULE

    src = tmp_path / "mod.py"
    src.write_text(MODULE)
    assert main(["apply", str(src), "--kill", "legacy"]) == 0
    new = capsys.readouterr()
    assert main(["apply", str(src), "--variant", "legacy"]) == 0
    old = capsys.readouterr()
    assert old.out == new.out and "R.vm.kill_object" in old.out
    assert old.err.splitlines()[0] == "benchkill: warning: --variant is deprecated; use --kill"
    assert old.err.splitlines()[1].startswith("legacy: inserted ")


def test_profile_in_the_old_form_profiles_the_generated_modules(capsys):
    assert main(["profile", "chain", "10", "20", "--repeats", "1"]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        "benchkill: warning: profile FAMILY N ... is deprecated; use profile --generate "
        "FAMILY N ..."
    ]
    labels = [line.split(" bindings")[0] for line in captured.out.splitlines() if "," in line]
    assert labels[:2] == ["chain, 30", "chain, 60"]


# --- the shared options --------------------------------------------------------------


def test_source_of_names_the_source_given():
    assert common.source_of(argparse.Namespace(file="m.py", generate=None)) == "file"
    assert common.source_of(argparse.Namespace(file=None, generate=("chain", (3,)))) == "generate"
    assert common.source_of(argparse.Namespace(file=None, workload="mlp")) == "workload"


def test_the_kill_variants_are_explained_from_the_vocabulary():
    from benchkill.vocabulary import KILL_VARIANTS

    lines = common.kill_epilog().splitlines()
    assert lines[0] == "kill variants:"
    assert [line.split()[0] for line in lines[1:]] == list(KILL_VARIANTS)
    assert all(text in "\n".join(lines) for text in KILL_VARIANTS.values())
