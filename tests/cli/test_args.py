"""The shared argparse types: values accepted, and errors that name the option."""

from __future__ import annotations

import argparse

import pytest

from benchkill.cli import args as types
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


@pytest.mark.parametrize(
    "text, pair", [("n=3", ("n", "3")), (" n = 3 ", ("n", "3")), ("a=b=c", ("a", "b=c"))]
)
def test_assignment(text, pair):
    assert types.assignment(text) == pair


@pytest.mark.parametrize("text", ["n", "=3", "n=", " = "])
def test_bad_assignment(text):
    with pytest.raises(argparse.ArgumentTypeError, match="expected NAME=VALUE"):
        types.assignment(text)
