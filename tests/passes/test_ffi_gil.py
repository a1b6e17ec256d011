"""The pass's FFI functions hold the GIL (benchkill.relax.ffi's docstring); TVM's keep theirs."""

import os
import threading

import tvm.ir._ffi_api as ir_api
import tvm.relax._ffi_api as relax_api
import tvm_ffi

from benchkill.passes import canonicalize, checks, plan
from benchkill.relax import ffi as ir


def test_the_pass_calls_its_own_functions_and_tvms_still_release_the_gil():
    ours = [ir.array_get, ir.array_size, ir.make_call, ir.make_var_binding, ir.normalize]
    ours += [ir.make_seq_expr, ir.update_type, *plan._kill_makers()[3:], checks._erase]
    ours += [canonicalize._structural_equal, canonicalize.tir_vars_in_type]
    assert [f.release_gil for f in ours] == [False] * len(ours)
    theirs = [ir_api.Call, relax_api.VarBinding, relax_api.BlockBuilderNormalize]
    default = int(os.environ.get("TVM_FFI_RELEASE_GIL_BY_DEFAULT", "1")) != 0  # tvm_ffi's rule
    assert [f.release_gil for f in theirs] == [default] * len(theirs)
    assert ir.make_var_binding is not relax_api.VarBinding  # an object of benchkill's own


def test_a_call_that_holds_the_gil_can_still_call_back_into_python():
    """C++ that calls a Python function (as a normalization may) re-enters on the same
    thread, which holds the GIL: no deadlock, and the callback runs on this thread."""
    seen = []

    def callback(x):
        seen.append(threading.get_ident())
        return x + 1

    apply = ir.held("testing.apply")
    assert apply.release_gil is False
    assert apply(tvm_ffi.convert(callback), 41) == 42
    assert seen == [threading.get_ident()]
