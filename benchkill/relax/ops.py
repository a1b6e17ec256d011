"""The Relax operators benchkill reasons about: one table, with cached Op handles.

Every layer that recognises an allocation, a kill or ``R.null_value()`` asks this
module, so the names are written once.  :func:`role_of_handle` maps an operator's object
handle to its role, the form the hot paths use (an ``Op`` compared by handle costs one
FFI call; ``==`` on IR nodes builds objects).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tvm

KILL_TENSOR = "relax.memory.kill_tensor"
KILL_STORAGE = "relax.memory.kill_storage"
KILL_OBJECT = "relax.vm.kill_object"
#: the three kill operators, in the order TVM's pass emits them after one binding
KILLS = (KILL_TENSOR, KILL_STORAGE, KILL_OBJECT)
ALLOC_STORAGE = ("relax.memory.alloc_storage", "relax.vm.alloc_storage")
ALLOC_TENSOR = ("relax.memory.alloc_tensor", "relax.vm.alloc_tensor")
#: a tensor allocated by the VM's builtin, outside any storage (lowered ``R.builtin.alloc_tensor``)
BUILTIN_ALLOC_TENSOR = "relax.builtin.alloc_tensor"
NULL_VALUE = "relax.null_value"

#: Roles of the operators above.
KILL, STORAGE, TENSOR, BUILTIN_TENSOR, NULL = "kill", "storage", "tensor", "builtin-tensor", "null"
ROLES: dict[str, str] = {
    **dict.fromkeys(KILLS, KILL),
    **dict.fromkeys(ALLOC_STORAGE, STORAGE),
    **dict.fromkeys(ALLOC_TENSOR, TENSOR),
    BUILTIN_ALLOC_TENSOR: BUILTIN_TENSOR,
    NULL_VALUE: NULL,
}


@cache
def get_op(name: str) -> tvm.ir.Op:
    """The registered operator ``name`` (one lookup per process)."""
    import tvm

    return tvm.ir.Op.get(name)


@cache
def op_handle(name: str) -> int:
    """The object handle of operator ``name``: its identity, stable across wrappers."""
    return get_op(name).__chandle__()


@cache
def role_of_handle() -> dict[int, str]:
    """Operator handle -> role, for every operator in :data:`ROLES`."""
    return {op_handle(name): role for name, role in ROLES.items()}


@cache
def ops_with_attr(attr: str) -> tuple[str, ...]:
    """Names of the registered operators that have the attribute ``attr`` (for example
    ``"FNormalize"``), asked of TVM once per process: discovered, never listed here."""
    import tvm

    return tuple(
        sorted(n for n in tvm.ir.Op.list_op_names() if tvm.ir.Op.get(n).get_attr(attr) is not None)
    )


def op_name(call) -> str | None:
    """The operator name of a Relax call, or None when it calls something else."""
    import tvm

    return call.op.name if isinstance(call.op, tvm.ir.Op) else None
