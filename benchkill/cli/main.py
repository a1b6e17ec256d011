"""The ``benchkill`` command line: thin argparse subcommands over the library.

Each subcommand lives in ``benchkill/commands/<name>.py`` with ``add_parser(subparsers)``
and ``run(args) -> int``.  :class:`~benchkill.errors.BenchkillError` raised anywhere
becomes a one-line message on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import sys
from importlib import import_module

from benchkill import __version__
from benchkill.errors import BenchkillError

COMMANDS = (
    "run",
    "compare",
    "trust",
    "plot",
    "report",
    "targets",
    "generate",
    "apply",
    "profile",
    "verify",
    "fuzz",
)


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors are a BenchkillError (one line, exit code 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise BenchkillError(f"{self.prog}: {message}")


def make_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="benchkill", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"benchkill {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in COMMANDS:
        try:
            module = import_module(f"benchkill.cli.cmd_{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"benchkill.cli.cmd_{name}":
                continue  # not written yet
            raise
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = make_parser().parse_args(argv)
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


if __name__ == "__main__":
    sys.exit(main())
