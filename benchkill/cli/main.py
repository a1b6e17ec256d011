"""The ``benchkill`` command line: thin argparse subcommands over the library.

:data:`COMMANDS` names every command with its one-line help.  The module of a command,
``benchkill/cli/cmd_<name>.py`` with ``add_arguments(parser)`` and ``run(args) -> int``,
is imported only when that command is named on the command line, so ``benchkill --help``
imports no command at all and ``benchkill compare --help`` only ``cmd_compare`` (whose
own imports are cheap; TVM is imported inside the functions that need it).
:class:`~benchkill.errors.BenchkillError` raised anywhere becomes a one-line message on
stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from importlib import import_module

from benchkill import __version__
from benchkill.errors import BenchkillError

#: command -> one-line help, in the order ``benchkill --help`` lists them
COMMANDS = {
    "run": "run benchmark suites, save results",
    "compare": "compare two results files (benchkill or asv)",
    "trust": "measure false alarms (A/A) and detections (A/B, slowed pass) of compare",
    "plot": "draw figures of results files",
    "report": "write a Markdown report of results files",
    "targets": "print the target figures (pass time ratios, scaling exponents, VM memory)",
    "generate": "print a generated Relax module (the pass benchmark's input) as TVMScript",
    "apply": "apply a KillAfterLastUse variant to a module file or a generated module",
    "profile": "CPU time per binding of each step of benchkill's pass on a generated module",
    "verify": "check the kills of a lowered Relax module (TVMScript file)",
    "fuzz": "differential fuzzing: benchkill's kill pass vs TVM's on random lowered modules",
    "equivalence": "benchkill's kill pass vs TVM's on the Relax modules of TVMScript/test files",
}


DESCRIPTION = (
    "Benchmark and profile TVM Relax's KillAfterLastUse pass; "
    "`benchkill COMMAND --help` describes a command."
)


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors are a BenchkillError (one line, exit code 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise BenchkillError(f"{self.prog}: {message}")


def command_module(name: str):
    """The module implementing command ``name`` (imported now)."""
    return import_module(f"benchkill.cli.cmd_{name}")


def named_command(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names: its first argument that is not an option (the
    top-level options, ``--help`` and ``--version``, take no value)."""
    first = next((a for a in argv if not a.startswith("-")), None)
    return first if first in COMMANDS else None


def make_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The parser for ``argv``: every command listed, the arguments of the named one only."""
    parser = _Parser(prog="benchkill", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"benchkill {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    chosen = named_command(argv)
    for name, text in COMMANDS.items():
        p = sub.add_parser(name, help=text, description=text)
        if name == chosen:
            module = command_module(name)
            module.add_arguments(p)
            p.set_defaults(func=module.run)
    return parser


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _catch_termination() -> dict[int, object]:
    """SIGTERM and SIGHUP (a closed terminal) unwind like Ctrl-C, so finished cases are
    kept, locks released and temporary directories removed; returns the old handlers.
    A signal ignored (``nohup``) or handled by the host program is left as it is."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    signals = (signal.SIGTERM, signal.SIGHUP)
    return {
        s: signal.signal(s, _interrupt) for s in signals if signal.getsignal(s) == signal.SIG_DFL
    }


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    previous = _catch_termination()
    try:
        args = make_parser(argv).parse_args(argv)
        return int(args.func(args) or 0)
    except BenchkillError as exc:
        print(f"benchkill: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("benchkill: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `benchkill generate chain 9 | head`
        sys.stderr.close()
        return 0
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


if __name__ == "__main__":
    sys.exit(main())
