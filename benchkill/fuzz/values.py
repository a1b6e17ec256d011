"""What a drawn lowered function is made of: the IR leaves, the kinds of values, and
:class:`Scopes`, the bookkeeping every statement of :mod:`benchkill.fuzz.lowered` binds
through (which values are visible, which roots are killed)."""

from __future__ import annotations

from functools import lru_cache

import tvm
import tvm.ir._ffi_api as _ir_ffi
import tvm.relax._ffi_api as _rx_ffi
import tvm_ffi
from hypothesis import strategies as st
from tvm import relax

from benchkill.inputs.kernels import Atoms, i64

#: Shape of every tensor of a drawn function (float32).
TENSOR_SHAPE = (4,)


class FuzzAtoms(Atoms):
    """The shared leaves for float32[4] tensors, and the fuzzer's own types and callees."""

    def __init__(self) -> None:
        super().__init__(TENSOR_SHAPE)
        self.scalar = relax.TensorType(relax.ShapeExpr([]), "float32")
        self.bool_tensor = relax.TensorType(relax.ShapeExpr([]), "bool")
        self.pair = tvm.ir.TupleType([self.tensor_ty, self.any_ty])
        self.loose = relax.TensorType(None, "float32", ndim=1)
        self.n = tvm.tirx.Var("n", "int64")
        self.symbolic = relax.TensorType(relax.ShapeExpr([self.n]), "float32")
        self.externs = [relax.ExternFunc(f"test.fuzz.f{i}") for i in range(3)]
        # Declared types less specific than, or other than, a value's (TVMScript keeps a
        # call binding's annotation, on the variable and on the call): kind -> (type, kind
        # of a variable declared so).
        self.declared = {
            TENSOR: (
                (self.loose, LOOSE),  # R.Tensor(ndim=1, dtype="float32")
                (relax.TensorType(None, "float32"), LOOSE),  # R.Tensor(dtype="float32")
                (relax.TensorType(None, None, ndim=1), LOOSE),  # R.Tensor(ndim=1)
                (relax.TensorType(None, None), LOOSE),  # R.Tensor: no shape, no dtype
                (self.any_ty, OBJECT),  # R.Any (R.Object is R.Any in TVM 0.27)
            ),
            SHAPE: ((relax.ShapeType(ndim=1), SHAPE), (relax.ShapeType(), SHAPE)),
        }
        #: a tensor of another shape (If branches whose types differ from the If's)
        self.other_tensor = relax.TensorType(relax.ShapeExpr([i64(8)]), "float32")
        #: a return annotation incomparable with every float32 result
        self.half_tensor = relax.TensorType(self.shape, "float16")


@lru_cache(maxsize=1)
def atoms() -> FuzzAtoms:
    """The leaves of every drawn module (immutable, so one instance serves them all)."""
    return FuzzAtoms()


# Kinds of values the generator tracks (what a variable holds, for picking operands).
TENSOR, STORAGE, OBJECT, PAIR, LITERAL, SHAPE, PRIM, NULL, CONST, BOOL, STRING, VOID = (
    "tensor",
    "storage",
    "object",
    "pair",
    "literal",
    "shape",
    "prim",
    "null",
    "const",
    "bool",
    "string",
    "void",
)
LOOSE = "loose"  # a tensor of another type: R.Tensor(ndim=1) or R.Tensor((n,)) after match_cast
#: kinds an extern call or a tuple literal may take as an argument
ANY_ARG = (TENSOR, STORAGE, OBJECT, PAIR, LITERAL, SHAPE, PRIM, NULL, CONST, BOOL, STRING, LOOSE)
#: kinds that hold a VM register (a kill of them is legal)
KILLABLE = (TENSOR, STORAGE, OBJECT, PAIR, LITERAL, BOOL, LOOSE)


#: Binding values a dataflow block may hold (no impure call, no If, no kill): the
#: operators among them are recognised by :func:`_pure_op_handles`.
_PURE_VALUES = (relax.Var, relax.Tuple, relax.TupleGetItem, tvm.ir.GenericConst, relax.ShapeExpr)


@lru_cache(maxsize=1)
def _pure_op_handles() -> frozenset[int]:
    probe = relax.Var("probe", relax.TensorType((1,), "float32"))
    calls = (
        relax.op.shape_of(probe),
        relax.op.call_pure_packed(relax.ExternFunc("f"), probe, ty_args=relax.AnyType()),
    )
    return frozenset(call.op.__chandle__() for call in calls)


def is_pure(binding) -> bool:
    """Whether ``binding`` may stand in a dataflow block."""
    if isinstance(binding, relax.MatchCast):
        return True
    value = binding.value
    if isinstance(value, relax.Call):
        op = value.op
        return isinstance(op, tvm.ir.Op) and op.__chandle__() in _pure_op_handles()
    if isinstance(value, tvm.ir.GenericConst | relax.TupleGetItem) or (
        isinstance(value, relax.Tuple)
        and any(isinstance(f, tvm.ir.GenericConst) for f in value.fields)
    ):
        # CanonicalizeBindings makes a variable used only in its dataflow block a
        # DataflowVar and then inlines no constant it is bound to (directly or as an item of
        # a tuple of constants): TVM's pass kills it (see tests/fuzz/test_fuzz.py), which
        # verify_kills reports.  Not drawn.
        return False
    return isinstance(value, _PURE_VALUES) and not isinstance(value, relax.DataflowVar)


class Value:
    """A variable of the drawn program and what it is (for picking operands and kills)."""

    __slots__ = (
        "var",
        "kind",
        "root",
        "depth",
        "exposes",
        "fields",
        "param",
        "serial",
        "item",
        "inferred",
    )
    _serials = iter(range(1 << 62))

    def __init__(self, var, kind, root=None, depth=0, fields=None, param=False):
        self.serial = next(self._serials)  # not id(): ids of dropped values get reused
        self.var = var
        self.kind = kind
        self.root = self if root is None else root  # the value CanonicalizeBindings keeps
        self.depth = depth
        self.fields = fields  # the field values of a tuple literal
        self.param = param
        self.item: tuple[Value, int] | None = None  # (tuple, index) of an item of a pair
        #: the type TVM infers for the call bound to a variable declared another type (a
        #: rebuilt call re-types its variable to it); None otherwise
        self.inferred = None
        # Roots this value lets a later binding reach (a tuple literal reaches its fields).
        exposes = {self.root.serial}
        for field in fields or ():
            exposes |= field.exposes
        self.exposes = frozenset(exposes)


class Scopes:
    """The state of one drawn function: its open scopes, the values they make visible and
    the roots already killed; the binding primitives of every statement.

    ``draw`` is the hypothesis ``draw`` of the statement being drawn.
    """

    def __init__(
        self,
        draw,
        max_statements: int,
        max_depth: int,
        string_vars: bool = False,
        branch_kills: bool = False,
    ):
        self.draw = draw
        self.branch_kills = branch_kills
        self.a = atoms()
        self.budget = max_statements
        self.max_depth = max_depth
        self.string_vars = string_vars
        self.scopes: list[list] = []  # bindings of each open scope
        self.values: list[Value] = []  # visible values, innermost scope last
        self.killed: set[int] = set()  # serials of killed roots
        self.names = 0

    # -- helpers -----------------------------------------------------------------------
    def name(self, prefix: str) -> str:
        self.names += 1
        return f"{prefix}{self.names}"

    def usable(self, kinds) -> list[Value]:
        return [v for v in self.values if v.kind in kinds and not (v.exposes & self.killed)]

    def pick(self, kinds) -> Value | None:
        pool = self.usable(kinds)
        if not pool:
            return None
        return pool[self.draw(st.integers(0, len(pool) - 1))]

    def depth(self) -> int:
        return len(self.scopes) - 1

    def bind(self, kind: str, ty, value, prefix: str, root=None, fields=None) -> Value:
        var = _ir_ffi.Var(self.name(prefix), ty, None)
        self.scopes[-1].append(_rx_ffi.VarBinding(var, value, None))
        return self.define(var, kind, root, fields)

    def define(self, var, kind, root=None, fields=None) -> Value:
        val = Value(var, kind, root, self.depth() if root is None else root.depth, fields)
        if kind != VOID:
            self.values.append(val)
        return val

    def call(self, ty, op, args, ty_args=()):
        return _ir_ffi.Call(ty, op, list(args), None, list(ty_args), None)

    def close(self, result) -> relax.SeqExpr:
        """The SeqExpr of the innermost scope, returning ``result``.

        Its bindings are cut into one to three blocks (TVM's pass merges adjacent blocks of
        one kind; its kills go in the block of their binding); in the function body, a
        block of bindings that may stand in a dataflow block may be one (TVM's pass then
        canonicalizes it: aliases removed, variables used only inside made DataflowVars).
        """
        bindings = self.scopes.pop()
        top = not self.scopes
        cuts = sorted({self.draw(st.integers(0, len(bindings))) for _ in range(2)})
        blocks = []
        for start, end in zip([0, *cuts], [*cuts, len(bindings)], strict=True):
            part = bindings[start:end]
            if not part:
                continue  # an empty scope has no block, as TVMScript parses it
            if top and all(is_pure(b) for b in part) and self.draw(st.booleans()):
                blocks.append(_rx_ffi.DataflowBlock(part, None))
            else:
                blocks.append(_rx_ffi.BindingBlock(part, None))
        seq = _rx_ffi.SeqExpr(blocks, result, None)
        _rx_ffi.UpdateType(seq, result.ty)
        return seq


def becomes_alias(picked, ty) -> bool:
    """Whether ``R.match_cast(picked, ty)`` may become an alias once CanonicalizeBindings has
    run: ``picked`` rebinds (declared another type, e.g. R.Any) a value of type ``ty``,
    which replaces it; or ``picked`` is declared another type than its call's, of type
    ``ty``, and a rebuilt call re-types it (``ReEmitBinding``).  A match_cast to a value's
    own type is an alias of it.  Not drawn: TVM's pass then kills the match_cast and its
    source as registers of their own, a kill of the other (``verify_kills``: kill-param,
    kill-output, double kill), and benchkill's default mode gives TVM's output; a known TVM
    behaviour, like the R.str variables of ``--string-vars``.  (The beyond mode handles
    it: tests/passes/test_rebuild_rules.py.)"""
    root = picked.root
    if root is not picked and tvm_ffi.structural_equal(root.var.ty, ty):
        return True
    inferred = root.inferred
    return inferred is not None and tvm_ffi.structural_equal(inferred, ty)
