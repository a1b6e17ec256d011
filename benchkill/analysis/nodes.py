"""What the symbolic VM and the kill checker need to know of Relax nodes: their kind, the
variables an expression reads (:func:`vars_in`), and a short text of a binding for messages.

Kinds are decided once per Python class and cached: ``isinstance`` on TVM's ABCs is slow,
and the checker asks for every binding.
"""

from __future__ import annotations

import tvm
from tvm import relax

from benchkill.relax import ffi, ops

# Expression kinds (SEQ: a SeqExpr; NESTED: a local function).
VAR, CALL, TUPLE, ITEM, IF, NESTED, SEQ, CONSTANT, OP, OTHER = range(10)
_NODE_CLASSES = [
    (relax.Var, VAR),
    (relax.Call, CALL),
    (relax.Tuple, TUPLE),
    (relax.TupleGetItem, ITEM),
    (relax.If, IF),
    (relax.Function, NESTED),
    (relax.SeqExpr, SEQ),
    (tvm.ir.expr.Constant, CONSTANT),  # tensor constants, R.str, R.dtype, prim values
    (tvm.ir.Op, OP),
]
_LEAVES = (CONSTANT, OP, OTHER)
_node_cache: dict[type, int] = {}


def node_kind(expr: object) -> int:
    """The kind of an expression (one of VAR ... OTHER)."""
    cls = type(expr)
    kind = _node_cache.get(cls)
    if kind is None:
        kind = next((k for base, k in _NODE_CLASSES if issubclass(cls, base)), OTHER)
        _node_cache[cls] = kind
    return kind


# Type kinds: a tensor, a type without VM register, a PrimType (no register either), other.
TENSOR_TYPE, NO_REGISTER_TYPE, PRIM_TYPE, OTHER_TYPE = range(4)
_NO_REGISTER_TYPES = (relax.FuncType, relax.ShapeType)
_type_cache: dict[type, int] = {}


def type_kind(ty: object) -> int:
    """The kind of a Relax type (one of TENSOR_TYPE ... OTHER_TYPE)."""
    cls = type(ty)
    kind = _type_cache.get(cls)
    if kind is None:
        if issubclass(cls, relax.TensorType):
            kind = TENSOR_TYPE
        elif issubclass(cls, tvm.ir.PrimType):
            kind = PRIM_TYPE
        elif issubclass(cls, _NO_REGISTER_TYPES):
            kind = NO_REGISTER_TYPE
        else:
            kind = OTHER_TYPE
        _type_cache[cls] = kind
    return kind


def call_role(value: object) -> str | None:
    """The role (:data:`benchkill.relax.ops.ROLES`) of the operator a call calls, if any
    (``None`` for anything else than a call)."""
    if node_kind(value) == CALL:
        op = value.op
        if node_kind(op) == OP:
            return ops.role_of_handle().get(op.__chandle__())
    return None


def bindings_of(seq: relax.SeqExpr) -> list:
    """The bindings of a SeqExpr in text order, across its blocks."""
    return [b for block in ffi.items(seq.blocks) for b in ffi.items(block.bindings)]


def vars_in(expr: object) -> list:
    """The relax variables an expression reads where it is evaluated, in reading order.

    An ``If`` reads only its condition (its branches are scopes of their own, walked
    binding by binding); a kill reads nothing (it names the register it clears); a call
    reads its callee when that is a variable (a closure) and its arguments; a nested
    function or SeqExpr its free variables.  This is the one definition of a use for the
    kill checker, the liveness estimate and the trace's walker.  Recursion follows the
    nesting of one expression (a call's tuple argument), never the number of bindings."""
    cache = _node_cache
    kind = cache.get(type(expr))
    if kind is None:
        kind = node_kind(expr)
    if kind == VAR:
        return [expr]
    if kind == CALL:
        found = []
        op = expr.op
        op_kind = node_kind(op)
        if op_kind == VAR:
            found.append(op)
        elif op_kind == OP and ops.role_of_handle().get(op.__chandle__()) == ops.KILL:
            return found
        args = expr.args
        for i in range(ffi.array_size(args)):
            arg = ffi.array_get(args, i)
            arg_kind = cache.get(type(arg))
            if arg_kind is None:
                arg_kind = node_kind(arg)
            if arg_kind == VAR:
                found.append(arg)
            elif arg_kind not in _LEAVES:
                found.extend(vars_in(arg))
        return found
    if kind == TUPLE:
        return [v for field in ffi.items(expr.fields) for v in vars_in(field)]
    if kind == ITEM:
        return vars_in(expr.tuple_value)
    if kind == IF:
        return vars_in(expr.cond)
    if kind == NESTED or kind == SEQ:
        return list(relax.analysis.free_vars(expr))
    return []


# --- short text of bindings (only built for violations) ------------------------------------


def describe(binding: object) -> str:
    """A binding in one short line: ``b = R.call_packed('f', a)``, ``if c: ...``."""
    value = binding.value
    if isinstance(value, relax.If):
        text = f"if {short(value.cond)}: ..."
    elif isinstance(binding, relax.MatchCast):
        text = f"R.match_cast({short(value)}, ...)"
    else:
        text = short(value)
    if call_role(value) == ops.KILL:
        return text
    return f"{binding.var.name} = {text}"


def short(expr: object, limit: int = 80) -> str:
    """An expression in at most ``limit`` characters."""
    if isinstance(expr, relax.Var):
        text = expr.name
    elif isinstance(expr, relax.Call):
        op = expr.op
        args = [short(a, 20) for a in expr.args]
        if isinstance(op, tvm.ir.Op):
            callee = "R." + op.name.removeprefix("relax.")
        elif isinstance(op, relax.ExternFunc):
            callee, args = "R.call_packed", [repr(str(op.global_symbol)), *args]
        elif isinstance(op, tvm.ir.GlobalVar):
            callee = op.name_hint
        else:
            callee = short(op)
        text = f"{callee}({', '.join(args)})"
    elif isinstance(expr, relax.Tuple):
        text = f"({', '.join(short(f, 20) for f in expr.fields)})"
    elif isinstance(expr, relax.TupleGetItem):
        text = f"{short(expr.tuple_value)}[{int(expr.index)}]"
    elif isinstance(expr, tvm.ir.StringImm):
        text = repr(str(expr.value))
    elif isinstance(expr, (tvm.tirx.IntImm, tvm.tirx.FloatImm)):
        text = str(expr.value)
    elif isinstance(expr, relax.ShapeExpr):
        dims = (str(v.value) if isinstance(v, tvm.tirx.IntImm) else str(v) for v in expr.values)
        text = f"R.shape([{', '.join(dims)}])"
    elif isinstance(expr, tvm.ir.expr.Constant):
        text = "const"
    else:
        text = type(expr).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."
