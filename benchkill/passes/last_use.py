"""Step 1 of the pass: one forward sweep that finds each variable's last use.

One hot-path state machine (:class:`_Sweeper`, its loop over bindings written out in
:meth:`_Sweeper.scope`), hence longer than the other modules.

The sweep walks every scope (the function body and each ``If`` branch) once, in the
order TVM's ``CollectLastUsage`` visits it, and records in plain dicts and sets:

* for each variable bound in a scope, the position (index among the scope's
  top-level bindings) of the binding that uses it last, or ``OUTPUT`` when its last
  use is the scope's result expression;
* which bindings are ``alloc_storage`` results (a per-scope bytearray, ``Scope.kinds``,
  zeroed a block at a time; their handles too for those of nested scopes), and which
  variables are constants, bound to ``R.null_value()``, or already killed.

Variables are keyed by :func:`.keys.key` (their object handle divided by 16).

A use inside a nested ``If`` (condition, branch bindings or branch result) counts as a
use at the ``If`` binding of the scope that defines the variable.  Recursion follows
the nesting of scopes only, never the number of bindings.

Canonicalization (TVM's CanonicalizeBindings, which TVM's pass runs first) is planned
during the same sweep: :class:`.canonicalize.Canonicalizer` reports, for each binding
it can change (trivial rebindings, constants, tuples and their items, match_cast), whether
the binding is removed and what the uses of its variable become, and the sweep records
every later use as a use of the replacement.  So the tables describe the canonicalized
function, and the positions of the removed bindings and of those whose expression is
rewritten are kept per scope (``Scope.removed``, ``Scope.touched``) for the rebuild.
What :mod:`.canonicalize` does not reproduce (dataflow blocks, local functions, the
rebuild rules it lists) raises :class:`NeedsTVMCanonicalization`: the caller hands the
function to :mod:`.fallback`, which sweeps TVM's canonicalized output with
``canonicalize=False`` (no check then).

TVM's lowering does not always keep variables in their scope: StaticPlanBlockMemory
may allocate a storage inside one ``If`` branch and reuse it after the ``If``.  Such a
"foreign" use, outside the scope that binds the variable, is invisible to TVM's
per-scope analysis (so TVM-compatible mode ignores it, as TVM does), and is recorded
separately, projected onto the innermost scope that holds both the binding and the
use, so that the beyond-TVM mode never kills a variable before such a use.

Nothing here refers to itself: scopes hold their children, never their parents (a
scope's ``chain`` lists the *indices* of the scopes above it), so everything the sweep
builds is freed by reference counting, without the cyclic garbage collector.
"""

from __future__ import annotations

from functools import cache

from tvm import relax

from benchkill.errors import BenchkillError
from benchkill.passes.canonicalize import Canonicalizer, Unsupported, same_type
from benchkill.passes.checks import FunctionChecks, is_void_var
from benchkill.passes.keys import SHIFT
from benchkill.relax import ffi as ir
from benchkill.relax import ops

#: ``last_use`` value of a variable whose last use is its scope's result expression.
OUTPUT = -1
#: ``Scope.kinds``: an alloc_storage result, or anything else (its variable's type tells)
OTHER, STORAGE = 0, 1

# Operator codes of the hot path (:meth:`_Sweeper.scope`).
_PLAIN, _ALLOC_STORAGE, _ALLOC_TENSOR, _NULL_VALUE, _KILL, _OTHER = range(6)
#: Operator code of a call TVM re-normalizes with the operator's FNormalize (rule 5 of
#: :mod:`.canonicalize`): the slow path, which hands the function to the fallback.
_FNORMALIZE = 6
#: Binding values that canonicalization may replace, inline or look through.
_CANDIDATE_VALUES = (ir.Var, ir.DataflowVar, ir.GenericConst, ir.Tuple, ir.TupleGetItem)
#: Types of values that cannot stand in an allocation's arguments other than the storage
#: (offset, shape, dtype, device index, scope): the sweep reads those only when some other
#: value (e.g. an ``R.dtype`` constant bound to a variable) is substituted.
_NEVER_ALLOC_ARGS = (ir.TensorType, relax.TupleType)
#: Argument kinds that hold no Relax variable a kill could target.
_LEAVES = (ir.GenericConst, ir.ShapeExpr, ir.IntImm, ir.FloatImm, ir.StringImm)


@cache
def _op_codes(canonicalize: bool) -> dict[int, int]:
    """Operator handle -> operator code, of the operators the sweep tells apart (made once
    per process: an operator is a registered singleton, its handle never changes)."""
    codes = {ops.op_handle(n): _ALLOC_STORAGE for n in ops.ALLOC_STORAGE}
    codes.update({ops.op_handle(n): _ALLOC_TENSOR for n in ops.ALLOC_TENSOR})
    for name in ops.KILLS:
        codes[ops.op_handle(name)] = _KILL
    codes[ops.op_handle(ops.NULL_VALUE)] = _NULL_VALUE
    if canonicalize:
        for name in ops.ops_with_attr("FNormalize"):
            codes[ops.op_handle(name)] = _FNORMALIZE
    return codes


class NeedsTVMCanonicalization(Exception):  # noqa: N818 (a signal, not an error)
    """The function needs what only TVM's pass computes exactly (a canonicalization or a
    rebuild rule :mod:`.canonicalize` does not reproduce): the caller hands it to
    :mod:`.fallback`."""


class Scope:
    """One SeqExpr: its blocks and top-level bindings, as fetched once from the FFI."""

    __slots__ = (
        "seq",
        "blocks",
        "bindings",
        "dataflow",
        "depth",
        "index",
        "chain",
        "first_nested",
        "children",
        "last",
        "vars",
        "kinds",
        "touched",
        "removed",
        "rebuilt",
    )

    def __init__(self, seq, blocks: list, depth: int, index: int, chain: tuple) -> None:
        self.seq = seq
        self.blocks = blocks
        self.bindings: list[list] = []  # one list per block
        self.dataflow: list[bool] = []  # per block
        self.depth = depth
        self.index = index  # in Sweep.scopes
        #: indices of the scopes from the function body down to this one
        self.chain = chain
        #: position of the first binding whose value holds a nested scope (If, Function)
        self.first_nested = -1
        #: position -> the nested scopes inside that binding's value
        self.children: dict[int, list[Scope]] = {}
        #: handle -> position of the last use (OUTPUT: the result; None: unused) of each
        #: variable bound here, in binding order (the i-th key is bound at position i)
        self.last: dict[int, int | None] = {}
        #: the variable bound at each position
        self.vars: list = []
        #: what the binding at each position is: STORAGE (an alloc_storage result) or
        #: OTHER (its variable's type tells, alloc_tensor results too); zeroed (OTHER) a
        #: block at a time, so the hot loop writes only the storage
        self.kinds = bytearray()
        #: positions (OUTPUT: the result) whose expression canonicalization rewrites
        self.touched: set[int] = set()
        #: positions of the bindings canonicalization removes
        self.removed: set[int] = set()
        #: touched position -> (call, callee, variable, new arguments) of a call whose only
        #: change is variables replaced by variables or by the constants they are bound to
        self.rebuilt: dict[int, tuple] = {}


class Sweep:
    """What the sweep found in one function."""

    __slots__ = (
        "root",
        "scopes",
        "foreign",
        "storage",
        "constants",
        "null_values",
        "killed",
        "canonicalizer",
        "aliases",
    )

    def __init__(self, sweeper: _Sweeper, root: Scope, foreign: dict) -> None:
        self.root = root
        self.scopes: list[Scope] = sweeper.scopes
        #: handle -> (scope, position, var) of uses outside the defining scope (see above)
        self.foreign: dict[int, tuple] = foreign
        #: storage bound in nested scopes (for foreign kills; each scope's ``kinds``
        #: tells its own)
        self.storage: set[int] = sweeper.storage
        self.constants: set[int] = sweeper.constants
        self.null_values: set[int] = sweeper.null_values
        self.killed: set[int] = sweeper.killed
        #: (scope, alias, source) of the match_casts TVM's canonicalization left as aliases
        #: (see :class:`_Sweeper`); empty when canonicalizing
        self.aliases: list[tuple[Scope, int, int]] = sweeper.aliases
        #: the canonicalization to apply when rebuilding, or None when nothing changes
        self.canonicalizer: Canonicalizer | None = sweeper.canonicalizer if sweeper.subst else None

    @property
    def canonicalized(self) -> bool:
        """Whether canonicalization changes the function."""
        return self.canonicalizer is not None


class _Bound:
    """``h in bound``: whether variable ``h`` is bound (not a parameter) among the
    bindings swept so far, for the canonicalizer."""

    __slots__ = ("stack", "closed")

    def __init__(self, stack: list[Scope], closed: dict) -> None:
        self.stack = stack
        self.closed = closed

    def __contains__(self, h: int) -> bool:
        return h in self.closed or any(h in scope.last for scope in self.stack)


def sweep_function(func, canonicalize: bool = True) -> Sweep:
    """Sweep the Relax function ``func`` (see the module docstring).

    With ``canonicalize`` the tables describe ``func`` after canonicalization; raises
    :class:`NeedsTVMCanonicalization` when only TVM's pass gives it exactly.
    """
    return _Sweeper(canonicalize).run(func)


class _Sweeper:
    def __init__(self, canonicalize: bool) -> None:
        self.canonicalize = canonicalize
        self.canonicalizer: Canonicalizer | None = None  # made at the first candidate
        #: handle -> what every use of the variable becomes: a variable, or None when a
        #: constant is inlined (see :meth:`.canonicalize.Canonicalizer.plan_binding`)
        self.subst: dict[int, object] = {}
        #: handle -> the constant that replaces the variable (its ``subst`` is None)
        self.inlined: dict[int, object] = {}
        #: a substituted variable may stand in an allocation's non-storage argument
        self.subst_in_alloc = False
        self.scopes: list[Scope] = []
        #: handle -> defining scope, of the variables of the nested scopes swept so far
        self.closed: dict[int, Scope] = {}
        self.foreign: dict[int, tuple] = {}  # handle -> (depth, position, var)
        self.stack: list[Scope] = []
        self.pos_stack: list[int] = []
        self.storage: set[int] = set()
        self.constants: set[int] = set()
        self.null_values: set[int] = set()
        self.killed: set[int] = set()
        self.op_codes = _op_codes(canonicalize)
        #: what :meth:`scope` binds to locals, made once per sweep
        self.hot = (
            ir.array_get,
            ir.array_size,
            ir.Var,
            ir.DataflowVar,
            ir.Call,
            ir.Op,
            ir.GlobalVar,
            ir.VarBinding,
            relax.ExternFunc,
            ir.If,
            _LEAVES,
            self.op_codes.get,
            SHIFT,
            self.closed,
            self.subst,
            self.storage.add,
        )  # no bound method of the sweeper: it would refer to itself
        #: the rebuild rules checked on the way (None: TVM's output is swept, as it is)
        self.checks: FunctionChecks | None = None
        #: (scope, alias, source) of each ``alias = R.match_cast(source, T)`` with T the
        #: source's type, in binding order; recorded only when TVM's output is swept (the
        #: canonicalization removes such a binding), for the beyond-TVM mode's plan
        self.aliases: list[tuple[Scope, int, int]] = []

    def run(self, func) -> Sweep:
        try:
            if self.canonicalize:
                self.checks = FunctionChecks(func)
                self.checks.function()
            root = self.scope(func.body, ())
        except Unsupported:
            raise NeedsTVMCanonicalization from None
        foreign = {}
        for h, (depth, pos, var) in self.foreign.items():
            chain = self.closed[h].chain
            foreign[h] = (self.scopes[chain[depth]], pos, var)
        return Sweep(self, root, foreign)

    # -- scopes ---------------------------------------------------------------
    def scope(self, seq, chain: tuple) -> Scope:
        """Sweep one SeqExpr; the hot path, ``var = f(args)`` with an operator, a global
        function or an extern function, is written out inline."""
        if type(seq) is not ir.SeqExpr:
            if self.canonicalize:
                raise NeedsTVMCanonicalization  # TVM's mutators wrap it in a SeqExpr
            raise BenchkillError(
                f"malformed IR: expected a SeqExpr body, found {type(seq).__name__}"
            )
        depth = len(self.stack)
        index = len(self.scopes)
        blocks = seq.blocks
        if ir.array_size(blocks) == 1:  # the commonest scope
            blocks = [ir.array_get(blocks, 0)]
        else:
            blocks = ir.items(blocks)
        scope = Scope(seq, blocks, depth, index, (*chain, index))
        self.scopes.append(scope)
        self.stack.append(scope)
        pos_stack = self.pos_stack
        pos_stack.append(0)

        # locals: the loop below runs once per binding (the sweep's own, made once per
        # sweep: a scope of an If branch often has three bindings)
        (
            array_get,
            array_size,
            var_t,
            dataflow_var_t,
            call_t,
            op_t,
            global_var_t,
            var_binding_t,
            extern_func_t,
            if_t,
            leaves,
            op_code,
            shift,
            closed,
            subst,
            storage_add,
        ) = self.hot
        use, use_outer = self.use, self.use_outer
        # trivial rebindings ``lv = alloc`` (a third of a lowered decoder's bindings)
        rebinding = self.rebinding if self.canonicalize else None
        last, touched = scope.last, scope.touched
        vars_append, kinds = scope.vars.append, scope.kinds

        subst_in_alloc = self.subst_in_alloc
        pos = 0
        for block in blocks:
            bindings = ir.items(block.bindings)
            dataflow = type(block) is ir.DataflowBlock
            if dataflow and self.canonicalize:
                raise NeedsTVMCanonicalization  # CanonicalizeBindings rewrites dataflow blocks
            scope.bindings.append(bindings)
            kinds += bytes(len(bindings))  # OTHER, until an alloc_storage
            scope.dataflow.append(dataflow)
            for binding in bindings:
                value = binding.value
                var = binding.var
                h = var.__chandle__() >> shift
                if type(value) is not call_t or type(binding) is not var_binding_t:
                    pos_stack[depth] = pos
                    if (
                        type(value) is var_t
                        and rebinding is not None
                        and type(binding) is var_binding_t
                    ):
                        rebinding(var, value, h, scope, pos)
                    elif type(value) is if_t and type(binding) is var_binding_t:
                        self.if_binding(var, value, scope, pos)
                    else:
                        self.binding(binding, var, value, h, scope, pos)
                    subst_in_alloc = self.subst_in_alloc
                    last[h] = None
                    vars_append(var)
                    pos += 1
                    continue
                op = value.op
                op_type = type(op)
                if op_type is op_t:
                    code = op_code(op.__chandle__(), _PLAIN)
                elif op_type is global_var_t or op_type is extern_func_t:
                    code = _PLAIN
                else:
                    code = _OTHER
                if code == _PLAIN:
                    args = value.args
                    if not subst:
                        for i in range(array_size(args)):
                            arg = array_get(args, i)
                            arg_type = type(arg)
                            if arg_type is var_t or arg_type is dataflow_var_t:
                                ah = arg.__chandle__() >> shift
                                if ah in last:
                                    last[ah] = pos
                                elif depth or closed:
                                    use_outer(ah, arg, pos)
                            elif arg_type not in leaves:
                                pos_stack[depth] = pos
                                use(arg)
                    else:  # the same, until an argument is substituted
                        n = array_size(args)
                        for i in range(n):
                            arg = array_get(args, i)
                            arg_type = type(arg)
                            if arg_type is var_t or arg_type is dataflow_var_t:
                                ah = arg.__chandle__() >> shift
                                if ah in subst:  # the rest of the call, substituted
                                    self.substituted_call(
                                        value, op, var, scope, pos, args, n, i, ah
                                    )
                                    break
                                if ah in last:
                                    last[ah] = pos
                                elif depth or closed:
                                    use_outer(ah, arg, pos)
                            elif arg_type not in leaves:
                                pos_stack[depth] = pos
                                use(arg)
                elif code == _ALLOC_TENSOR:
                    # Only the storage argument can be a killable variable; the offset,
                    # shape and dtype arguments are prim, shape and dtype values.
                    args = value.args
                    arg = array_get(args, 0)
                    arg_type = type(arg)
                    if arg_type is var_t or arg_type is dataflow_var_t:
                        ah = arg.__chandle__() >> shift
                        if subst and ah in subst:
                            touched.add(pos)
                            arg = subst[ah]
                            ah = None if arg is None else arg.__chandle__() >> shift
                        if ah in last:
                            last[ah] = pos
                        elif ah is not None and (depth or closed):
                            use_outer(ah, arg, pos)
                    else:
                        pos_stack[depth] = pos
                        use(arg)
                    if subst_in_alloc:
                        self.touch_args(args, scope, pos)
                elif code == _ALLOC_STORAGE:
                    if depth:
                        storage_add(h)
                    if subst_in_alloc:
                        self.touch_args(value.args, scope, pos)
                    last[h] = None
                    vars_append(var)
                    kinds[pos] = STORAGE
                    pos += 1
                    continue
                else:
                    pos_stack[depth] = pos
                    self.binding(binding, var, value, h, scope, pos)
                    subst_in_alloc = self.subst_in_alloc
                last[h] = None
                vars_append(var)
                pos += 1
        if len(last) != pos:
            raise BenchkillError("malformed IR: a variable is bound twice in one scope")
        if scope.first_nested < 0:
            scope.first_nested = pos
        pos_stack[depth] = OUTPUT
        body = seq.body
        if type(body) is var_t and not subst:  # use_var, written out: the commonest result
            bh = body.__chandle__() >> shift
            if bh in last:
                last[bh] = OUTPUT
            else:
                use_outer(bh, body, OUTPUT)
        else:
            use(body)
        if self.checks is not None:
            self.checks.scope(seq, body, bool(blocks))
        pos_stack.pop()
        self.stack.pop()
        if depth:
            closed.update(dict.fromkeys(last, scope))
        return scope

    # -- bindings -------------------------------------------------------------
    def binding(self, binding, var, value, h: int, scope: Scope, pos: int) -> None:
        """Every binding the hot path does not take."""
        kind = type(value)
        is_var_binding = type(binding) is ir.VarBinding
        if self.canonicalize and (not is_var_binding or kind in _CANDIDATE_VALUES):
            canonicalizer = self.canonicalizer or self.new_canonicalizer()
            if is_var_binding and (kind is ir.Var or kind is ir.DataflowVar):
                self.rebinding(var, value, h, scope, pos)
                return  # a trivial binding: removed, with its use
            removed, replacement, ty = canonicalizer.plan_binding(binding, var, value, h)
            if replacement is not None:
                self.substitute(h, replacement, ty)
            if removed:
                scope.removed.add(pos)
                return  # its uses are gone with it
        if not is_var_binding:  # MatchCast
            self.use_value(value)
            if not self.canonicalize and (kind is ir.Var or kind is ir.DataflowVar):
                if same_type(binding.ty, value.ty):  # the VM gives both one register
                    self.aliases.append((scope, h, value.__chandle__() >> SHIFT))
        elif kind is ir.Call:
            # Allocations and plain calls took the hot path; what is left here:
            # null_value, the kills, and calls of a variable.
            op = value.op
            code = self.op_codes.get(op.__chandle__(), _PLAIN) if type(op) is ir.Op else _PLAIN
            if code == _NULL_VALUE:
                self.null_values.add(h)
            elif code == _KILL:
                self.killed.add(self.kill_target(value, scope, pos))
            else:
                self.use_value(value)
        elif kind is ir.If:
            self.if_binding(var, value, scope, pos)
        elif kind is ir.GenericConst:
            if type(value.ty) is ir.TensorType:  # TVM's pass kills an R.dtype variable
                self.constants.add(h)
        elif kind is ir.Function or kind is ir.SeqExpr:
            if self.canonicalize:
                raise NeedsTVMCanonicalization  # a local function
            if scope.first_nested < 0:
                scope.first_nested = pos
            body = value.body if kind is ir.Function else value
            scope.children[pos] = [self.scope(body, scope.chain)]
        else:
            self.use_value(value)

    def if_binding(self, var, value, scope: Scope, pos: int) -> None:
        """``var = If(cond, true_branch, false_branch)``: the condition is used here, and
        each branch is a scope of its own."""
        true_branch, false_branch = value.true_branch, value.false_branch
        if self.checks is not None:
            self.checks.if_binding(var, value, true_branch, false_branch)
        if scope.first_nested < 0:
            scope.first_nested = pos
        self.use(value.cond)
        chain = scope.chain
        scope.children[pos] = [self.scope(true_branch, chain), self.scope(false_branch, chain)]

    def new_canonicalizer(self) -> Canonicalizer:
        """The canonicalizer, made at the first candidate binding."""
        self.canonicalizer = Canonicalizer(_Bound(self.stack, self.closed), self.checks.func.params)
        return self.canonicalizer

    def rebinding(self, var, value, h: int, scope: Scope, pos: int) -> None:
        """:meth:`binding` of ``var = value`` where ``value`` is a Var, when canonicalizing:
        a trivial binding, removed, and every later use of ``var`` is a use of its
        replacement (:meth:`.canonicalize.Canonicalizer.plan_rebinding`)."""
        canonicalizer = self.canonicalizer or self.new_canonicalizer()
        replacement, var_ty, value_ty = canonicalizer.plan_rebinding(var, value, h)
        self.substitute(h, replacement, var_ty, value_ty)
        scope.removed.add(pos)

    def substituted_call(
        self, value, op, var, scope: Scope, pos: int, args, n: int, first: int, h: int
    ) -> None:
        """The hot path's loop over the ``n`` arguments ``args`` of a call from ``first``, the
        first one canonicalization substitutes (``h``: its handle; the uses of those before
        were recorded): uses are recorded as uses of the replacements, and when only
        variables are replaced (by variables, or by the constants they are bound to) the new
        arguments are kept for the rebuild (``Scope.rebuilt``), which then needs no second
        read of the call."""
        subst, last = self.subst, scope.last
        array_get = ir.array_get
        if first:
            new_args = [array_get(args, i) for i in range(first)]
            simple = all(ir.is_var(arg) or type(arg) in _LEAVES for arg in new_args)
        else:
            new_args, simple = [], True
        outer = len(self.stack) > 1 or self.closed  # else a variable not in ``last`` is a parameter
        for i in range(first, n):
            if i == first:  # read by the hot path: substituted
                arg = subst[h]
                if arg is None:  # a constant is inlined: no variable is used
                    new_args.append(self.inlined[h])
                    continue
                ah = arg.__chandle__() >> SHIFT
            else:
                arg = array_get(args, i)
                arg_type = type(arg)
                if arg_type is ir.Var or arg_type is ir.DataflowVar:
                    ah = arg.__chandle__() >> SHIFT
                    if ah in subst:
                        arg = subst[ah]
                        if arg is None:  # a constant is inlined: no variable is used
                            new_args.append(self.inlined[ah])
                            continue
                        ah = arg.__chandle__() >> SHIFT
                elif arg_type in _LEAVES:
                    new_args.append(arg)
                    continue
                else:
                    self.pos_stack[-1] = pos
                    self.use(arg)
                    simple = False
                    new_args.append(arg)
                    continue
            if ah in last:
                last[ah] = pos
            elif outer:
                self.use_outer(ah, arg, pos)
            new_args.append(arg)
        scope.touched.add(pos)
        if simple:
            scope.rebuilt[pos] = (value, op, var, new_args)

    def substitute(self, h: int, replacement, ty, other_ty=None) -> None:
        """Every later use of variable ``h`` is a use of ``replacement`` (a variable or a
        constant, which holds none); ``ty`` and ``other_ty``: the replaced variable's type
        and, when it differs, the replacement's, which tell whether either can stand in an
        allocation's non-storage arguments (a chain of rebindings has each of its types in
        some link)."""
        if type(replacement) is ir.Var or type(replacement) is ir.DataflowVar:
            self.subst[h] = replacement
        else:
            self.subst[h] = None
            self.inlined[h] = replacement
        if type(ty) not in _NEVER_ALLOC_ARGS or (
            other_ty is not None and type(other_ty) not in _NEVER_ALLOC_ARGS
        ):
            self.subst_in_alloc = True

    def kill_target(self, call, scope: Scope, pos: int) -> int:
        """Handle of the variable a pre-existing kill names (after canonicalization)."""
        args = call.args
        n = ir.array_size(args)
        if n != 1:
            raise BenchkillError(
                f"malformed IR: {call.op.name} should have one argument, but has {n}"
            )
        target = ir.array_get(args, 0)
        if not ir.is_var(target):
            raise BenchkillError(
                f"malformed IR: non-normalized kill argument in {call.op.name}"
                f"({type(target).__name__}); a kill must name a variable"
            )
        if self.checks is not None and is_void_var(target):
            raise NeedsTVMCanonicalization  # rule 5b: TVM's Normalizer replaces the use
        h = target.__chandle__() >> SHIFT
        if self.subst and h in self.subst:
            target = self.subst[h]
            if target is None:  # a kill of a constant: let TVM's canonicalization decide
                raise NeedsTVMCanonicalization
            scope.touched.add(pos)
            h = target.__chandle__() >> SHIFT
        return h

    def touch_args(self, args, scope: Scope, pos: int) -> None:
        """Mark the binding if an argument the hot path skips is substituted (e.g. a dtype
        constant bound to a variable)."""
        subst = self.subst
        for arg in ir.items(args):
            if ir.is_var(arg) and arg.__chandle__() >> SHIFT in subst:
                scope.touched.add(pos)

    # -- uses -----------------------------------------------------------------
    def use_outer(self, h: int, var, pos: int) -> None:
        """A use, at ``pos`` of the current scope, of a variable not bound in it."""
        self.pos_stack[-1] = pos
        stack = self.stack
        for depth in range(len(stack) - 2, -1, -1):
            last = stack[depth].last
            if h in last:
                last[h] = self.pos_stack[depth]
                return
        scope = self.closed.get(h)
        if scope is not None:
            self.use_outside_scope(h, var, scope)
        # else a parameter

    def use_var(self, var) -> None:
        h = var.__chandle__() >> SHIFT
        subst = self.subst
        if subst and h in subst:
            self.stack[-1].touched.add(self.pos_stack[-1])
            var = subst[h]
            if var is None:
                return  # a constant is inlined
            h = var.__chandle__() >> SHIFT
        last = self.stack[-1].last
        if h in last:
            last[h] = self.pos_stack[-1]
        else:
            self.use_outer(h, var, self.pos_stack[-1])

    def use_outside_scope(self, h: int, var, scope: Scope) -> None:
        stack = self.stack
        chain = scope.chain
        common = 0
        while common + 1 < min(len(stack), len(chain)) and (
            stack[common + 1].index == chain[common + 1]
        ):
            common += 1
        previous = self.foreign.get(h)
        if previous is not None and previous[0] < common:
            common = previous[0]
        self.foreign[h] = (common, self.pos_stack[common], var)

    def use_value(self, expr) -> None:
        """Record uses of the variables in a binding's value (a call or an item may be one)."""
        kind = type(expr)
        if kind is ir.Call:
            op = expr.op
            if type(op) is not ir.Op:
                self.use(op)
            elif self.checks is not None and self.op_codes.get(op.__chandle__()) == _FNORMALIZE:
                raise NeedsTVMCanonicalization  # rule 5: FNormalize may rewrite it or raise
            args = expr.args
            for i in range(ir.array_size(args)):
                self.use(ir.array_get(args, i))
        elif kind is ir.TupleGetItem:
            self.use(expr.tuple_value)
        else:
            self.use(expr)

    def use(self, expr) -> None:
        """Record uses of the variables in a leaf expression or a tuple of them (an argument,
        a field, a condition, a result)."""
        kind = type(expr)
        if kind is ir.Var or kind is ir.DataflowVar:
            self.use_var(expr)
        elif kind is ir.Tuple:
            fields = expr.fields
            for i in range(ir.array_size(fields)):
                self.use(ir.array_get(fields, i))
        elif kind is ir.Call or kind is ir.TupleGetItem:
            if self.checks is not None:
                raise NeedsTVMCanonicalization  # not normalized: TVM binds it to a new Var
            self.use_value(expr)
        elif kind is ir.If or kind is ir.SeqExpr or kind is ir.Function:
            if self.checks is not None:
                raise NeedsTVMCanonicalization  # not normalized
            raise BenchkillError(
                f"malformed IR: a {kind.__name__} nested inside an expression (not normalized)"
            )
