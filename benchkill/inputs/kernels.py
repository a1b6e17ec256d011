"""The PrimFuncs and IR leaves that raw-built Relax modules share.

The generator families (:mod:`benchkill.inputs.families`) and the fuzzer's drawn modules
(:mod:`benchkill.fuzz`) build their IR with TVM's raw constructors, calling PrimFuncs that
take their output tensor as the last argument.  :func:`kernels` makes those PrimFuncs for a
tensor shape (float32, one ``T.sblock`` per kernel); :class:`Atoms` holds the leaves every
binding reuses: int64 immediates, the common types, the allocation arguments and the
operators (from :mod:`benchkill.relax.ops`).  IR nodes are immutable, so one instance
serves any number of modules.
"""

from __future__ import annotations

from functools import cache
from math import prod

import tvm
import tvm.relax._ffi_api as _rx_ffi
from tvm import relax

from benchkill.relax import ops

#: kernel name -> (its tensor inputs, its scalar input or None, the value it stores)
_BODIES = {
    "unary": (("a",), None, "{a} * T.float32(0.5) + T.float32(1)"),
    "binary": (("a", "b"), None, "({a} + {b}) * T.float32(0.5)"),
    "ternary": (("a", "b", "c"), None, "({a} + {b} + {c}) * T.float32(0.25)"),
    "scale": (("a",), "s", "{a} * s[()]"),
}
#: the kernels by number of tensor inputs, then the one that also takes a scalar tensor
KERNELS = tuple(_BODIES)

_FUNC = """
    @T.prim_func(private=True, s_tir=True)
    def {name}({params}):
        T.func_attr({{"tirx.noalias": True}})
        for {loops} in T.grid({extents}):
            with T.sblock("{name}"):
                {axes} = T.axis.remap("{kinds}", [{loops}])
                out[{axes}] = {value}
"""


def kernel_source(shape: tuple[int, ...]) -> str:
    """TVMScript of the module of the :data:`KERNELS` on float32 tensors of ``shape``."""
    extents = ", ".join(f"T.int64({d})" for d in shape)
    buffer = f'T.Buffer(({extents}{"," if len(shape) == 1 else ""}), "float32")'
    letters = "ijklmn"[: len(shape)]
    loops = ", ".join(letters)
    axes = ", ".join(f"v{x}" for x in letters)
    parts = ["@I.ir_module", "class Kernels:"]
    for name, (inputs, scalar, value) in _BODIES.items():
        params = [f"{x}: {buffer}" for x in inputs]
        if scalar is not None:
            params.append(f'{scalar}: T.Buffer((), "float32")')
        params.append(f"out: {buffer}")
        parts.append(
            _FUNC.format(
                name=name,
                params=", ".join(params),
                loops=loops,
                extents=extents,
                axes=axes,
                kinds="S" * len(shape),
                value=value.format(**{x: f"{x}[{axes}]" for x in inputs}),
            )
        )
    return "\n".join(parts)


@cache
def kernels(shape: tuple[int, ...]) -> tvm.IRModule:
    """The module of the :data:`KERNELS` for ``shape``, parsed once per process and shape."""
    return tvm.script.from_source(kernel_source(tuple(shape)))


def i64(value: int) -> tvm.ir.Expr:
    """An int64 immediate, as TVMScript writes ``T.int64(value)``."""
    return tvm.tirx.IntImm("int64", value)


class Atoms:
    """Leaves of the modules whose tensors are float32 of ``shape``.

    ``kernel_vars`` are GlobalVars (typed like their PrimFuncs) of the :data:`KERNELS`;
    a module that calls them holds :func:`kernels` ``(shape)[name]`` under each.
    """

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape_dims = tuple(shape)
        self.zero = i64(0)
        self.shape = relax.ShapeExpr([i64(d) for d in shape])
        self.shape_ty = self.shape.ty
        self.tensor_ty = relax.TensorType(self.shape, "float32")
        self.tensor_bytes = prod(shape) * 4
        self.any_ty = relax.AnyType()
        self.void_ty = tvm.ir.TupleType([])
        self.bool_ty = tvm.ir.PrimType("bool")
        self.int64_ty = tvm.ir.PrimType("int64")
        self.global_scope = tvm.ir.StringImm("global")
        self.uint8 = tvm.ir.GenericConst(tvm.DataType("uint8"), self.any_ty)
        self.float32 = tvm.ir.GenericConst(tvm.DataType("float32"), self.any_ty)
        #: the bytes of one tensor, as the size argument of an alloc_storage
        self.storage_bytes = relax.ShapeExpr([i64(self.tensor_bytes)])
        memory_storage, vm_storage = ops.ALLOC_STORAGE
        memory_tensor, vm_tensor = ops.ALLOC_TENSOR
        self.op_alloc_storage = ops.get_op(memory_storage)
        self.op_alloc_tensor = ops.get_op(memory_tensor)
        self.op_vm_alloc_storage = ops.get_op(vm_storage)
        self.op_vm_alloc_tensor = ops.get_op(vm_tensor)
        self.op_null_value = ops.get_op(ops.NULL_VALUE)
        self.op_kill_tensor = ops.get_op(ops.KILL_TENSOR)
        self.op_kill_storage = ops.get_op(ops.KILL_STORAGE)
        self.op_kill_object = ops.get_op(ops.KILL_OBJECT)
        module = kernels(self.shape_dims)
        self.kernel_vars: dict[str, tvm.ir.GlobalVar] = {}
        for name in KERNELS:
            gv = tvm.ir.GlobalVar(name)
            _rx_ffi.UpdateType(gv, module.get_global_var(name).ty)
            self.kernel_vars[name] = gv

    def kernel_functions(self, names=KERNELS) -> dict[tvm.ir.GlobalVar, tvm.tirx.PrimFunc]:
        """GlobalVar -> PrimFunc of the kernels ``names``, to put in a module."""
        module = kernels(self.shape_dims)
        return {self.kernel_vars[name]: module[name] for name in names}
