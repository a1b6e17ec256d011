"""The shared argparse types: values accepted, and errors that name the option."""

from __future__ import annotations

import argparse

import pytest

from benchkill.cli import common_args as types
from benchkill.cli.main import main


@pytest.mark.parametrize(
    "parse,text,value",
    [
        (types.positive_int, "3", 3),
        (types.non_negative_int, "0", 0),
        (types.int_at_least(2), "2", 2),
        (types.positive_float, "0.1", 0.1),
        (types.factor, "1.05", 1.05),
        (types.alpha, "0.002", 0.002),
    ],
)
def test_good_values(parse, text, value):
    assert parse(text) == value


@pytest.mark.parametrize(
    "parse,text,fragment",
    [
        (types.positive_int, "0", "must be at least 1, got 0"),
        (types.positive_int, "1.5", "expected an integer, got '1.5'"),
        (types.non_negative_int, "-1", "must be at least 0"),
        (types.int_at_least(2), "1", "must be at least 2"),
        (types.positive_float, "0", "must be above 0"),
        (types.positive_float, "inf", "not a finite number"),
        (types.factor, "1", "must be a number above 1"),
        (types.factor, "nan", "not a finite number"),
        (types.alpha, "1", "must be between 0 and 1"),
        (types.alpha, "x", "not a number"),
        (types.regex, "(", "invalid regular expression '('"),
    ],
)
def test_bad_values_raise_argument_type_errors(parse, text, fragment):
    with pytest.raises(argparse.ArgumentTypeError) as info:
        parse(text)
    assert fragment in str(info.value)


def test_regex_is_compiled():
    assert types.regex(r"a+b").search("xaab")
    assert types.factor("2") == 2.0


@pytest.mark.parametrize(
    "argv,fragment",
    [
        (["generate", "chain", "0"], "argument N: must be at least 1, got 0"),
        (["generate", "chain", "3", "--seed", "x"], "argument --seed: expected an integer"),
        (
            ["profile", "--generate", "chain", "10", "--repeats", "0"],
            "argument --repeats: must be at least 1",
        ),
        (["fuzz", "--repeats", "0"], "argument --repeats: must be at least 1"),
        (["fuzz", "--max-statements", "0"], "argument --max-statements: must be at least 1"),
        (["fuzz", "--buildable", "-1"], "argument --buildable: must be at least 0"),
        (["trust", "--repeats", "1"], "argument --repeats: must be at least 2, got 1"),
        (["trust", "--hook", "0"], "argument --hook: invalid number '0': must be above 0"),
        (["trust", "--factor", "0.5"], "argument --factor: invalid factor '0.5'"),
        (["compare", "a", "b", "--alpha", "0"], "argument --alpha: invalid alpha '0'"),
        (["compare", "a", "b", "--only", "["], "argument --only: invalid regular expression"),
        (["apply", "--generate", "chain", "x"], "argument --generate: N expected an integer"),
        (["profile", "--generate", "chain"], "argument --generate: expected FAMILY and at least"),
        (["profile", "--generate", "chain", "4", "0"], "argument --generate: N must be at least 1"),
    ],
)
def test_bad_option_values_are_one_line_naming_the_option(capsys, argv, fragment):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"benchkill: error: benchkill {argv[0]}: ")
    assert fragment in err, err


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
    assert types.source_of(argparse.Namespace(file="m.py", generate=None)) == "file"
    assert types.source_of(argparse.Namespace(file=None, generate=("chain", (3,)))) == "generate"
    assert types.source_of(argparse.Namespace(file=None, workload="mlp")) == "workload"


def test_the_kill_variants_are_explained_from_the_vocabulary():
    from benchkill.vocabulary import KILL_VARIANTS

    lines = types.kill_epilog().splitlines()
    assert lines[0] == "kill variants:"
    assert [line.split()[0] for line in lines[1:]] == list(KILL_VARIANTS)
    assert all(text in "\n".join(lines) for text in KILL_VARIANTS.values())


@pytest.mark.parametrize(
    "text, pair", [("n=3", ("n", "3")), (" n = 3 ", ("n", "3")), ("a=b=c", ("a", "b=c"))]
)
def test_assignment(text, pair):
    assert types.assignment(text) == pair


@pytest.mark.parametrize("text", ["n", "=3", "n=", " = "])
def test_bad_assignment(text):
    with pytest.raises(argparse.ArgumentTypeError, match="expected NAME=VALUE"):
        types.assignment(text)
