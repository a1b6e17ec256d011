"""Help written for users: every command says what it is for, every option its default
once, within 80 columns, with no argparse escape left in it; every command lists the exit
codes it gives; `run --help` gives each suite's case counts (checked here against the
suites) and durations; `targets --help` the targets the code checks."""

from __future__ import annotations

import argparse
import re

import pytest

from benchkill.cli.cmd_run import SUITE_GUIDE
from benchkill.cli.main import COMMANDS, EXIT_MEANINGS, command_module, main, make_parser
from benchkill.errors import ExitCode
from tests.frameworks import pretend_installed


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


def shown_options(name: str) -> list[argparse.Action]:
    """The options ``benchkill NAME --help`` lists (not -h, not the hidden old spellings)."""
    return [
        a
        for a in subparser(name)._actions
        if a.option_strings
        and a.help is not argparse.SUPPRESS
        and not isinstance(a, argparse._HelpAction)
    ]


def test_top_level_help_says_what_benchkill_is_for_and_where_to_start(capsys, monkeypatch):
    text = help_text(capsys, monkeypatch)
    assert text.splitlines()[0] == "usage: benchkill [-h] [--version] [-v] COMMAND ..."
    assert "benchkill measures TVM Relax's KillAfterLastUse pass" in text
    assert "start with:\n  benchkill run --quick" in text
    codes = text.split("exit codes (every command):\n", 1)[1]
    assert [int(c) for c in re.findall(r"^  (\d+) ", codes, re.MULTILINE)] == list(EXIT_MEANINGS)
    for command, line in COMMANDS.items():
        assert f"    {command}" in text and line.split()[0] in text
    assert max(len(line) for line in text.splitlines()) <= 80


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_option_shows_its_default_once_within_80_columns(capsys, monkeypatch, command):
    text = help_text(capsys, monkeypatch, command)
    assert max(len(line) for line in text.splitlines()) <= 80, command
    assert "save_json" not in text and "JSON input" not in text
    assert "%%" not in text and "%(" not in text  # an argparse escape printed as is
    options = shown_options(command)
    for action in subparser(command)._actions:
        assert action.help, f"{command} {action.dest} has no help"
    # each listed option says "(default" once, and nothing else does
    assert text.count("(default") == len(options), text
    options_part = text.split("\noptions:\n", 1)[1]
    for action in options:
        entry = options_part.split(action.option_strings[0], 1)[1].split("\n  -", 1)[0]
        assert entry.count("(default") == 1, f"{command} {action.option_strings[0]}"


def _default_of(action: argparse.Action, parser: argparse.ArgumentParser) -> str | None:
    """What an option's ``(default: ...)`` must say: the value the command gets when the
    option is left out (None: a default told in words, e.g. ``read FILE``)."""
    value = parser.get_default(action.dest)
    if isinstance(action, argparse._StoreTrueAction):
        return "off" if value is False else None
    if isinstance(value, (list, tuple)):
        return " ".join(map(str, value)) or "none"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    return None if value in (None, argparse.SUPPRESS) else str(value)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_the_default_an_option_shows_is_the_value_the_command_gets(monkeypatch, command):
    """Each option's help shows the value the command gets without it (lists space- or
    comma-separated, flags "off"), not only the word "(default"."""
    monkeypatch.setenv("COLUMNS", "1000")  # nothing wrapped
    parser = subparser(command)
    text = parser.format_help().split("\noptions:\n", 1)[1]
    for action in shown_options(command):
        entry = text.split("\n  " + action.option_strings[0], 1)[1].split("\n  -", 1)[0]
        shown = re.search(r"\(default[^:]*: (.*?)\)(?: |$)", " ".join(entry.split()))
        assert shown, (command, entry)
        expected = _default_of(action, parser)
        if expected is not None:
            words = shown.group(1)
            assert words in (expected, expected.replace(" ", ",")), (command, entry, expected)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_lists_the_exit_codes_it_gives(capsys, monkeypatch, command):
    text = help_text(capsys, monkeypatch, command)
    codes = text.split("\nexit codes:\n", 1)[1]
    listed = [int(m) for m in re.findall(r"^  (\d+) ", codes, re.MULTILINE)]
    module = command_module(command)
    gives_an_answer = getattr(module, "BAD_ANSWER", None) is not None
    expected = [c for c in EXIT_MEANINGS if c != ExitCode.BAD_ANSWER or gives_an_answer]
    assert listed == [int(c) for c in expected]
    flat = " ".join(codes.split())
    for code, meaning in EXIT_MEANINGS.items():
        if code in expected:
            assert f"{int(code)} {meaning}" in flat


def test_the_commands_that_give_a_verdict_say_what_a_bad_answer_is():
    verdicts = {c for c in COMMANDS if getattr(command_module(c), "BAD_ANSWER", None)}
    assert verdicts == {"compare", "verify", "fuzz", "equivalence", "memory", "history", "bisect"}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_old_spellings_work_but_are_not_listed(capsys, monkeypatch, command):
    text = help_text(capsys, monkeypatch, command)
    for old in ("--variant", "--runs", "--full", "--module", "--trials", "--slowdown", "--dir"):
        assert f"{old} " not in text and f"{old}\n" not in text, (command, old)
    assert "--diffs" not in text and "--examples" not in text


@pytest.mark.parametrize("name", list(SUITE_GUIDE))
def test_run_help_counts_the_cases_of_each_suite(capsys, monkeypatch, name):
    """The help counts the cases with the models extra installed (the real models'
    cases are listed without importing torch)."""
    from benchkill.bench.suites import load_suite

    pretend_installed(monkeypatch, "torch", "torchvision")

    suite = load_suite(name)
    guide = SUITE_GUIDE[name]
    assert guide["quick_cases"] == len(suite.cases(True))
    assert guide["full_cases"] == len(suite.cases(False))
    text = help_text(capsys, monkeypatch, "run")
    assert f"--quick: {guide['quick_cases']} cases, {guide['quick_time']}" in text
    assert f"full: {guide['full_cases']} cases, {guide['full_time']}" in text


def test_targets_help_names_the_targets_the_code_checks(capsys, monkeypatch):
    from benchkill.reporting import targets as t

    text = " ".join(help_text(capsys, monkeypatch, "targets").split())
    assert "benchkill's, asv's" in text and "pytest-benchmark's" in text  # what it reads
    assert f"at {t.SMALL:,} bindings (target <= {t.SMALL_TARGET:g})" in text
    assert f"from {t.LARGE:,} on (<= {t.LARGE_TARGET:g}; chain at 200,000: " in text
    assert f"<= {t.CHAIN_200K_TARGET:g})" in text
    assert f"{t.MODEL} family (<= {t.MODEL_TARGET:g})" in text
    lo, hi = t.EXPONENT_RANGE
    assert f"from {lo:,} to {hi:,} bindings (benchkill's <= {t.EXPONENT_TARGET:.1f})" in text
    assert " and ".join(t.VM_TARGET_WORKLOADS) in text
    (bound_sense, bound), (kills_sense, kills) = t.VM_TARGETS.values()
    assert f"peak / bound {bound_sense} {bound:.2f}" in text
    assert f"no kills / kills {kills_sense} {kills:g}" in text


def test_the_exit_codes_page_lists_each_commands_codes_as_its_help_does():
    """docs/guide/exit-codes.md: one row per command, with the meanings of 1 and 3 the
    command's module states (and "never" where it gives no verdict)."""
    from pathlib import Path

    from benchkill.cli.main import NOT_MEASURED

    page = Path(__file__).resolve().parents[2] / "docs" / "guide" / "exit-codes.md"
    rows = {
        line.split("|")[1].strip(" `"): [cell.strip() for cell in line.split("|")[2:4]]
        for line in page.read_text().splitlines()
        if line.startswith("| `")
    }
    assert list(rows) == list(COMMANDS)
    for command, (bad, not_measured) in rows.items():
        module = command_module(command)
        assert bad == (getattr(module, "BAD_ANSWER", None) or "never (no verdict)"), command
        assert not_measured == getattr(module, "NOT_MEASURED", NOT_MEASURED), command


def test_the_docs_use_no_old_spelling():
    """README and the Sphinx pages write every command with its current options: no
    hidden deprecated alias (cli/deprecation.py) on a ``benchkill COMMAND`` line."""
    from pathlib import Path

    from benchkill.cli.deprecation import _Alias

    root = Path(__file__).resolve().parents[2]
    pages = [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
    old = {
        command: {
            option
            for action in subparser(command)._actions
            if isinstance(action, _Alias)
            for option in action.option_strings
        }
        for command in COMMANDS
    }
    found = []
    for page in pages:
        if "_build" in page.parts:
            continue
        for number, line in enumerate(page.read_text().splitlines(), 1):
            for command, options in old.items():
                for rest in line.split(f"benchkill {command} ")[1:]:
                    words = set(re.split(r"[\s`|]+", rest.split("`")[0]))
                    found += [f"{page.name}:{number}: {o}" for o in options & words]
    assert found == []
