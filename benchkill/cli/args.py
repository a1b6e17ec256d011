"""argparse ``type=`` checks shared by the commands (the options that use them are
defined once in :mod:`benchkill.cli.common_args`).

Each raises :class:`argparse.ArgumentTypeError`, so argparse's message names the option
(``argument --repeats: must be at least 1, got 0``), and the command line turns it into
one line and exit code 2.  No command parses numbers or patterns by itself.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable
from pathlib import Path


def out_path(text: str) -> Path:
    """A path to write (an empty one would mean the current directory)."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path")
    return Path(text)


def int_at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: a whole number no smaller than ``minimum``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    parse.__name__ = f"int_at_least_{minimum}"
    return parse


#: A whole number >= 1 (sizes, counts, repeats).
positive_int = int_at_least(1)
#: A whole number >= 0 (seeds, optional counts).
non_negative_int = int_at_least(0)


def _number(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid {what} {text!r}: not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"invalid {what} {text!r}: not a finite number")
    return value


def positive_float(text: str) -> float:
    """A finite number above 0 (e.g. a fraction such as ``0.10``)."""
    value = _number(text, "number")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"invalid number {text!r}: must be above 0")
    return value


#: The longest timeout a command takes: a week (the OS's timers overflow far above it).
MAX_TIMEOUT = 7 * 24 * 3600.0


def timeout_seconds(text: str) -> float:
    """Seconds above 0, at most :data:`MAX_TIMEOUT`."""
    value = positive_float(text)
    if value > MAX_TIMEOUT:
        raise argparse.ArgumentTypeError(
            f"invalid number {text!r}: at most {MAX_TIMEOUT:.0f} seconds (a week)"
        )
    return value


def factor(text: str) -> float:
    """A finite ratio above 1 (``1.10`` = a change of 10%)."""
    value = _number(text, "factor")
    if value <= 1.0:
        raise argparse.ArgumentTypeError(f"invalid factor {text!r}: must be a number above 1")
    return value


def alpha(text: str) -> float:
    """A significance level strictly between 0 and 1."""
    value = _number(text, "alpha")
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"invalid alpha {text!r}: must be between 0 and 1")
    return value


def regex(text: str) -> re.Pattern[str]:
    """A Python regular expression, compiled."""
    try:
        return re.compile(text)
    except re.error as exc:
        raise argparse.ArgumentTypeError(f"invalid regular expression {text!r}: {exc}") from None


def comma_list(choices: tuple[str, ...]) -> Callable[[str], tuple[str, ...]]:
    """An argparse type: a comma-separated list of some of ``choices``, in their order."""

    def parse(text: str) -> tuple[str, ...]:
        names = [n.strip() for n in text.split(",") if n.strip()]
        unknown = [n for n in names if n not in choices]
        if unknown or not names:
            raise argparse.ArgumentTypeError(
                f"invalid {text!r}: expected a comma-separated list of {', '.join(choices)}"
            )
        return tuple(c for c in choices if c in names)

    parse.__name__ = "comma_list"
    return parse


def assignment(text: str) -> tuple[str, str]:
    """``NAME=VALUE`` -> (name, value), both stripped and not empty."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip() or not value.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name.strip(), value.strip()
