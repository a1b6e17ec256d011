"""Step 2 of the pass: decide which kills go after which binding.

Rules of TVM's ``CollectLastUsage`` (apache-tvm 0.27, with the null_value fix):
a variable bound in a scope is killed after the binding that uses it last, unless
it is the scope's result, already killed, or not held in a VM register (constants,
``R.null_value()`` results, FuncType, ShapeType and PrimType values).  Storage gets
``kill_storage``, tensors ``kill_tensor`` and other register objects
``R.vm.kill_object``; after one binding the kills come in that order (tensors,
storage, objects), each group in the order the variables were bound.

TVM-compatible mode also reproduces a quirk of TVM's ``KillInserter``: visiting a
nested scope (an ``If`` branch or a local function) clears its table of last uses,
so a scope gets no kill at or after its first binding that holds a nested scope.
"""

from __future__ import annotations

import sys

from . import ir
from .ir import KILL_OBJECT, KILL_STORAGE, KILL_TENSOR
from .last_use import OUTPUT, Sweep


def plan_kills(
    sweep: Sweep, *, exclude_null_value: bool, tvm_compatible: bool
) -> dict[int, dict[int, list[tuple[str, object]]]]:
    """Map ``id(scope) -> position -> [(kill op name, variable), ...]``."""
    plan: dict[int, dict[int, list[tuple[str, object]]]] = {}
    last_use = sweep.last_use
    killed = sweep.killed
    storage = sweep.storage
    tensors = sweep.tensors
    unregistered = set(sweep.constants)
    if exclude_null_value:
        unregistered |= sweep.null_values
    stack = [sweep.root]
    while stack:
        scope = stack.pop()
        for children in scope.children.values():
            stack.extend(children)
        limit = scope.first_nested if tvm_compatible else sys.maxsize
        groups: dict[int, tuple[list, list, list]] = {}
        for h, var, _pos in scope.defs:
            pos = last_use.get(h)
            if pos is None or pos == OUTPUT or pos >= limit or h in killed:
                continue
            if h in storage:
                slot = 1
            elif h in tensors:
                slot = 0
            elif h in unregistered:
                continue
            else:
                ty = type(var.ty)
                if ty is ir.TensorType:
                    slot = 0
                elif ty is ir.ShapeType or ty is ir.PrimType or ty is ir.FuncType:
                    continue
                else:
                    slot = 2
            group = groups.get(pos)
            if group is None:
                group = groups[pos] = ([], [], [])
            group[slot].append(var)
        if groups:
            plan[id(scope)] = {
                pos: [(KILL_TENSOR, v) for v in t]
                + [(KILL_STORAGE, v) for v in s]
                + [(KILL_OBJECT, v) for v in o]
                for pos, (t, s, o) in groups.items()
            }
    return plan
