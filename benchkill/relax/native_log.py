"""TVM's native log lines, kept out of benchkill's output.

TVM's C++ code writes its warnings (``LOG(WARNING)``) straight to file descriptor 2; e.g.
``LegalizeOps`` of every ``R.take`` prints ``topi/transform.h:...: Warning: Fast mode
segfaults when there are out-of-bounds indices``, several times per build, between
benchkill's progress lines, where a user cannot tell it from benchkill's own warnings.
Inside :func:`tvm_log_captured` descriptor 2 points to a temporary file; afterwards each
line it received goes to the logger ``benchkill.tvm`` at DEBUG level (``benchkill -v``
shows them) and the terminal sees none.  Python's own ``sys.stderr`` writes made inside
the block are captured the same way, so blocks stay small: a build, a lowering.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager

LOGGER = logging.getLogger("benchkill.tvm")
_lock = threading.RLock()
_depth = 0


@contextmanager
def tvm_log_captured() -> Iterator[None]:
    """Send what is written to file descriptor 2 during the block to the logger
    ``benchkill.tvm`` (DEBUG) instead of the terminal.  Nested blocks share the outer
    capture; without a usable descriptor 2 (a closed stderr) the block runs as it is."""
    global _depth
    with _lock:
        if _depth:
            _depth += 1
            try:
                yield
            finally:
                _depth -= 1
            return
        try:
            sys.stderr.flush()
            saved = os.dup(2)
        except (OSError, ValueError, AttributeError):
            yield
            return
        with tempfile.TemporaryFile(mode="w+b") as sink:
            os.dup2(sink.fileno(), 2)
            _depth = 1
            try:
                yield
            finally:
                _depth = 0
                try:
                    sys.stderr.flush()
                except (OSError, ValueError):
                    pass
                os.dup2(saved, 2)
                os.close(saved)
                sink.seek(0)
                for line in sink.read().decode("utf-8", "replace").splitlines():
                    if line.strip():
                        LOGGER.debug("%s", line)
