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

The beyond-TVM mode instead kills after the binding that holds the last use, in the
scope that binds the variable, or for a variable used outside that scope (see
:mod:`.last_use`), in the innermost scope that holds the binding and all its uses.
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
    unregistered = set(sweep.constants)
    if exclude_null_value:
        unregistered |= sweep.null_values
    foreign = {} if tvm_compatible else sweep.foreign
    # scope id -> position -> (tensors, storage, objects)
    groups: dict[int, dict[int, tuple[list, list, list]]] = {}

    def add(scope_id: int, pos: int, h: int, var) -> None:
        if h in sweep.killed:
            return
        if h in sweep.storage:
            slot = 1
        elif h in sweep.tensors:
            slot = 0
        elif h in unregistered:
            return
        else:
            ty = type(var.ty)
            if ty is ir.TensorType:
                slot = 0
            elif ty is ir.ShapeType or ty is ir.PrimType or ty is ir.FuncType:
                return
            else:
                slot = 2
        at = groups.setdefault(scope_id, {})
        group = at.get(pos)
        if group is None:
            group = at[pos] = ([], [], [])
        group[slot].append(var)

    last_use = sweep.last_use
    stack = [sweep.root]
    while stack:
        scope = stack.pop()
        for children in scope.children.values():
            stack.extend(children)
        limit = scope.first_nested if tvm_compatible else sys.maxsize
        for h, var, _pos in scope.defs:
            pos = last_use.get(h)
            if pos is None or pos == OUTPUT or pos >= limit or h in foreign:
                continue
            add(id(scope), pos, h, var)
    for h, (scope, pos, var) in foreign.items():
        if pos != OUTPUT:
            add(id(scope), pos, h, var)

    return {
        scope_id: {
            pos: [(KILL_TENSOR, v) for v in t]
            + [(KILL_STORAGE, v) for v in s]
            + [(KILL_OBJECT, v) for v in o]
            for pos, (t, s, o) in at.items()
        }
        for scope_id, at in groups.items()
    }
