"""Fast access to the Relax IR of apache-tvm 0.27 for the kill pass.

The pass touches every binding of modules with hundreds of thousands of bindings,
so it avoids the Python wrapper classes where they cost: arrays are indexed with
``ffi.ArrayGetItem`` directly (the wrapper's iterator calls ``ArraySize`` per item),
nodes are built with the raw FFI constructors, and variables are keyed by their
object handle (``__chandle__``), never by ``==`` (which builds an IR node for
PrimType variables).
"""

from __future__ import annotations

from functools import lru_cache

import tvm
import tvm.ir._ffi_api as _ir_api
import tvm.relax._ffi_api as _relax_api
import tvm_ffi
from tvm import relax
from tvm.ir import expr as _ir_expr

array_get = tvm_ffi.get_global_func("ffi.ArrayGetItem")
array_size = tvm_ffi.get_global_func("ffi.ArraySize")
deep_copy = tvm_ffi.get_global_func("ffi.DeepCopy")

make_var_binding = _relax_api.VarBinding
make_binding_block = _relax_api.BindingBlock
make_dataflow_block = _relax_api.DataflowBlock
make_seq_expr = _relax_api.SeqExpr
make_if = _relax_api.If
make_function = _relax_api.Function
make_match_cast = _relax_api.MatchCast
update_type = _relax_api.UpdateType
normalize = _relax_api.BlockBuilderNormalize

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

TensorType = relax.TensorType
ShapeType = relax.ShapeType
FuncType = relax.FuncType
PrimType = tvm.ir.PrimType


def items(array) -> list:
    """The elements of an FFI array as a Python list (one FFI call per element)."""
    return [array_get(array, i) for i in range(array_size(array))]


def handle(obj) -> int:
    """The object handle: identity of an IR node, stable across Python wrappers."""
    return obj.__chandle__()


KILL_TENSOR = "relax.memory.kill_tensor"
KILL_STORAGE = "relax.memory.kill_storage"
KILL_OBJECT = "relax.vm.kill_object"
ALLOC_STORAGE = ("relax.memory.alloc_storage", "relax.vm.alloc_storage")
ALLOC_TENSOR = ("relax.memory.alloc_tensor", "relax.vm.alloc_tensor")
NULL_VALUE = "relax.null_value"


@lru_cache(maxsize=None)
def get_op(name: str) -> tvm.ir.Op:
    return tvm.ir.Op.get(name)


@lru_cache(maxsize=None)
def op_handle(name: str) -> int:
    return handle(get_op(name))


@lru_cache(maxsize=None)
def _kill_var_template(dataflow: bool):
    """A ``_`` variable exactly as TVM's BlockBuilder emits it for a kill (no type)."""
    bb = relax.BlockBuilder()
    if dataflow:
        _relax_api.BlockBuilderBeginDataflowBlock(bb)
    else:
        _relax_api.BlockBuilderBeginBindingBlock(bb)
    arg = relax.Var("x", relax.TensorType((1,), "float32"))
    var = _relax_api.BlockBuilderEmit(bb, _kill_call_raw(KILL_TENSOR, arg), "_")
    _relax_api.BlockBuilderEndBlock(bb)
    return var


def _kill_call_raw(op_name: str, arg):
    return _ir_api.Call(_ir_api.TypeMissing(), get_op(op_name), [arg], None, [], None)


class KillFactory:
    """Builds kill bindings structurally equal to those TVM's pass emits.

    TVM emits ``_ = R.memory.kill_tensor(x)`` through the BlockBuilder, which leaves
    both the call and the variable without a type; the FFI constructors cannot set
    a null type, so the call is normalized in place and the variable is a copy of a
    template emitted once by a BlockBuilder.
    """

    def __init__(self) -> None:
        self._builder = relax.BlockBuilder()
        self._missing = _ir_api.TypeMissing()
        self._call = _ir_api.Call
        self._ops = {name: get_op(name) for name in (KILL_TENSOR, KILL_STORAGE, KILL_OBJECT)}
        self._templates = {False: _kill_var_template(False), True: _kill_var_template(True)}

    def __call__(self, op_name: str, var, dataflow: bool = False):
        call = self._call(self._missing, self._ops[op_name], [var], None, [], None)
        normalize(self._builder, call)
        return make_var_binding(deep_copy(self._templates[dataflow]), call, None)
