"""full_parser, which the documentation's CLI reference is generated from, says what each
command's own parser (the one ``benchkill COMMAND`` builds) says."""

from __future__ import annotations

import argparse

import pytest

from benchkill.cli.main import COMMANDS, full_parser, make_parser


def commands_of(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(commands.choices)


def described(action: argparse.Action) -> tuple:
    """What a CLI reference shows of an action, and what parsing does with it."""
    return (
        type(action).__name__,
        tuple(action.option_strings),
        action.dest,
        action.nargs,
        repr(action.default),
        repr(action.choices),
        action.help,
        action.metavar,
        action.required,
        getattr(action.type, "__qualname__", repr(action.type)),
    )


@pytest.fixture(scope="module")
def full() -> dict[str, argparse.ArgumentParser]:
    return commands_of(full_parser())


def test_full_parser_lists_every_command_in_order(full):
    assert list(full) == list(COMMANDS)


def test_top_level_help_is_that_of_benchkill_help(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert full_parser().format_help() == make_parser().format_help()


@pytest.mark.parametrize("command", list(COMMANDS))
def test_each_command_has_its_own_parsers_arguments_and_help(monkeypatch, full, command):
    monkeypatch.setenv("COLUMNS", "80")
    own = commands_of(make_parser([command]))[command]
    generated = full[command]
    assert [described(a) for a in generated._actions] == [described(a) for a in own._actions]
    assert len(generated._actions) > 1, f"{command} has no arguments of its own"
    assert generated.format_help() == own.format_help()
    assert generated.description == own.description and generated.epilog == own.epilog
    assert generated.get_default("func") is own.get_default("func")
