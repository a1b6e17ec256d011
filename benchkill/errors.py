"""The domain errors of benchkill and the exit codes they become.

Library code raises :class:`BenchkillError` for anything a user can cause (bad input
files, wrong schema versions, invalid options, malformed IR), and its subclass
:class:`MeasurementError` when good input could not be measured (a build or child
process failed, nothing was left to draw, a write failed).  The CLI entry point turns
either into a one-line message on stderr and the error's :attr:`~BenchkillError.exit_code`
(:class:`ExitCode`); the library never calls ``sys.exit`` and never prints a traceback for
a user's mistake.
"""

from enum import IntEnum


class ExitCode(IntEnum):
    """What ``benchkill``'s exit code means, the same for every command."""

    #: the command did what it was asked
    OK = 0
    #: the answer is bad: a regression, a kill violation, a mismatch with TVM's pass
    BAD_ANSWER = 1
    #: the input is bad: a file, an option, a module (a one-line error names it)
    BAD_INPUT = 2
    #: the measurement could not be made: a build or a child process failed, nothing was
    #: left to draw, an output could not be written
    NOT_MEASURED = 3
    #: interrupted (Ctrl-C, SIGTERM, SIGHUP); what was finished is kept
    INTERRUPTED = 130


class BenchkillError(Exception):
    """A user-facing error: its message is printed as one line and the CLI exits with
    :attr:`exit_code` (2: the input is bad)."""

    exit_code = ExitCode.BAD_INPUT


class MeasurementError(BenchkillError):
    """Good input that could not be measured (a build, a child process, a write failed;
    nothing to draw): one line, and the CLI exits with 3."""

    exit_code = ExitCode.NOT_MEASURED


def check_int(value: object, what: str, low: int = 1, high: int | None = None) -> int:
    """``value`` if it is an int (not a bool) in ``[low, high]``; else a BenchkillError
    naming ``what``.  The one integer check of the library (the command line checks its
    options with the argparse types of :mod:`benchkill.cli.args`)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        kind = "a positive integer" if low == 1 else f"an integer >= {low}"
        raise BenchkillError(f"{what} must be {kind}, not {value!r}")
    if high is not None and value > high:
        raise BenchkillError(f"{what} must be at most {high:,}, not {value:,}")
    return value


def one_line(exc: BaseException | str, limit: int = 300) -> str:
    """The line of an exception (or of a child's stderr) that says what went wrong.

    TVM errors put the useful ``Check failed ...`` line last, after a C++ backtrace;
    a TVMScript parser error names the source line in a ``--> file:line:col`` line,
    which is appended as ``(line N)``.
    """
    text = exc if isinstance(exc, str) else str(exc)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return "(no message)" if isinstance(exc, str) else type(exc).__name__
    where = next((line for line in lines if line.startswith("--> ")), None)
    if where is not None:
        return f"{lines[0]} (line {where.rsplit(':', 2)[-2]})"[:limit]
    backtrace = any(line.startswith(('File "', "Traceback", "#")) for line in lines)
    return (lines[-1] if backtrace or len(lines) > 1 else lines[0])[:limit]
