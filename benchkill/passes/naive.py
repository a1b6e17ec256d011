"""A naive Python port of TVM's C++ ``KillAfterLastUse``: the "before optimization" baseline.

This is a line-by-line translation of ``src/relax/transform/kill_after_last_use.cc``
(with the upstream ``R.null_value()`` fix, apache/tvm#20267) onto TVM's Python
``PyExprVisitor``/``PyExprMutator``, so every visited node crosses the FFI into Python.
It is kept deliberately unoptimised: the pass-time benchmark measures how far the
optimised :func:`benchkill.passes.KillAfterLastUse` moves away from it.  Its output
must equal TVM's C++ pass (differential tests in ``tests/test_naive_pass.py``).

Steps, as in the C++ pass, for each Relax function:

1. ``CanonicalizeBindings`` (TVM's own pass: only the kill logic is ported);
2. remove trivial bindings (``y = x``, type-preserving ``match_cast``) whose variable
   is never used (:class:`_UsedCollector`, :class:`_UnusedTrivialBindingRemover`);
3. for the function and then for every ``SeqExpr``, collect each variable's last
   usage point (:class:`_CollectLastUsage`) and emit the kills after that binding
   (:class:`_KillInserter`).  Like the C++ pass, the collected table is cleared
   after a nested ``SeqExpr``, so no kills follow an ``If`` in its enclosing scope.
"""

from __future__ import annotations

import tvm
import tvm_ffi
from tvm import relax
from tvm.relax.expr_functor import PyExprMutator, PyExprVisitor, mutator, visitor

from benchkill.relax import ops

_ALLOC_STORAGE = tuple(ops.get_op(name) for name in ops.ALLOC_STORAGE)
_NULL_VALUE = ops.get_op(ops.NULL_VALUE)
_KILL_TENSOR, _KILL_STORAGE, _KILL_OBJECT = _KILL_OPS = tuple(ops.get_op(n) for n in ops.KILLS)


def _op_in(op: tvm.ir.Expr, ops: tuple[tvm.ir.Op, ...]) -> bool:
    return any(op.same_as(candidate) for candidate in ops)


# --- step 2: unused trivial bindings -------------------------------------------------


@visitor
class _UsedCollector(PyExprVisitor):
    """Variables used anywhere, and variables bound by a trivial binding."""

    def __init__(self) -> None:
        self.used: set[relax.Var] = set()
        self.has_trivial_binding: set[relax.Var] = set()

    def visit_var_(self, op: relax.Var) -> None:
        self.used.add(op)

    def visit_dataflow_var_(self, op: relax.DataflowVar) -> None:
        self.used.add(op)

    def visit_var_binding_(self, binding: relax.VarBinding) -> None:
        if isinstance(binding.value, relax.Var):
            self.has_trivial_binding.add(binding.var)
        super().visit_var_binding_(binding)

    def visit_match_cast_(self, binding: relax.MatchCast) -> None:
        value = binding.value
        if isinstance(value, relax.Var) and tvm_ffi.structural_equal(binding.var.ty, value.ty):
            self.has_trivial_binding.add(binding.var)
        super().visit_match_cast_(binding)


@mutator
class _UnusedTrivialBindingRemover(PyExprMutator):
    """Drops the bindings of ``to_remove``; everything else is re-emitted unchanged."""

    def __init__(self, to_remove: set[relax.Var]) -> None:
        super().__init__()
        self.to_remove = to_remove

    def visit_var_binding_(self, binding: relax.VarBinding) -> None:
        if binding.var not in self.to_remove:
            super().visit_var_binding_(binding)

    def visit_match_cast_(self, binding: relax.MatchCast) -> None:
        if binding.var not in self.to_remove:
            super().visit_match_cast_(binding)


def remove_unused_trivial_bindings(expr: relax.Expr) -> relax.Expr:
    """``expr`` without trivial bindings whose variable is never used."""
    collector = _UsedCollector()
    collector.visit_expr(expr)
    to_remove = collector.has_trivial_binding - collector.used
    return _UnusedTrivialBindingRemover(to_remove).visit_expr(expr)


# --- step 3a: last-use analysis ------------------------------------------------------


class LastUsage:
    """What dies after one binding, in binding order: tensors, storages, other objects."""

    __slots__ = ("tensors", "storage", "objects")

    def __init__(self) -> None:
        self.tensors: list[relax.Var] = []
        self.storage: list[relax.Var] = []
        self.objects: list[relax.Var] = []


@visitor
class _CollectLastUsage(PyExprVisitor):
    """For every binding variable, the binding that uses it last (None: used by the output)."""

    def __init__(self, exclude_null_value: bool) -> None:
        self.exclude_null_value = exclude_null_value
        self.current_binding: relax.Var | None = None
        self.binding_order: list[relax.Var] = []
        self.last_usage_of: dict[relax.Var, relax.Var | None] = {}
        self.storage_objects: set[relax.Var] = set()
        self.constant_tensors: set[relax.Var] = set()
        self.null_value_objects: set[relax.Var] = set()
        self.killed_objects: set[relax.Var] = set()

    # The C++ visitor overrides VisitBinding to track the current binding; a Python
    # override of visit_binding cannot call its base, so both binding kinds do it here.
    def visit_var_binding_(self, binding: relax.VarBinding) -> None:
        cache = self.current_binding
        self.current_binding = binding.var
        self.binding_order.append(binding.var)
        self._visit_var_binding_value(binding)
        self.current_binding = cache

    def visit_match_cast_(self, binding: relax.MatchCast) -> None:
        cache = self.current_binding
        self.current_binding = binding.var
        self.binding_order.append(binding.var)
        super().visit_match_cast_(binding)
        self.current_binding = cache

    def _visit_var_binding_value(self, binding: relax.VarBinding) -> None:
        value = binding.value
        if isinstance(value, relax.Call):
            if _op_in(value.op, _ALLOC_STORAGE):
                self.storage_objects.add(binding.var)
                return
            if value.op.same_as(_NULL_VALUE):
                self.null_value_objects.add(binding.var)
                return
            if _op_in(value.op, _KILL_OPS):
                if len(value.args) != 1 or not isinstance(value.args[0], relax.Var):
                    raise ValueError(f"malformed kill: {value}")
                self.killed_objects.add(value.args[0])
                return
        elif isinstance(value, tvm.ir.GenericConst):
            self.constant_tensors.add(binding.var)
            return
        super().visit_var_binding_(binding)

    def visit_var_(self, op: relax.Var) -> None:
        super().visit_var_(op)
        # Overwritten by every later use, so the last use wins; None marks the output.
        self.last_usage_of[op] = self.current_binding

    def visit_dataflow_var_(self, op: relax.DataflowVar) -> None:
        self.visit_var_(op)

    def result(self) -> dict[relax.Var, LastUsage]:
        """Group the variables to kill by the binding after which they die."""
        output: dict[relax.Var, LastUsage] = {}
        for var in self.binding_order:
            if var not in self.last_usage_of:
                continue
            point = self.last_usage_of[var]
            if point is None or var in self.killed_objects:
                continue
            ty = var.ty
            in_register = not (
                var in self.constant_tensors
                or (self.exclude_null_value and var in self.null_value_objects)
                or isinstance(ty, (relax.FuncType, relax.ShapeType, tvm.ir.PrimType))
            )
            if var in self.storage_objects:
                output.setdefault(point, LastUsage()).storage.append(var)
            elif isinstance(ty, relax.TensorType) and in_register:
                output.setdefault(point, LastUsage()).tensors.append(var)
            elif in_register:
                output.setdefault(point, LastUsage()).objects.append(var)
        return output


def collect_last_usage(expr: relax.Expr, exclude_null_value: bool) -> dict[relax.Var, LastUsage]:
    """Map from a binding variable to the variables whose last use is that binding."""
    collector = _CollectLastUsage(exclude_null_value)
    collector.visit_expr(expr)
    return collector.result()


# --- step 3b: kill insertion ---------------------------------------------------------


@mutator
class _KillInserter(PyExprMutator):
    """Re-emits every binding and, after it, the kills of the variables it uses last."""

    def __init__(self, exclude_null_value: bool) -> None:
        super().__init__()
        self.exclude_null_value = exclude_null_value
        self.last_usage: dict[relax.Var, LastUsage] = {}

    def visit_function_(self, op: relax.Function) -> relax.Expr:
        self.last_usage = collect_last_usage(op, self.exclude_null_value)
        mutated = super().visit_function_(op)
        self.last_usage = {}
        return mutated

    def visit_seq_expr_(self, op: relax.SeqExpr) -> relax.Expr:
        self.last_usage = collect_last_usage(op, self.exclude_null_value)
        mutated = super().visit_seq_expr_(op)
        self.last_usage = {}
        return mutated

    def visit_var_binding_(self, binding: relax.VarBinding) -> None:
        super().visit_var_binding_(binding)
        self._emit_kills(binding.var)

    def visit_match_cast_(self, binding: relax.MatchCast) -> None:
        super().visit_match_cast_(binding)
        self._emit_kills(binding.var)

    def _emit_kills(self, var: relax.Var) -> None:
        usage = self.last_usage.get(var)
        if usage is None:
            return
        for tensor in usage.tensors:
            self.builder_.emit(tvm.ir.Call(_KILL_TENSOR, [tensor]), "_")
        for storage in usage.storage:
            self.builder_.emit(tvm.ir.Call(_KILL_STORAGE, [storage]), "_")
        for obj in usage.objects:
            self.builder_.emit(tvm.ir.Call(_KILL_OBJECT, [obj]), "_")


def kill_function(func: relax.Function, exclude_null_value: bool = True) -> relax.Function:
    """Steps 2 and 3 on one (already canonicalized) function."""
    func = remove_unused_trivial_bindings(func)
    return _KillInserter(exclude_null_value).visit_expr(func)


def NaiveKillAfterLastUse(exclude_null_value: bool = True) -> tvm.ir.transform.Pass:  # noqa: N802
    """The naive port as a module pass; its output equals TVM's ``KillAfterLastUse``.

    Parameters
    ----------
    exclude_null_value : bool
        Never kill variables bound to ``R.null_value()`` (the upstream fix, as in the
        installed TVM).  False gives the pre-fix behaviour, which kills them.
    """

    @tvm.transform.module_pass(opt_level=0, name="NaiveKillAfterLastUse")
    def _pass(mod: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:
        # TVM calls its canonicalization directly; as a pass it is opt_level 1 and would be
        # skipped under PassContext(opt_level=0), or disabled by name, so give it its own context.
        with tvm.transform.PassContext(opt_level=3):
            mod = relax.transform.CanonicalizeBindings()(mod)
        updates = {
            gv: kill_function(func, exclude_null_value)
            for gv, func in mod.functions_items()
            if isinstance(func, relax.Function)
        }
        if not updates:
            return mod
        mod = mod.clone()  # Module_Add mutates in place
        for gv, func in updates.items():
            mod[gv] = func
        return mod

    return _pass
