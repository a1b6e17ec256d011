"""Help written for users: every command says what it is for, every option its default,
within 80 columns; `run --help` gives each suite's case counts (checked here against the
suites) and durations."""

from __future__ import annotations

import argparse

import pytest

from benchkill.cli.cmd_run import SUITE_GUIDE
from benchkill.cli.main import COMMANDS, HelpFormatter, main, make_parser


def help_text(capsys, monkeypatch, *argv):
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit) as exit_:
        main([*argv, "--help"])
    assert exit_.value.code == 0
    return capsys.readouterr().out


def subparser(name: str) -> argparse.ArgumentParser:
    parser = make_parser([name])
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return commands.choices[name]


def test_top_level_help_says_what_benchkill_is_for_and_where_to_start(capsys, monkeypatch):
    text = help_text(capsys, monkeypatch)
    assert text.splitlines()[0] == "usage: benchkill [-h] [--version] COMMAND ..."
    assert "benchkill measures TVM Relax's KillAfterLastUse pass" in text
    assert "start with:\n  benchkill run --quick" in text
    for command, line in COMMANDS.items():
        assert f"    {command}" in text and line.split()[0] in text
    assert max(len(line) for line in text.splitlines()) <= 80


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_option_has_help_and_a_default_within_80_columns(capsys, monkeypatch, command):
    text = help_text(capsys, monkeypatch, command)
    assert max(len(line) for line in text.splitlines()) <= 80, command
    assert "save_json" not in text and "JSON input" not in text
    formatter = HelpFormatter(f"benchkill {command}")
    for action in subparser(command)._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        assert action.help, f"{command} {action.dest} has no help"
        if action.option_strings:
            shown = formatter._get_help_string(action)
            assert "(default" in shown, f"{command} {action.option_strings[0]}: no default"


@pytest.mark.parametrize("name", list(SUITE_GUIDE))
def test_run_help_counts_the_cases_of_each_suite(capsys, monkeypatch, name):
    from benchkill.bench.suites import load_suite

    suite = load_suite(name)
    guide = SUITE_GUIDE[name]
    assert guide["quick_cases"] == len(suite.cases(True))
    assert guide["full_cases"] == len(suite.cases(False))
    text = help_text(capsys, monkeypatch, "run")
    assert f"--quick: {guide['quick_cases']} cases, {guide['quick_time']}" in text
    assert f"full: {guide['full_cases']} cases, {guide['full_time']}" in text
