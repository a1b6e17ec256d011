"""The one domain error of benchkill.

Library code raises :class:`BenchkillError` for anything a user can cause (bad input
files, wrong schema versions, invalid options, malformed IR).  The CLI entry point turns
it into a one-line message on stderr and exit code 2; the library never calls
``sys.exit`` and never prints a traceback for a user's mistake.
"""


class BenchkillError(Exception):
    """A user-facing error: its message is printed as one line and the CLI exits with 2."""


def check_int(value: object, what: str, low: int = 1, high: int | None = None) -> int:
    """``value`` if it is an int (not a bool) in ``[low, high]``; else a BenchkillError
    naming ``what``.  The one integer check of the library (the CLI's argparse types in
    :mod:`benchkill.cli.args` use it too)."""
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
