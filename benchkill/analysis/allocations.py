"""What the text of a lowered Relax module allocates: bytes per function, tensor sizes.

:func:`static_allocations` adds up the constant sizes of the ``alloc_storage`` and
``R.builtin.alloc_tensor`` calls of each function (TVM's ``estimate_memory_usage`` "with
memory planning" figure, which :func:`tvm_planned_bytes` reads from TVM's own report).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from benchkill.relax import ops


def static_allocations(mod: Any) -> tuple[dict[str, int], dict[str, int]]:
    """Constant-size bytes allocated in the text of each Relax function, and the number of
    allocations whose size is symbolic (functions without any are left out)."""
    import tvm
    from tvm import relax

    allocated: dict[str, int] = {}
    dynamic: dict[str, int] = {}
    for gv, fn in mod.functions_items():
        if not isinstance(fn, relax.Function):
            continue
        total = count = 0
        for call in _calls(fn):
            role = ops.ROLES.get(ops.op_name(call))
            if role == ops.STORAGE:
                size = call.args[0].values[0]
            elif role == ops.BUILTIN_TENSOR:
                size = tensor_bytes_expr(call.args[0].values, call.args[1].value)
            else:
                continue
            if isinstance(size, tvm.tirx.IntImm):
                total += int(size.value)
            else:
                count += 1
        allocated[gv.name_hint] = total
        if count:
            dynamic[gv.name_hint] = count
    return allocated, dynamic


def tvm_planned_bytes(mod: Any) -> dict[str, float]:
    """Per function, the "with memory planning" bytes of TVM's estimate_memory_usage.

    TVM prints the figure in GB to four significant digits, so it is approximate.
    """
    from tvm import relax

    text = relax.analysis.estimate_memory_usage(mod)
    out: dict[str, float] = {}
    pattern = re.compile(
        r"- Function (\S+):.*?With memory planning, there are \d+ constant-size memory "
        r"allocation\(s\) with total size ([0-9.e+-]+) GB",
        re.S,
    )
    for name, gb in pattern.findall(text):
        out[name] = float(gb) * 2**30
    return out


def dtype_bytes(dtype: Any) -> int:
    """Bytes of one element of ``dtype`` (a string or a DataType), lanes included."""
    import tvm

    dt = tvm.DataType(str(dtype))
    return (dt.bits * dt.lanes + 7) // 8


def tensor_bytes_expr(dims: Sequence[Any], dtype: Any) -> Any:
    """Bytes of a tensor of shape ``dims``: an IntImm when every dim is constant."""
    import tvm

    nbytes = dtype_bytes(dtype)
    if all(isinstance(d, tvm.tirx.IntImm) for d in dims):
        return tvm.tirx.IntImm("int64", nbytes * math.prod(int(d.value) for d in dims))
    size: Any = tvm.tirx.IntImm("int64", nbytes)
    for d in dims:
        size = size * d
    return size


def _calls(expr: Any) -> list[Any]:
    from tvm import relax

    calls: list[Any] = []
    relax.analysis.post_order_visit(
        expr, lambda e: calls.append(e) if isinstance(e, relax.Call) else None
    )
    return calls
