"""Step 1 of the pass: one forward sweep that finds each variable's last use.

The sweep walks every scope (the function body and each ``If`` branch) once, in the
order TVM's ``CollectLastUsage`` visits it, and records in plain dicts and sets:

* for each variable bound in a scope, the position (index among the scope's
  top-level bindings) of the binding that uses it last, or ``OUTPUT`` when its last
  use is the scope's result expression;
* which variables are storage (``alloc_storage`` results), constants, bound to
  ``R.null_value()``, or already killed;
* whether CanonicalizeBindings, which TVM runs first, could change the function.

A use inside a nested ``If`` (condition, branch bindings or branch result) counts as a
use at the ``If`` binding of the scope that defines the variable.  Recursion follows
the nesting of scopes only, never the number of bindings.

TVM's lowering does not always keep variables in their scope: StaticPlanBlockMemory
may allocate a storage inside one ``If`` branch and reuse it after the ``If``.  Such a
"foreign" use, outside the scope that binds the variable, is invisible to TVM's
per-scope analysis (so TVM-compatible mode ignores it, as TVM does), and is recorded
separately, projected onto the innermost scope that holds both the binding and the
use, so that the beyond-TVM mode never kills a variable before such a use.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from benchkill.errors import BenchkillError
from benchkill.relax import ffi as ir
from benchkill.relax import ops

#: ``last_use`` value of a variable whose last use is its scope's result expression.
OUTPUT = -1

# Operator codes of the hot path (:meth:`_Sweeper.call_binding`).
_PLAIN, _ALLOC_STORAGE, _ALLOC_TENSOR, _NULL_VALUE, _KILL = range(5)
#: Binding values that canonicalization may replace, inline or look through.
_CANDIDATE_VALUES = (ir.Var, ir.DataflowVar, ir.GenericConst, ir.Tuple, ir.TupleGetItem)
#: Argument kinds that hold no Relax variable a kill could target.
_LEAVES = (ir.GenericConst, ir.ShapeExpr, ir.IntImm, ir.FloatImm, ir.StringImm)


@dataclass
class Scope:
    """One SeqExpr: its blocks and top-level bindings, as fetched once from the FFI."""

    seq: object
    blocks: list
    bindings: list  # list of lists, one per block
    dataflow: list  # bool per block
    #: position of the first binding whose value holds a nested scope (If, Function)
    first_nested: int = -1
    #: position -> the nested scopes inside that binding's value
    children: dict = field(default_factory=dict)
    #: (handle, var, position) of each variable bound at top level, in order
    defs: list = field(default_factory=list)
    #: the scopes from the function body down to this one
    chain: list = field(default_factory=list)


@dataclass
class Sweep:
    """What the sweep found in one function."""

    root: Scope
    last_use: dict  # handle -> position in the defining scope, or OUTPUT
    #: handle -> (scope, position, var) of uses outside the defining scope (see above)
    foreign: dict
    storage: set
    tensors: set  # alloc_tensor results: TensorType, no need to read their type
    constants: set
    null_values: set
    killed: set
    needs_canonicalize: bool
    #: what canonicalization needs (see :mod:`.canonicalize`): bindings whose value is a
    #: variable, constant, tuple or tuple item, or a match_cast, as (binding, scope,
    #: position) in visiting order; the (id(scope), position) of bindings that use
    #: such a variable (position OUTPUT: the scope's result); every bound variable
    canon_sites: list
    touched: set
    bound: dict
    has_dataflow: bool
    has_local_function: bool


def sweep_function(func) -> Sweep:
    """Sweep the Relax function ``func`` (see the module docstring)."""
    return _Sweeper().run(func)


class _Sweeper:
    def __init__(self) -> None:
        self.last_use: dict[int, int] = {}
        self.defined: dict[int, tuple] = {}  # handle -> (depth, scope, var)
        self.foreign: dict[int, tuple] = {}  # handle -> (depth, position)
        self.scope_stack: list[Scope] = []
        self.storage: set[int] = set()
        self.tensors: set[int] = set()
        self.constants: set[int] = set()
        self.null_values: set[int] = set()
        self.killed: set[int] = set()
        self.tuple_vars: set[int] = set()  # bound to a Tuple literal
        self.tgi_vars: set[int] = set()  # bound to a TupleGetItem
        self.needs_canonicalize = False
        self.candidates: set[int] = set()
        self.canon_sites: list = []
        self.touched: set[tuple[int, int]] = set()
        self.has_dataflow = False
        self.has_local_function = False
        self.pos_stack: list[int] = []
        self.op_codes = {ops.op_handle(n): _ALLOC_STORAGE for n in ops.ALLOC_STORAGE}
        self.op_codes.update({ops.op_handle(n): _ALLOC_TENSOR for n in ops.ALLOC_TENSOR})
        for name in (ops.KILL_TENSOR, ops.KILL_STORAGE, ops.KILL_OBJECT):
            self.op_codes[ops.op_handle(name)] = _KILL
        self.op_codes[ops.op_handle(ops.NULL_VALUE)] = _NULL_VALUE

    def run(self, func) -> Sweep:
        root = self.scope(func.body)
        foreign = {}
        for h, (depth, pos) in self.foreign.items():
            _, scope, var = self.defined[h]
            foreign[h] = (scope.chain[depth], pos, var)
        return Sweep(
            root,
            self.last_use,
            foreign,
            self.storage,
            self.tensors,
            self.constants,
            self.null_values,
            self.killed,
            self.needs_canonicalize,
            self.canon_sites,
            self.touched,
            self.defined,
            self.has_dataflow,
            self.has_local_function,
        )

    # -- scopes ---------------------------------------------------------------
    def scope(self, seq) -> Scope:
        if type(seq) is not ir.SeqExpr:
            raise BenchkillError(
                f"malformed IR: expected a SeqExpr body, found {type(seq).__name__}"
            )
        depth = len(self.pos_stack)
        self.pos_stack.append(0)
        blocks = ir.items(seq.blocks)
        scope = Scope(seq, blocks, [], [])
        self.scope_stack.append(scope)
        scope.chain = list(self.scope_stack)
        pos = 0
        for block in blocks:
            bindings = ir.items(block.bindings)
            dataflow = type(block) is ir.DataflowBlock
            if dataflow:
                self.needs_canonicalize = True
                self.has_dataflow = True
            scope.bindings.append(bindings)
            scope.dataflow.append(dataflow)
            for binding in bindings:
                self.pos_stack[depth] = pos
                if not self.call_binding(binding, scope, pos, depth):
                    self.binding(binding, scope, pos, depth)
                pos += 1
        if scope.first_nested < 0:
            scope.first_nested = pos
        self.pos_stack[depth] = OUTPUT
        self.use(seq.body)
        self.pos_stack.pop()
        self.scope_stack.pop()
        return scope

    # -- bindings -------------------------------------------------------------
    def call_binding(self, binding, scope: Scope, pos: int, depth: int) -> bool:
        """The hot path: ``var = op(args)`` with an operator or a global function.

        Handles the bindings that make up nearly all of a lowered function with as
        few FFI reads as possible; returns False for any other binding.
        """
        value = binding.value
        if type(value) is not ir.Call or type(binding) is not ir.VarBinding:
            return False
        op = value.op
        op_type = type(op)
        if op_type is ir.Op:
            code = self.op_codes.get(op.__chandle__(), _PLAIN)
        elif op_type is ir.GlobalVar:
            code = _PLAIN
        else:
            return False
        var = binding.var
        h = var.__chandle__()
        if code == _ALLOC_STORAGE:
            self.storage.add(h)
            if self.candidates:
                self.touch_args(value, scope, pos)
        elif code == _ALLOC_TENSOR:
            # Only the storage argument can be a killable variable; the offset, shape
            # and dtype arguments are prim, shape and dtype values.
            self.use_var(ir.array_get(value.args, 0))
            self.tensors.add(h)
        elif code == _PLAIN:
            defined = self.defined
            last_use = self.last_use
            array_get = ir.array_get
            args = value.args
            for i in range(ir.array_size(args)):
                arg = array_get(args, i)
                arg_type = type(arg)
                if arg_type is ir.Var or arg_type is ir.DataflowVar:
                    ah = arg.__chandle__()
                    found = defined.get(ah)
                    if found is not None:
                        if found[0] == depth and found[1] is scope:
                            last_use[ah] = pos
                            if ah in self.candidates:
                                self.touched.add((id(scope), pos))
                        else:
                            self.use_var(arg)
                elif arg_type not in _LEAVES:
                    self.use(arg)
        else:
            return False
        self.defined[h] = (depth, scope, var)
        scope.defs.append((h, var, pos))
        return True

    def binding(self, binding, scope: Scope, pos: int, depth: int) -> None:
        var = binding.var
        h = var.__chandle__()
        value = binding.value
        kind = type(value)
        if type(binding) is not ir.VarBinding or kind in _CANDIDATE_VALUES:
            self.candidates.add(h)
            self.canon_sites.append((binding, scope, pos))
        if type(binding) is not ir.VarBinding:  # MatchCast
            self.needs_canonicalize = True
            self.use(value)
        elif kind is ir.Call:
            # Allocations and plain calls took the hot path (call_binding); what is
            # left here: null_value, the kills, and calls of a variable or ExternFunc.
            op = value.op
            code = self.op_codes.get(op.__chandle__(), _PLAIN) if type(op) is ir.Op else _PLAIN
            if code == _NULL_VALUE:
                self.null_values.add(h)
            elif code == _KILL:
                target = _kill_target(value)
                self.killed.add(target)
                if target in self.candidates:
                    self.touched.add((id(scope), pos))
            else:
                self.use(value)
        elif kind is ir.If:
            self.nested(scope, pos)
            self.use(value.cond)
            scope.children[pos] = [self.scope(value.true_branch), self.scope(value.false_branch)]
        elif kind is ir.GenericConst:
            self.constants.add(h)
            self.needs_canonicalize = True  # uses of a constant variable are inlined
        elif kind is ir.Var or kind is ir.DataflowVar:
            self.needs_canonicalize = True  # trivial rebinding
            self.use_var(value)
        elif kind is ir.Tuple:
            self.tuple_vars.add(h)
            fields = value.fields
            if ir.array_size(fields):
                first = ir.array_get(fields, 0)
                if type(first) is ir.TupleGetItem or (
                    type(first) in (ir.Var, ir.DataflowVar) and first.__chandle__() in self.tgi_vars
                ):
                    self.needs_canonicalize = True  # may be a copy of an earlier tuple
            self.use(value)
        elif kind is ir.TupleGetItem:
            self.tgi_vars.add(h)
            tup = value.tuple_value
            if type(tup) is ir.Tuple or (
                type(tup) in (ir.Var, ir.DataflowVar) and tup.__chandle__() in self.tuple_vars
            ):
                self.needs_canonicalize = True  # item of a known tuple
            self.use(tup)
        elif kind is ir.Function or kind is ir.SeqExpr:
            self.needs_canonicalize = True
            self.has_local_function = True
            self.nested(scope, pos)
            body = value.body if kind is ir.Function else value
            scope.children[pos] = [self.scope(body)]
        else:
            self.use(value)
        self.defined[h] = (depth, scope, var)
        scope.defs.append((h, var, pos))

    def touch_args(self, call, scope: Scope, pos: int) -> None:
        """Mark the binding if a call argument the sweep does not visit is a candidate
        of canonicalization (e.g. a dtype constant bound to a variable)."""
        for arg in ir.items(call.args):
            if ir.is_var(arg) and arg.__chandle__() in self.candidates:
                self.touched.add((id(scope), pos))

    @staticmethod
    def nested(scope: Scope, pos: int) -> None:
        if scope.first_nested < 0:
            scope.first_nested = pos

    # -- uses -----------------------------------------------------------------
    def use_var(self, var) -> None:
        if type(var) is ir.Var or type(var) is ir.DataflowVar:
            h = var.__chandle__()
            defined = self.defined.get(h)
            if defined is None:
                return  # a parameter
            depth, scope, _ = defined
            stack = self.scope_stack
            if h in self.candidates:
                self.touched.add((id(stack[-1]), self.pos_stack[-1]))
            if depth < len(stack) and stack[depth] is scope:
                self.last_use[h] = self.pos_stack[depth]
            else:
                self.use_outside_scope(h, scope)
        else:
            self.use(var)

    def use_outside_scope(self, h: int, scope: Scope) -> None:
        stack = self.scope_stack
        common = 0
        while common + 1 < min(len(stack), len(scope.chain)) and (
            stack[common + 1] is scope.chain[common + 1]
        ):
            common += 1
        previous = self.foreign.get(h)
        if previous is not None and previous[0] < common:
            common = previous[0]
        self.foreign[h] = (common, self.pos_stack[common])

    def use(self, expr) -> None:
        """Record uses of the variables in a leaf-or-call expression."""
        kind = type(expr)
        if kind is ir.Var or kind is ir.DataflowVar:
            self.use_var(expr)
        elif kind is ir.Call:
            op = expr.op
            if type(op) is not ir.Op:
                self.use(op)
            args = expr.args
            for i in range(ir.array_size(args)):
                arg = ir.array_get(args, i)
                if type(arg) is ir.Var:
                    self.use_var(arg)
                else:
                    self.use(arg)
        elif kind is ir.Tuple:
            fields = expr.fields
            for i in range(ir.array_size(fields)):
                self.use(ir.array_get(fields, i))
        elif kind is ir.TupleGetItem:
            self.use(expr.tuple_value)
        elif kind is ir.If or kind is ir.SeqExpr or kind is ir.Function:
            raise BenchkillError(
                f"malformed IR: a {kind.__name__} nested inside an expression (not normalized)"
            )


def _kill_target(call) -> int:
    args = call.args
    n = ir.array_size(args)
    if n != 1:
        raise BenchkillError(f"malformed IR: {call.op.name} should have one argument, but has {n}")
    target = ir.array_get(args, 0)
    if type(target) is not ir.Var and type(target) is not ir.DataflowVar:
        raise BenchkillError(
            f"malformed IR: non-normalized kill argument in {call.op.name}"
            f"({type(target).__name__}); a kill must name a variable"
        )
    return target.__chandle__()
