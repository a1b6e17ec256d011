"""Step 2 of the pass: decide which kills go after which binding, and make them.

Rules of TVM's ``CollectLastUsage`` (apache-tvm 0.27, with the null_value fix):
a variable bound in a scope is killed after the binding that uses it last, unless
it is the scope's result, already killed, or not held in a VM register (constants,
``R.null_value()`` results, FuncType, ShapeType and PrimType values).  Storage (known by
its operator, ``alloc_storage``) gets ``kill_storage``; any other variable is classified
by its type, as ``kill_after_last_use.cc:120-131`` does: a TensorType variable gets
``kill_tensor`` (an ``alloc_tensor`` result annotated ``R.Object`` gets
``R.vm.kill_object``), other register objects ``R.vm.kill_object``; after one binding
the kills come in that order (tensors, storage, objects), each group in the order the
variables were bound.  A used variable of void type sends the function to the fallback
(rule 5b of :mod:`.canonicalize`).

TVM-compatible mode also reproduces a quirk of TVM's ``KillInserter``: visiting a
nested scope (an ``If`` branch or a local function) clears its table of last uses,
so a scope gets no kill at or after its first binding that holds a nested scope.

The beyond-TVM mode instead kills after the binding that holds the last use, in the
scope that binds the variable, or for a variable used outside that scope (see
:mod:`.last_use`), in the innermost scope that holds the binding and all its uses.

The kill bindings are built here, typed as TVM's BlockBuilder types them: the call
and its variable ``_`` get the void type ``R.Tuple()`` (printed ``None``), set by the
constructors, so nothing needs normalizing afterwards.  Each kill is one integer key
``(position, kind, order)`` until then, sorted once per scope: no container per kill.
"""

from __future__ import annotations

import bisect
import sys
from functools import cache

import tvm_ffi
from tvm import relax

from benchkill.passes.checks import is_void_type
from benchkill.passes.last_use import OUTPUT, STORAGE, NeedsTVMCanonicalization, Sweep
from benchkill.relax import ffi as ir
from benchkill.relax import ops

#: kill operator of each slot: 0 kill_tensor, 1 kill_storage, 2 kill_object
_SLOTS = 3


@cache
def _kill_makers() -> tuple:
    """(void type, kill operators by slot, an empty Array, and the Var, DataflowVar, Call
    and VarBinding constructors).  An empty Array made once costs nothing per call; a
    Python ``[]`` is converted at each call."""
    void = relax.TupleType([])
    kill_ops = tuple(ops.get_op(name) for name in ops.KILLS)
    empty = tvm_ffi.convert([])
    return (
        void,
        kill_ops,
        empty,
        ir.make_var,
        ir.make_dataflow_var,
        ir.make_call,
        ir.make_var_binding,
    )


def plan_kills(
    sweep: Sweep, *, exclude_null_value: bool, tvm_compatible: bool, make_kills=None
) -> dict[int, tuple[list[int], list]]:
    """Map ``scope index -> (positions, kills)``: the kill bindings to insert into the
    scope, in order, and the position of the binding each one follows (ascending).

    ``make_kills`` replaces what a kill is: :func:`kill_recipes` gives each as
    ``(kill operator, variable, whether its type was read)`` instead of its binding,
    built by nothing (the floor of :mod:`.profile` builds its kills itself)."""
    make_kills = make_kills or _make_kills
    skip = sweep.killed | sweep.constants  # never killed (again)
    if exclude_null_value:
        skip |= sweep.null_values
    storage = sweep.storage
    foreign = {} if tvm_compatible else sweep.foreign
    tensor_type, no_kill_types = ir.TensorType, (ir.ShapeType, ir.PrimType, ir.FuncType)
    # foreign kills, by the scope that gets them
    extra: dict[int, list[tuple[int, int, object]]] = {}
    for h, (scope, pos, var) in foreign.items():
        if pos >= 0 and h not in skip:
            extra.setdefault(scope.index, []).append((h, pos, var))

    excluded = skip | foreign.keys()  # kills of foreign variables go to ``extra``
    # beyond TVM: a match_cast to its source's own type shares the source's register, so
    # the source lives as long as the alias (TVM's pass kills it after its own last use)
    # (the alias itself is never killed: its kill would be one of the source)
    extended = {} if tvm_compatible or not sweep.aliases else _alias_lifetimes(sweep.aliases)
    if not tvm_compatible and sweep.aliases:
        excluded = excluded | {alias for _, alias, _ in sweep.aliases}
    plans = {}
    for scope in sweep.scopes:
        limit = scope.first_nested if tvm_compatible else sys.maxsize
        variables = scope.vars
        kinds = scope.kinds
        outside = extra.get(scope.index, ())
        # key = (pos * 3 + slot) * stride + order: sorting the keys sorts the kills
        stride = len(variables) + len(outside) + 1
        last = scope.last
        if extended:
            last = {h: extended.get(h, pos) for h, pos in last.items()}
        keys = []
        add_key = keys.append
        for order, (h, pos) in enumerate(last.items()):
            if pos is None or h in excluded:
                continue
            if kinds[order] == STORAGE:  # storage: known by its operator
                if -1 < pos < limit:
                    add_key((pos * _SLOTS + 1) * stride + order)
                continue
            # any other variable by its type, alloc_tensor results too (TVM's rule), and
            # the type of each used one read, wherever its last use is (rule 5b)
            var = variables[order]
            var_ty = var.ty
            ty = type(var_ty)
            if ty is tensor_type:
                slot = 0
            elif ty in no_kill_types:
                continue
            else:
                if ty is tuple_type and _void_use(var, var_ty):
                    raise NeedsTVMCanonicalization  # TVM replaces its uses by R.tuple()
                slot = 2
            if -1 < pos < limit:
                add_key((pos * _SLOTS + slot) * stride + order)
        if outside:
            variables = [*variables, *(var for _, _, var in outside)]
            for i, (h, pos, var) in enumerate(outside):
                slot = 1 if h in storage else _slot_of_type(var)
                if slot >= 0:
                    keys.append((pos * _SLOTS + slot) * stride + len(scope.vars) + i)
        if keys:
            keys.sort()
            plans[scope.index] = make_kills(scope, keys, stride, variables)
    return plans


def _alias_lifetimes(aliases: list) -> dict[int, int]:
    """handle -> last use of each source of a match_cast alias bound in the same scope,
    extended to the alias's last use (OUTPUT if either is the scope's result); chains of
    aliases are followed (the latest alias first)."""
    extended: dict[int, int] = {}
    for scope, alias, source in reversed(aliases):
        last = scope.last
        if source not in last:
            continue  # bound in an outer scope: killed after the If that holds the alias
        alias_pos = extended.get(alias, last[alias])
        source_pos = extended.get(source, last[source])
        if alias_pos is None:
            continue
        if alias_pos == OUTPUT or source_pos == OUTPUT:
            extended[source] = OUTPUT
        else:
            extended[source] = max(alias_pos, source_pos if source_pos is not None else -1)
    return extended


def _slot_of_type(var) -> int:
    var_ty = var.ty
    ty = type(var_ty)
    if ty is ir.TensorType:
        return 0
    if ty is ir.ShapeType or ty is ir.PrimType or ty is ir.FuncType:
        return -1
    if ty is tuple_type and _void_use(var, var_ty):
        raise NeedsTVMCanonicalization
    return 2


tuple_type = relax.TupleType


def _void_use(var, var_ty) -> bool:
    """A used Var of void type ``R.Tuple()``: TVM's Normalizer replaces each of its uses by
    ``R.tuple()`` (a DataflowVar is left alone), which benchkill does not reproduce."""
    return type(var) is ir.Var and is_void_type(var_ty)


def kill_recipes(scope, keys: list[int], stride: int, variables: list) -> tuple[list[int], list]:
    """:func:`_make_kills` without the kill bindings: ``(kill operator, variable, whether
    its type was read)`` of each (the type of every killed variable but a storage is)."""
    kill_ops = _kill_makers()[1]
    positions, recipes = [], []
    for key in keys:
        rest, order = divmod(key, stride)
        pos, slot = divmod(rest, _SLOTS)
        recipes.append((kill_ops[slot], variables[order], slot != 1))
        positions.append(pos)
    return positions, recipes


def _make_kills(scope, keys: list[int], stride: int, variables: list) -> tuple[list[int], list]:
    void, kill_ops, empty, new_var, new_dataflow_var, new_call, new_binding = _kill_makers()
    positions: list[int] = []
    kills: list = []
    add_position, add_kill = positions.append, kills.append
    block_kinds = scope.dataflow
    has_dataflow = True in block_kinds
    if has_dataflow:  # kills in a dataflow block bind DataflowVars
        starts, total = [], 0
        for bindings in scope.bindings:
            starts.append(total)
            total += len(bindings)
    if not has_dataflow:
        for key in keys:
            rest, order = divmod(key, stride)
            pos, slot = divmod(rest, _SLOTS)
            call = new_call(void, kill_ops[slot], (variables[order],), None, empty, None)
            add_kill(new_binding(new_var("_", void, None), call, None))
            add_position(pos)
        return positions, kills
    for key in keys:
        rest, order = divmod(key, stride)
        pos, slot = divmod(rest, _SLOTS)
        dataflow = block_kinds[bisect.bisect_right(starts, pos) - 1]
        make_var = new_dataflow_var if dataflow else new_var
        call = new_call(void, kill_ops[slot], (variables[order],), None, empty, None)
        add_kill(new_binding(make_var("_", void, None), call, None))
        add_position(pos)
    return positions, kills
