"""The one domain error of benchkill.

Library code raises :class:`BenchkillError` for anything a user can cause (bad input
files, wrong schema versions, invalid options, malformed IR).  The CLI entry point turns
it into a one-line message on stderr and exit code 2; the library never calls
``sys.exit`` and never prints a traceback for a user's mistake.
"""


class BenchkillError(Exception):
    """A user-facing error: its message is printed as one line and the CLI exits with 2."""


def _register_with_tvm_ffi() -> None:
    """Let a BenchkillError raised inside a TVM pass callback reach Python as itself."""
    try:
        import tvm_ffi
    except ImportError:  # pragma: no cover - tvm is a dependency
        return
    tvm_ffi.register_error("BenchkillError", BenchkillError)


_register_with_tvm_ffi()
