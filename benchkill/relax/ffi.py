"""Fast access to the Relax IR of apache-tvm 0.27: FFI helpers and raw constructors.

The pass touches every binding of modules with hundreds of thousands of bindings,
so it avoids the Python wrapper classes where they cost: arrays are indexed with
``ffi.ArrayGetItem`` directly (the wrapper's iterator calls ``ArraySize`` per item),
nodes are built with the raw FFI constructors, and variables are keyed by their
object handle (``__chandle__``), never by ``==`` (which builds an IR node for
PrimType variables).

Every FFI function the pass calls is its own ``tvm_ffi.Function`` object (:func:`held`),
set not to release the GIL: apache-tvm-ffi releases and re-takes it around every call by
default (``TVM_FFI_RELEASE_GIL_BY_DEFAULT``), a mutex and a condition variable per call:
holding it cut 4.7-6.1% of the pass's instructions (``take_gil``, ``drop_gil``,
``pthread_mutex_lock``... are gone: callgrind, README "The GIL").  The calls are short (an array
item, a constructor, one call's normalization) and none waits on another thread; TVM's
own functions keep their setting.
"""

from __future__ import annotations

import tvm
import tvm_ffi
from tvm import relax
from tvm.ir import expr as _ir_expr
from tvm.ir.prim import expr as _prim_expr


def held(name: str):
    """The registered FFI function ``name``, as a Function object of benchkill's own that
    does not release the GIL while it runs (see the module docstring)."""
    function = tvm_ffi.get_global_func(name)
    function.release_gil = False
    return function


array_get = held("ffi.ArrayGetItem")
array_size = held("ffi.ArraySize")

make_var_binding = held("relax.VarBinding")
make_binding_block = held("relax.BindingBlock")
make_dataflow_block = held("relax.DataflowBlock")
make_seq_expr = held("relax.SeqExpr")
make_if = held("relax.If")
make_function = held("relax.Function")
make_match_cast = held("relax.MatchCast")
make_call = held("ir.Call")
make_var = held("ir.Var")
make_dataflow_var = held("relax.DataflowVar")
missing_type = held("ir.TypeMissing")
update_type = held("relax.UpdateType")
normalize = held("relax.BlockBuilderNormalize")

# Node classes, compared with ``type(x) is C`` on the hot path.
Var = _ir_expr.Var
DataflowVar = relax.DataflowVar
Call = _ir_expr.Call
Tuple = relax.Tuple
TupleGetItem = relax.TupleGetItem
GenericConst = _ir_expr.GenericConst  # relax constant: R.const, R.dtype
If = relax.If
SeqExpr = relax.SeqExpr
Function = relax.Function
VarBinding = relax.VarBinding
MatchCast = relax.MatchCast
DataflowBlock = relax.DataflowBlock
ShapeExpr = relax.ShapeExpr
Op = tvm.ir.Op
GlobalVar = tvm.ir.GlobalVar
IntImm = _prim_expr.IntImm  # R.prim_value(...) of an int
FloatImm = _prim_expr.FloatImm
StringImm = _ir_expr.StringImm

TensorType = relax.TensorType
ShapeType = relax.ShapeType
FuncType = relax.FuncType
PrimType = tvm.ir.PrimType


def items(array) -> list:
    """The elements of an FFI array as a Python list (one FFI call per element)."""
    return [array_get(array, i) for i in range(array_size(array))]


def is_var(expr) -> bool:
    """A Relax variable (Var or DataflowVar) at a use site."""
    return type(expr) is Var or type(expr) is DataflowVar


def handle(obj) -> int:
    """The object handle: identity of an IR node, stable across Python wrappers."""
    return obj.__chandle__()
