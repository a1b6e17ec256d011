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

from benchkill.passes.last_use import OUTPUT, Sweep
from benchkill.relax import ffi as ir


def plan_kills(
    sweep: Sweep, *, exclude_null_value: bool, tvm_compatible: bool
) -> dict[int, dict[int, tuple[list, list, list]]]:
    """Map ``id(scope) -> position -> (tensors, storage, objects)`` to kill after it.

    The kills after one binding are emitted in that order: ``kill_tensor`` for the
    tensors, ``kill_storage`` for the storage, ``R.vm.kill_object`` for the objects.
    """
    skip = set(sweep.killed) | sweep.constants  # never killed (again)
    if exclude_null_value:
        skip |= sweep.null_values
    storage = sweep.storage
    tensors = sweep.tensors
    foreign = {} if tvm_compatible else sweep.foreign
    last_use = sweep.last_use
    # scope id -> position -> (tensors, storage, objects)
    groups: dict[int, dict[int, tuple[list, list, list]]] = {}

    def slot_of(h: int, var) -> int:
        """0: kill_tensor, 1: kill_storage, 2: kill_object, -1: no kill."""
        if h in storage:
            return 1
        if h in tensors:
            return 0
        ty = type(var.ty)
        if ty is ir.TensorType:
            return 0
        if ty is ir.ShapeType or ty is ir.PrimType or ty is ir.FuncType:
            return -1
        return 2

    stack = [sweep.root]
    while stack:
        scope = stack.pop()
        for children in scope.children.values():
            stack.extend(children)
        limit = scope.first_nested if tvm_compatible else sys.maxsize
        at: dict[int, tuple[list, list, list]] = {}
        for h, var, _pos in scope.defs:
            pos = last_use.get(h)
            if pos is None or pos < 0 or pos >= limit or h in skip or h in foreign:
                continue
            slot = 1 if h in storage else 0 if h in tensors else slot_of(h, var)
            if slot >= 0:
                group = at.get(pos)
                if group is None:
                    group = at[pos] = ([], [], [])
                group[slot].append(var)
        if at:
            groups[id(scope)] = at
    for h, (scope, pos, var) in foreign.items():
        if pos != OUTPUT and h not in skip:
            slot = slot_of(h, var)
            if slot >= 0:
                at = groups.setdefault(id(scope), {})
                group = at.get(pos)
                if group is None:
                    group = at[pos] = ([], [], [])
                group[slot].append(var)

    return groups
