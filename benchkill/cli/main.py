"""The ``benchkill`` command line: thin argparse subcommands over the library.

:data:`COMMANDS` names every command with its one-line help.  The module of a command,
``benchkill/cli/cmd_<name>.py`` with ``add_arguments(parser)`` and ``run(args) -> int``,
is imported only when that command is named on the command line, so ``benchkill --help``
imports no command at all and ``benchkill compare --help`` only ``cmd_compare`` (whose
own imports are cheap; TVM is imported inside the functions that need it).

The exit code means the same for every command (:class:`~benchkill.errors.ExitCode`,
listed in each command's help by :func:`configure`): a command returns 0 or 1 (the
answer is bad); :class:`~benchkill.errors.BenchkillError` raised anywhere becomes a
one-line message on stderr and its ``exit_code``, 2 (the input is bad) or, for a
:class:`~benchkill.errors.MeasurementError`, 3 (the measurement could not be made), as
does a failed write to standard output.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import textwrap
import threading
from collections.abc import Sequence
from importlib import import_module

from benchkill import __version__
from benchkill.errors import BenchkillError, ExitCode

#: command -> one-line help, in the order ``benchkill --help`` lists them
COMMANDS = {
    "run": "run the benchmark suites and save a results file (--quick: about 2 min)",
    "merge": "join the results files of a run's shards (run --shard K/N) into one",
    "export": "write results files as asv results, for asv publish's dashboard",
    "compare": "compare two results files: regressions, improvements (exit 1 on a regression)",
    "report": "write a Markdown report: headline, comparison, figures, tables",
    "plot": "draw the figures of results files (PNG and SVG)",
    "targets": "print the target figures of results files, each met or not",
    "memory": "explain a VM run's peak memory per kill variant: holders, waste, trace",
    "trust": "measure how often compare raises false alarms and catches a slowdown",
    "bisect": "find the commit that made a regression, each commit measured with its own code",
    "history": "change points over a history of runs (exit 1 when the newest is a regression)",
    "generate": "print a generated Relax module, the pass benchmark's input",
    "apply": "run a KillAfterLastUse variant on a module and print the result",
    "profile": "time each step of benchkill's pass (generated module or a file)",
    "verify": "check the kills of a lowered Relax module (use after kill, double kill, ...)",
    "fuzz": "check benchkill's pass against TVM's on random lowered modules",
    "equivalence": "benchkill's kill pass vs TVM's on the Relax modules of TVMScript/test files",
}


DESCRIPTION = (
    "benchkill measures TVM Relax's KillAfterLastUse pass, which frees each tensor after "
    "its last use: how fast benchkill's Python implementation of the pass is against TVM's "
    "C++ pass, and how much memory the kills save when a model runs on the Relax VM.  "
    "Results are versioned JSON files that the other commands compare, plot and report."
)

#: What an exit code means, the same for every command; a command's module may say what
#: its 1 and its 3 are (``BAD_ANSWER``, ``NOT_MEASURED``), and lists code 1 only then.
EXIT_MEANINGS = {
    ExitCode.OK: "done",
    ExitCode.BAD_ANSWER: "the answer is bad",
    ExitCode.BAD_INPUT: "the input is bad (a one-line error on stderr names it)",
    ExitCode.NOT_MEASURED: "the measurement could not be made",
    ExitCode.INTERRUPTED: "interrupted (what was finished is kept)",
}
#: What code 3 means for a command that does not say.
NOT_MEASURED = "a build or a child process failed, or an output could not be written"
#: What codes 1 and 3 are, over all commands (``benchkill --help``).
ANY_COMMAND = {
    "BAD_ANSWER": "a regression, a kill violation, a mismatch with TVM's pass",
    "NOT_MEASURED": "a build or a child process failed, nothing was left to draw, an output "
    "could not be written",
}


def exit_codes(module: object, title: str = "exit codes:") -> str:
    """The "exit codes" section of a command's help (``module``: its cmd_ module, or
    :data:`ANY_COMMAND`'s meanings for all of them)."""
    said = {
        ExitCode.BAD_ANSWER: getattr(module, "BAD_ANSWER", None),
        ExitCode.NOT_MEASURED: getattr(module, "NOT_MEASURED", NOT_MEASURED),
    }
    lines = [title]
    for code, meaning in EXIT_MEANINGS.items():
        if code == ExitCode.BAD_ANSWER and said[code] is None:
            continue  # the command gives no verdict
        text = f"{meaning}: {said[code]}" if said.get(code) else meaning
        head, rest = f"  {int(code):<3}  ", " " * 7
        lines += textwrap.wrap(text, 78, initial_indent=head, subsequent_indent=rest)
    return "\n".join(lines)


EPILOG = f"""\
start with:
  benchkill run --quick                      # both suites, about 2 minutes
  benchkill report results/<machine>/*.json  # the answer first, then details
  benchkill compare OLD.json NEW.json        # exit 1 on a regression

{exit_codes(argparse.Namespace(**ANY_COMMAND), "exit codes (every command):")}

`benchkill COMMAND --help` describes a command and its options."""


def _shown_default(action: argparse.Action) -> str | None:
    """An option's default as its help shows it, or None to show none."""
    default = action.default
    if default is None or default is argparse.SUPPRESS or not action.option_strings:
        return None
    if action.nargs == 0:  # a flag
        return "off" if isinstance(action, argparse._StoreTrueAction) else None  # noqa: SLF001
    if isinstance(default, (list, tuple)):
        return (" " if action.nargs is not None else ",").join(map(str, default)) or "none"
    if isinstance(default, float):
        return f"{default:g}"
    return str(default)


class HelpFormatter(argparse.HelpFormatter):
    """Help for users: paragraphs are wrapped but indented lines (examples, tables) kept
    as written, and every option shows its default once (flags: "off").  Help texts are
    plain text: a ``%`` in one is printed as it is."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        blocks = []
        for block in text.split("\n\n"):
            lines = block.splitlines()
            if any(line.startswith(" ") for line in lines[1:]) or block.startswith(" "):
                blocks.append("\n".join(indent + line for line in lines))
            else:
                blocks.append(
                    textwrap.fill(
                        " ".join(block.split()),
                        width,
                        initial_indent=indent,
                        subsequent_indent=indent,
                    )
                )
        return "\n\n".join(blocks)

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        shown = _shown_default(action)
        if shown is not None and "(default" not in text:
            text = f"{text} (default: {shown})"
        return text.replace("%", "%%")  # argparse %-formats the result


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


def configure(p: argparse.ArgumentParser, name: str) -> None:
    """Give the parser ``p`` of command ``name`` its arguments, its exit codes and its
    ``run`` function (imports the command's module)."""
    module = command_module(name)
    module.add_arguments(p)
    p.epilog = "\n\n".join(filter(None, [p.epilog, exit_codes(module)]))
    p.set_defaults(func=module.run)


def make_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The parser for ``argv``: every command listed, the arguments of the named one only."""
    parser = _Parser(
        prog="benchkill", description=DESCRIPTION, epilog=EPILOG, formatter_class=HelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"benchkill {__version__}")
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also print TVM's own log lines (its C++ warnings), which benchkill keeps "
        "off the terminal otherwise",
    )
    sub = parser.add_subparsers(
        title="commands", dest="command", metavar="COMMAND", required=True, parser_class=_Parser
    )
    chosen = named_command(argv)
    for name, text in COMMANDS.items():
        p = sub.add_parser(name, help=text, description=text, formatter_class=HelpFormatter)
        if name == chosen:
            configure(p, name)
    return parser


def full_parser() -> argparse.ArgumentParser:
    """The parser of :func:`make_parser` with the arguments of every command (each
    command's module imported now).  The documentation's CLI reference is generated from
    it (sphinx-argparse), so it says what ``benchkill COMMAND --help`` says."""
    parser = make_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for name, p in commands.choices.items():
        configure(p, name)
    return parser


def _interrupt(_signum: int, _frame: object) -> None:
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


class _OutputError(Exception):
    """Standard output cannot be written (a full disk, a closed terminal...)."""


class _Stdout:
    """``sys.stdout`` during a command: a write error other than a broken pipe becomes
    :class:`_OutputError` (one line, exit code 3), not a traceback."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def _do(self, method: str, *args):
        try:
            return getattr(self._stream, method)(*args)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise _OutputError(exc.strerror or str(exc)) from None

    def write(self, text: str):
        return self._do("write", text)

    def flush(self) -> None:
        self._do("flush")

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _escape_unencodable() -> None:
    """Text the terminal's encoding cannot show (a file name that is not UTF-8, printed
    as U+FFFD, under ``LANG=C``) is printed as escapes, never an error."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # a stream that cannot: left as it is
                pass


def _silence_stdout() -> None:
    """After a write error, send what is left in stdout's buffer nowhere, so the
    interpreter's flush at exit raises nothing."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _show_tvm_log() -> None:
    """Print the lines of :mod:`benchkill.relax.native_log`'s logger to stderr."""
    logger = logging.getLogger("benchkill.tvm")
    if not any(getattr(h, "_benchkill", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("tvm: %(message)s"))
        handler._benchkill = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    previous = _catch_termination()
    _escape_unencodable()
    stdout = sys.stdout
    sys.stdout = _Stdout(stdout)  # type: ignore[assignment]
    try:
        args = make_parser(argv).parse_args(argv)
        if args.verbose:
            _show_tvm_log()
        code = int(args.func(args) or ExitCode.OK)
        sys.stdout.flush()
        return code
    except BenchkillError as exc:
        print(f"benchkill: error: {exc}", file=sys.stderr)
        return int(exc.exit_code)
    except _OutputError as exc:
        print(f"benchkill: error: cannot write to standard output: {exc}", file=sys.stderr)
        sys.stdout = stdout
        _silence_stdout()
        return int(ExitCode.NOT_MEASURED)
    except KeyboardInterrupt:
        print("benchkill: interrupted", file=sys.stderr)
        return int(ExitCode.INTERRUPTED)
    except BrokenPipeError:  # e.g. `benchkill generate chain 9 | head`
        sys.stderr.close()
        return int(ExitCode.OK)
    finally:
        sys.stdout = stdout
        for sig, handler in previous.items():
            signal.signal(sig, handler)


if __name__ == "__main__":
    sys.exit(main())
