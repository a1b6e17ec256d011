"""The command table: one module per command, imported only for the command that runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchkill.cli import main as cli_main
from benchkill.cli.main import COMMANDS, command_module, main, named_command
from tests.conftest import write_results

PROJECT = Path(__file__).resolve().parents[2]
#: Committed results files with pass and vm records.
BASELINES = PROJECT / "results" / "baseline-2core-vm"

PROBE = """
import json, sys
from benchkill.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules if m in ("tvm", "tvm_ffi") or m.startswith((
    "tvm.", "tvm_ffi.", "benchkill.cli.cmd_", "matplotlib", "hypothesis")))), file=sys.stderr)
"""


def imported_by(*argv: str) -> list[str]:
    """The TVM, tvm_ffi, matplotlib, hypothesis and command modules ``benchkill ARGV``
    imports."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stderr.strip().splitlines()[-1])


def test_help_imports_no_command_and_no_tvm():
    assert imported_by("--help") == []


@pytest.mark.parametrize("command", list(COMMANDS))
def test_help_of_a_command_imports_that_command_only_and_no_tvm(command):
    assert imported_by(command, "--help") == [f"benchkill.cli.cmd_{command}"]


def test_the_import_probe_sees_tvm_and_tvm_ffi():
    """(the probe itself: a command that imports them is caught)"""
    found = imported_by("generate", "chain", "2", "--count")
    assert {"tvm", "tvm_ffi", "benchkill.cli.cmd_generate"} <= set(found)


def test_no_command_module_imports_tvm_when_imported():
    code = (
        "import sys, importlib; "
        f"[importlib.import_module('benchkill.cli.cmd_' + c) for c in {list(COMMANDS)!r}]; "
        "print([m for m in ('tvm', 'tvm_ffi', 'matplotlib', 'hypothesis') if m in sys.modules])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=PROJECT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_has_a_module_with_arguments_and_run(command):
    module = command_module(command)
    assert callable(module.add_arguments) and callable(module.run)
    assert module.__doc__ and f"benchkill {command}" in module.__doc__


def test_top_level_help_lists_every_command(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    for command, text in COMMANDS.items():
        assert command in out and text.split()[0] in out


def test_named_command_is_the_first_argument_that_is_no_option():
    assert named_command(["--version"]) is None
    assert named_command(["compare", "a", "b"]) == "compare"
    assert named_command(["nosuch", "run"]) is None
    assert named_command([]) is None


def test_unknown_or_missing_command_is_a_usage_error(capsys):
    assert main(["nosuch"]) == 2
    assert "invalid choice: 'nosuch'" in capsys.readouterr().err
    assert main([]) == 2
    assert "required: COMMAND" in capsys.readouterr().err


def test_only_the_named_command_is_configured(monkeypatch):
    imported = []
    monkeypatch.setattr(
        cli_main, "command_module", lambda name: imported.append(name) or command_module(name)
    )
    args = cli_main.make_parser(["targets", "x.json"]).parse_args(["targets", "x.json"])
    assert imported == ["targets"]
    assert args.func is command_module("targets").run


def _benchkill(argv: list[str], cwd: Path, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    """``python -m benchkill ARGV`` in a real process: what reaches its stderr (fd 2)."""
    env = {"PYTHONPATH": str(PROJECT), "PATH": "/usr/bin:/bin", "HOME": str(cwd)}
    return subprocess.run(
        [sys.executable, "-m", "benchkill", *argv],
        cwd=cwd,
        env=env,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=300,
    )


def test_a_module_that_does_not_parse_is_one_line_on_the_real_stderr(tmp_path):
    """TVM's BlockBuilder, left with open blocks by the failed parse, logs a warning from
    C++ when it is freed; the command's stderr is still its one error line."""
    (tmp_path / "bad.py").write_text(
        "from tvm.script import relax as R\n\n"
        "@R.function\n"
        'def main(x: R.Tensor((4,), "float32")):\n'
        "    y = zzz\n"
        "    return y\n"
    )
    for command in ("apply", "verify"):
        done = _benchkill([command, "bad.py"], tmp_path)
        assert done.returncode == 2, done.stderr
        assert done.stderr.splitlines() == [
            "benchkill: error: cannot parse bad.py as TVMScript: error: Undefined variable: "
            "zzz (line 5)"
        ]


@pytest.mark.parametrize(
    "argv",
    [["generate", "chain", "50"], ["compare", "{a}", "{a}"], ["targets", "{baseline}"]],
    ids=lambda argv: argv[0],
)
def test_a_full_disk_on_stdout_is_one_line_and_exit_code_3(tmp_path, argv):
    """The measurement was made but could not be written: 3, not the 1 of a regression."""
    a = write_results(tmp_path / "a.json")
    with open("/dev/full", "w") as full:
        argv = [arg.format(a=a, baseline=next(BASELINES.glob("*.json"))) for arg in argv]
        done = _benchkill(argv, tmp_path, stdout=full)
    assert done.returncode == 3
    assert done.stderr.splitlines() == [
        "benchkill: error: cannot write to standard output: No space left on device"
    ]


def test_text_the_terminal_cannot_encode_is_escaped(tmp_path):
    """A file name that is not UTF-8 is printed with U+FFFD; a terminal that cannot show
    that (``PYTHONIOENCODING=ascii``, as under some ``LANG=C`` set-ups) gets an escape."""
    name = os.fsdecode(b"m-\xff.py")
    (tmp_path / name).write_text(
        "from tvm.script import relax as R\n\n"
        "@R.function\n"
        'def main(x: R.Tensor((4,), "float32")):\n'
        "    return x\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "benchkill", "verify", name],
        cwd=tmp_path,
        env={"PYTHONPATH": str(PROJECT), "PATH": "/usr/bin:/bin", "PYTHONIOENCODING": "ascii"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["ok: no violations in m-\\ufffd.py"]
