"""Layer ``relax``: TVM plumbing with no benchkill policy.

Owns :mod:`.ops` (the one operator table, cached Op handles), :mod:`.ffi` (FFI helpers,
raw constructors, node classes), :mod:`.text` (TVMScript reading and writing).  Imports
only :mod:`benchkill.errors`; every other layer reaches TVM's IR through it or directly.

Importing it registers :class:`~benchkill.errors.BenchkillError` with TVM's FFI, so that
one raised inside a TVM pass callback (benchkill's pass is one) reaches Python as itself.
"""

from __future__ import annotations

import tvm_ffi

from benchkill.errors import BenchkillError

tvm_ffi.register_error("BenchkillError", BenchkillError)
