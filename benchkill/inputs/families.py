"""Large Relax modules in the form KillAfterLastUse sees, built in time linear in size.

``generate(family, n_ops, seed)`` returns an IRModule whose ``main`` looks like the output of
TVM's default pipeline just before its kill step (after ``LowerAllocTensor``):
``R.memory.alloc_storage`` / ``R.memory.alloc_tensor`` bindings, calls of PrimFuncs that
take their output tensor as the last argument, VMShapeLower-style ``R.null_value()`` shape
heaps, ``If`` blocks.  Going through LegalizeOps and StaticPlanBlockMemory would cost
seconds per thousand ops, so the IR is built directly with TVM's raw FFI constructors
(no BlockBuilder, no normalization, no recursion over the IR), with every node typed as
TVMScript's parser would type it.  The tests check that by a print/parse round trip.

Every tensor is a 16x16 float32 (1 KiB); the PrimFuncs are real and the modules build
and run on the VM after the kill step.  A module is deterministic in (family, n_ops, seed).
"""

from __future__ import annotations

import random
from functools import cache

import tvm
import tvm.ir._ffi_api as _ir_ffi
import tvm.relax._ffi_api as _rx_ffi
from tvm import relax

from benchkill.errors import BenchkillError, check_int
from benchkill.inputs import models
from benchkill.inputs.kernels import KERNELS, Atoms, i64
from benchkill.relax.counting import count_bindings
from benchkill.vocabulary import FAMILIES as _FAMILIES

#: family name -> what its ``main`` is made of, one line each (the names and texts of
#: :data:`benchkill.vocabulary.FAMILIES`); ``n_ops`` of the model family counts layers
FAMILIES = _FAMILIES

#: Shape of every tensor (float32).
#: The largest module :func:`generate` makes (about 2.2 GiB of IR for a chain): a bound, so
#: that a typo such as ``generate chain 100000000000`` fails at once, not after minutes.
MAX_OPS = 10_000_000
_SHAPE = (16, 16)
#: ``planned``: storages allocated up front and reused, one tensor at a time at offset 0,
#: as TVM's StaticPlanBlockMemory does (PrimFuncs require a zero byte offset).
_POOL_STORAGES = 4
#: ``fanout``: op i also reads tensors i-1-a, a in [1, 16), and i-1-b, b in [16, 64).
_NEAR, _FAR = 16, 64
#: ``control``: deepest If nesting and largest number of ops inside one If.
_MAX_DEPTH = 3
_MAX_IF_OPS = 12


class _Atoms(Atoms):
    """The shared leaves for 16x16 tensors, and those of the families' own bindings."""

    def __init__(self) -> None:
        super().__init__(_SHAPE)
        self.storage_args = (self.storage_bytes, self.zero, self.global_scope, self.uint8)
        self.match_shape = relax.ExternFunc("vm.builtin.match_shape")
        self.match_shape_tail = (i64(2), i64(0), i64(_SHAPE[0]), i64(0), i64(_SHAPE[1]))
        self.error_context = tvm.ir.StringImm(
            'ErrorContext(fn=main, loc=value, annotation=R.Tensor((16, 16), dtype="float32"))'
        )
        self.loose_tensor_ty = relax.TensorType(None, "float32", ndim=2)
        # Scalars print inline in TVMScript (a (16, 16) constant would go to the metadata
        # section, whose printing crashes in this TVM build).
        self.half = relax.const(0.5, "float32")


class _Builder:
    """Appends raw-constructed bindings to the innermost open scope."""

    def __init__(self, atoms: _Atoms, kernels: dict[str, tvm.ir.GlobalVar]) -> None:
        self.a = atoms
        self.kernels = kernels
        self.scopes: list[list] = [[]]
        self.count = 0  # names

    # -- scopes ----------------------------------------------------------------------
    def open(self) -> None:
        self.scopes.append([])

    def close(self, result: relax.Var) -> relax.SeqExpr:
        """The SeqExpr of the innermost scope, returning ``result``."""
        bindings = self.scopes.pop()
        seq = _rx_ffi.SeqExpr([_rx_ffi.BindingBlock(bindings, None)], result, None)
        _rx_ffi.UpdateType(seq, result.ty)
        return seq

    def bind(self, name: str, ty: tvm.ir.Type, value: relax.Expr) -> relax.Var:
        var = _ir_ffi.Var(name, ty, None)
        self.scopes[-1].append(_rx_ffi.VarBinding(var, value, None))
        return var

    def name(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    # -- bindings --------------------------------------------------------------------
    def alloc_storage(self) -> relax.Var:
        a = self.a
        call = _ir_ffi.Call(a.any_ty, a.op_alloc_storage, a.storage_args, None, (), None)
        return self.bind(self.name("storage"), a.any_ty, call)

    def alloc_tensor(
        self, storage: relax.Var, shape: relax.Expr | None = None, offset: relax.Expr | None = None
    ) -> relax.Var:
        a = self.a
        shape = a.shape if shape is None else shape
        offset = a.zero if offset is None else offset
        args = (storage, offset, shape, a.float32, a.zero)
        call = _ir_ffi.Call(a.tensor_ty, a.op_alloc_tensor, args, None, (), None)
        return self.bind(self.name("alloc"), a.tensor_ty, call)

    def call_kernel(self, kernel: str, args: tuple) -> None:
        a = self.a
        call = _ir_ffi.Call(a.void_ty, self.kernels[kernel], args, None, (), None)
        self.bind("_", a.void_ty, call)

    def op(
        self, inputs: tuple, storage: relax.Var | None = None, kernel: str | None = None
    ) -> relax.Var:
        """One lowered operator: storage (unless given), its tensor, the kernel call."""
        if storage is None:
            storage = self.alloc_storage()
        out = self.alloc_tensor(storage)
        self.call_kernel(kernel or KERNELS[len(inputs) - 1], (*inputs, out))
        return out

    def null_value(self) -> relax.Var:
        a = self.a
        call = _ir_ffi.Call(a.any_ty, a.op_null_value, (), None, (), None)
        return self.bind("shape_heap", a.any_ty, call)

    def match_shape(self, value: relax.Var, heap: relax.Var) -> None:
        a = self.a
        args = (value, heap, *a.match_shape_tail, a.error_context)
        call = _ir_ffi.Call(a.void_ty, a.match_shape, args, None, (a.void_ty,), None)
        self.bind("_", a.void_ty, call)

    def kill(self, var: relax.Var, storage: bool = False) -> None:
        a = self.a
        op = a.op_kill_storage if storage else a.op_kill_tensor
        self.bind("_", a.void_ty, _ir_ffi.Call(a.void_ty, op, (var,), None, (), None))

    def rebind(self, var: relax.Var) -> relax.Var:
        return self.bind(self.name("y"), var.ty, var)

    def match_cast(self, var: relax.Var, ty: tvm.ir.Type) -> relax.Var:
        out = _ir_ffi.Var(self.name("m"), ty, None)
        self.scopes[-1].append(_rx_ffi.MatchCast(out, var, ty, None))
        return out

    def if_(
        self, cond: relax.Var, true_branch: relax.SeqExpr, false_branch: relax.SeqExpr
    ) -> relax.Var:
        node = _rx_ffi.If(cond, true_branch, false_branch, None)
        _rx_ffi.UpdateType(node, self.a.tensor_ty)
        return self.bind(self.name("r"), self.a.tensor_ty, node)

    def not_(self, cond: relax.Var) -> relax.Var:
        return self.bind(self.name("cond"), self.a.bool_ty, tvm.tirx.Not(cond))


# --- families ------------------------------------------------------------------------


def _chain(b: _Builder, x: relax.Var, n_ops: int, rng: random.Random) -> relax.Var:
    prev = x
    for _ in range(n_ops):
        prev = b.op((prev,))
    return prev


def _fanout(b: _Builder, x: relax.Var, n_ops: int, rng: random.Random) -> relax.Var:
    tensors = [x]
    for _ in range(n_ops):
        last = len(tensors) - 1
        near = tensors[max(0, last - rng.randrange(1, _NEAR))]
        far = tensors[max(0, last - rng.randrange(_NEAR, _FAR))]
        tensors.append(b.op((tensors[last], near, far)))
    return tensors[-1]


def _planned(b: _Builder, x: relax.Var, n_ops: int, rng: random.Random) -> relax.Var:
    pool = [b.alloc_storage() for _ in range(_POOL_STORAGES)]
    prev = x
    for i in range(n_ops):
        prev = b.op((prev,), pool[i % _POOL_STORAGES])
    return prev


def _shape_heap(b: _Builder, x: relax.Var, n_ops: int, rng: random.Random) -> relax.Var:
    heap = b.null_value()
    b.match_shape(x, heap)
    prev = x
    for _ in range(n_ops):
        prev = b.op((prev,))
        b.match_shape(prev, heap)
    return prev


def _control(
    b: _Builder, x: relax.Var, n_ops: int, rng: random.Random, cond: relax.Var
) -> relax.Var:
    return _control_scope(b, x, n_ops, rng, cond, depth=0)


def _control_scope(
    b: _Builder, prev: relax.Var, n_ops: int, rng: random.Random, cond: relax.Var, depth: int
) -> relax.Var:
    """``n_ops`` ops in the current scope, some of them inside If blocks (depth <= 3)."""
    remaining = n_ops
    while remaining > 0:
        if depth < _MAX_DEPTH and remaining >= 2 and rng.random() < 0.25:
            inside = rng.randint(2, min(remaining, _MAX_IF_OPS))
            prev = _if_block(b, prev, inside, rng, cond, depth + 1)
            remaining -= inside
        else:
            prev = b.op((prev,))
            remaining -= 1
    return prev


def _if_block(
    b: _Builder, prev: relax.Var, n_ops: int, rng: random.Random, cond: relax.Var, depth: int
) -> relax.Var:
    """An If whose two branches hold ``n_ops`` ops between them (at least one each)."""
    test = cond if rng.random() < 0.5 else b.not_(cond)
    n_true = rng.randint(1, n_ops - 1)
    branches = []
    for count in (n_true, n_ops - n_true):
        b.open()
        result = _control_scope(b, prev, count, rng, cond, depth)
        branches.append(b.close(result))
    return b.if_(test, *branches)


def _mixed(b: _Builder, x: relax.Var, n_ops: int, rng: random.Random, cond: relax.Var) -> relax.Var:
    a = b.a
    heap = b.null_value()
    pool = [b.alloc_storage() for _ in range(_POOL_STORAGES)]
    shape = b.bind("shape", a.shape_ty, a.shape)
    offset = b.bind("offset", a.int64_ty, a.zero)
    half = b.bind("half", a.half.ty, a.half)
    recent = [x]  # tensors later ops may still read
    pool_slot = 0
    for _ in range(n_ops):
        prev = recent[-1]
        kind = rng.random()
        if kind < 0.25:  # chain op, its result rebound as CallTIRRewrite leaves it
            out = b.rebind(b.op((prev,)))
        elif kind < 0.40:  # fan-in from an older tensor
            out = b.op((prev, rng.choice(recent)))
        elif kind < 0.50:  # planned: a tensor in a shared storage
            out = b.op((prev,), pool[pool_slot % _POOL_STORAGES])
            pool_slot += 1
        elif kind < 0.58:  # shape and prim values bound to variables
            storage = b.alloc_storage()
            out = b.alloc_tensor(storage, shape=shape, offset=offset)
            b.call_kernel("unary", (prev, out))
        elif kind < 0.66:  # constants, inline and bound
            out = b.op((prev, a.half if rng.random() < 0.5 else half), kernel="scale")
        elif kind < 0.74:  # match_cast, trivial or to a looser type
            ty = a.tensor_ty if rng.random() < 0.5 else a.loose_tensor_ty
            out = b.op((b.match_cast(prev, ty),))
        elif kind < 0.82:  # tuple and TupleGetItem
            fields = _ir_ffi.Tuple([prev, rng.choice(recent)], None)
            pair = b.bind(b.name("tup"), fields.ty, fields)
            item = b.bind(b.name("item"), a.tensor_ty, _ir_ffi.TupleGetItem(pair, 0, None))
            out = b.op((item,))
        elif kind < 0.88:  # the shape heap
            out = b.op((prev,))
            b.match_shape(out, heap)
        elif kind < 0.97:  # a pre-existing kill of a tensor no later op reads
            out = b.op((prev,))
            if len(recent) >= 2:
                retired = recent.pop(rng.randrange(len(recent) - 1))
                if retired is not x:
                    b.kill(retired)
        else:  # control flow
            out = _if_block(b, prev, 2, rng, cond, depth=_MAX_DEPTH)
        recent.append(out)
        if len(recent) > _NEAR:
            recent.pop(0)
    return recent[-1]


_FAMILY_BUILDERS = {
    "chain": _chain,
    "fanout": _fanout,
    "planned": _planned,
    "shape_heap": _shape_heap,
    "control": _control,
    "mixed": _mixed,
}
_WITH_COND = ("control", "mixed")


def generate(family: str, n_ops: int, seed: int = 0) -> tvm.IRModule:
    """A module of ``family`` with ``n_ops`` lowered operators in ``main``.

    Deterministic in (family, n_ops, seed).  ``main`` takes ``x: R.Tensor((16, 16),
    "float32")`` (and ``cond: R.Prim("bool")`` for "control" and "mixed") and returns
    the last tensor; the module also holds the PrimFuncs of
    :data:`benchkill.inputs.kernels.KERNELS`.
    """
    if family not in FAMILIES:
        raise BenchkillError(f"unknown family {family!r}; expected one of {', '.join(FAMILIES)}")
    check_int(n_ops, "n_ops", high=MAX_OPS)
    check_int(seed, "seed", low=-(2**63))
    if family == models.NAME:
        return models.generate(n_ops, seed)
    rng = random.Random(f"{family}/{n_ops}/{seed}")
    atoms = _Atoms()
    b = _Builder(atoms, atoms.kernel_vars)

    x = _ir_ffi.Var("x", atoms.tensor_ty, None)
    params = [x]
    extra = ()
    if family in _WITH_COND:
        cond = _ir_ffi.Var("cond", atoms.bool_ty, None)
        params.append(cond)
        extra = (cond,)
    result = _FAMILY_BUILDERS[family](b, x, n_ops, rng, *extra)
    body = b.close(result)
    attrs = tvm.ir.DictAttrs({"global_symbol": "main", "relax.force_pure": True})
    main = _rx_ffi.Function(params, body, atoms.tensor_ty, True, attrs, None)
    main_gv = tvm.ir.GlobalVar("main")
    _rx_ffi.UpdateType(main_gv, main.ty)
    return tvm.IRModule({main_gv: main, **atoms.kernel_functions()})


@cache
def size_model(family: str) -> tuple[float, float]:
    """(fixed bindings, bindings per op) of ``family``, fitted on 200- and 400-op modules.

    Exact for the regular families (e.g. chain: 0 + 3 per op); an average for the
    random ones (control, mixed).
    """
    if family == models.NAME:
        return models.size_model()
    small, large = (count_bindings(generate(family, n)) for n in (200, 400))
    per_op = (large - small) / 200
    return small - 200 * per_op, per_op


def ops_for_bindings(family: str, bindings: int) -> int:
    """The ``n_ops`` whose module has (about, for control and mixed) ``bindings`` bindings."""
    check_int(bindings, "bindings")
    fixed, per_op = size_model(family)
    return max(1, round((bindings - fixed) / per_op))
