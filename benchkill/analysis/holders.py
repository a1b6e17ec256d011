"""Who holds the memory: the live set at a peak, and the waste of each variable.

Both memory models of benchkill execute a lowered module binding by binding and follow
every buffer (a storage, or a shape heap) from its allocation to its release: the static
liveness model (:mod:`.liveness`) abstractly, the allocation trace of a real VM run
(:mod:`benchkill.execution.attribution`) in step with what the VM did.  Each fills one
:class:`Lifetime` per buffer; this module turns those into the two answers:

* :func:`holders_at`: the buffers live at the peak, as :class:`Holder` s: the variable
  holding each, its bytes, where it was defined, last used and released, and how: killed,
  or never killed and why (:func:`explain`, e.g. "no kill after the If at main binding 1");
* :func:`waste_of`: per variable, the bytes held after the last use, times how long, in
  bindings executed in between (kills are not counted: a kill right after the last use
  wastes nothing), as :class:`Waste`; :func:`waste_by_function` sums them per function.

A place in the run is a :class:`Site`: a function and the 1-based position of a binding
in its text (parameters not counted; bindings inside If branches are counted where they
are printed), with the binding's variable as TVMScript prints it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from benchkill.relax import ops

#: How a buffer was released (:attr:`Lifetime.release`).
KILLED, RETURNED, SLOT, REBOUND, CALLER = "kill", "return", "slot", "rebind", "caller"


@dataclass(frozen=True)
class Site:
    """Binding ``binding`` (1-based, text order) of ``function``, which binds ``var``;
    ``var == "<return>"`` is the function's return."""

    function: str
    binding: int
    var: str

    def __str__(self) -> str:
        if self.var == "<return>":
            return f"the return of {self.function}"
        return f"{self.function} binding {self.binding} ({self.var})"


@dataclass
class Lifetime:
    """One buffer from allocation to release, as a memory model saw it.

    ``tick`` values order allocations and releases (the live set at tick T is every
    buffer with ``allocated_tick <= T < released_tick``); ``clock`` values count the
    non-kill bindings executed so far (waste is measured in them; ``defined_clock`` is
    the clock at the allocation).  ``names`` are the
    variables (``function.var``) that held the buffer, in the order they were bound.
    ``release`` is how it went: (:data:`KILLED`, the kill's site, the killed variable),
    (:data:`RETURNED`, the return's site, the variable whose frame died),
    (:data:`SLOT`, the return's site, None) for the bytecode VM's return slot,
    (:data:`REBOUND`, site, variable), or (:data:`CALLER`, None, None) when the caller
    dropped the output; None while it is live.  ``kind`` is "storage" or "shape_heap".
    """

    bytes: int
    defined_at: Site
    allocated_tick: int
    defined_clock: int = 0
    names: list[str] = field(default_factory=list)
    last_used_at: Site | None = None
    last_used_clock: int | None = None
    killed_at: Site | None = None
    released_at: Site | None = None
    released_tick: int | None = None
    released_clock: int | None = None
    release: tuple[str, Site | None, str | None] | None = None
    last_kill: Site | None = None
    kind: str = "storage"

    def name(self, name: str) -> None:
        if name not in self.names:
            self.names.append(name)

    def use(self, site: Site, clock: int) -> None:
        self.last_used_at, self.last_used_clock = site, clock

    def released(self, how: tuple[str, Site | None, str | None], tick: int, clock: int) -> None:
        self.release, self.released_at = how, how[1]
        self.released_tick, self.released_clock = tick, clock
        if how[0] == KILLED:
            self.killed_at = how[1]
        elif how[0] == SLOT:
            self.killed_at = self.last_kill

    def kill(self, site: Site) -> None:
        """A variable holding the buffer was killed at ``site`` (the buffer may live on:
        another variable, or the bytecode VM's return slot, can still hold it)."""
        self.last_kill = site


@dataclass(frozen=True)
class Holder:
    """A buffer live at the peak: ``var`` is the variable holding it then (the one bound
    last; ``held_by`` lists all), ``reason`` how it is released (or why it is not
    killed), ``killed_at`` the kill that released it (None: never killed)."""

    var: str
    bytes: int
    defined_at: Site
    last_used_at: Site | None
    released_at: Site | None
    killed_at: Site | None
    reason: str
    held_by: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return _plain(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Holder:
        return cls(**_sites({**data, "held_by": tuple(data.get("held_by", ()))}))


@dataclass(frozen=True)
class Waste:
    """Bytes held after their last use: by ``function.var`` (the variable whose release
    freed the buffer, or that held it last), for ``bindings`` bindings (kills not
    counted) from ``last_used_at`` to ``released_at``."""

    function: str
    var: str
    bytes: int
    bindings: int
    last_used_at: Site | None
    released_at: Site | None
    reason: str

    @property
    def byte_bindings(self) -> int:
        return self.bytes * self.bindings

    def as_dict(self) -> dict[str, Any]:
        return _plain(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Waste:
        return cls(**_sites(data))


def _plain(obj: Any) -> dict[str, Any]:
    data = asdict(obj)
    for key, value in data.items():
        if isinstance(value, dict) and set(value) == {"function", "binding", "var"}:
            data[key] = [value["function"], value["binding"], value["var"]]
        elif isinstance(value, tuple):
            data[key] = list(value)
    return data


def _sites(data: dict[str, Any]) -> dict[str, Any]:
    return {
        key: Site(*value) if key.endswith("_at") and value is not None else value
        for key, value in data.items()
    }


# --- the binding index of a function: positions, scopes, first If ----------------------


def used_vars(expr: Any) -> list[Any]:
    """The variables an expression of lowered (A-normal) Relax reads directly; a kill
    reads none."""
    from tvm import relax

    if isinstance(expr, relax.Var):
        return [expr]
    if isinstance(expr, relax.Tuple):
        return [v for f in expr.fields for v in used_vars(f)]
    if isinstance(expr, relax.TupleGetItem):
        return used_vars(expr.tuple_value)
    if isinstance(expr, relax.If):
        return used_vars(expr.cond)
    if isinstance(expr, relax.Call):
        if ops.ROLES.get(ops.op_name(expr)) == ops.KILL:
            return []
        return [v for a in expr.args for v in used_vars(a)]
    return []


class BindingIndex:
    """Positions of the bindings of one Relax function, its scopes and their first If.

    ``site(var)`` gives a binding's :class:`Site`; ``printed`` the variable names as
    TVMScript prints them (parameters first, then bindings in text order; a second
    ``storage`` is ``storage_1``).
    """

    def __init__(self, name: str, fn: Any) -> None:
        from tvm import relax

        self.name = name
        self.printed: dict[Any, str] = {}
        self.position: dict[Any, int] = {}
        self.scope_of: dict[Any, tuple[Any, int]] = {}  # var -> (SeqExpr, index in it)
        self.first_nested: dict[Any, tuple[int, Any]] = {}  # SeqExpr -> (index, If var)
        self.results: dict[Any, bool] = {}  # var a scope returns -> is it the function's
        self.by_name: dict[str, Any] = {}
        self.used: set[Any] = set()  # variables some binding or scope result reads
        used: set[str] = set()

        def name_of(var: Any) -> None:
            base = var.name
            text, k = base, 0
            while text in used:
                k += 1
                text = f"{base}_{k}"
            used.add(text)
            self.printed[var] = text
            self.by_name[text] = var

        def visit(seq: Any) -> None:
            index = 0
            for block in seq.blocks:
                for binding in block.bindings:
                    value = binding.value
                    nested = isinstance(value, (relax.If, relax.Function))
                    if nested and seq not in self.first_nested:
                        self.first_nested[seq] = (index, binding.var)
                    if isinstance(value, relax.If):
                        for branch in (value.true_branch, value.false_branch):
                            if isinstance(branch, relax.SeqExpr):
                                visit(branch)
                    name_of(binding.var)
                    if self.printed[binding.var].startswith("_"):
                        self.printed[binding.var] = _label(value, self.printed[binding.var])
                    self.position[binding.var] = len(self.position) + 1
                    self.scope_of[binding.var] = (seq, index)
                    self.used.update(used_vars(value))
                    index += 1
            self.used.update(used_vars(seq.body))
            if isinstance(seq.body, relax.Var):
                self.results[seq.body] = seq.same_as(fn.body)

        for param in fn.params:
            name_of(param)
        if isinstance(fn.body, relax.SeqExpr):
            visit(fn.body)

    def site(self, var: Any) -> Site:
        return Site(self.name, self.position.get(var, 0), self.printed.get(var, var.name))

    def returns(self) -> Site:
        return Site(self.name, len(self.position) + 1, "<return>")

    def why_not_killed(self, name: str) -> str | None:
        """Why the kill pass left the variable printed as ``name`` unkilled, if the text
        says: it is a scope's result, or its scope has an If at or before its last use
        (TVM's KillInserter emits no kill in a scope at or after its first nested scope)."""
        var = self.by_name.get(name)
        if var is None:
            return None
        if var in self.results:
            if self.results[var]:
                return f"returned by {self.name}"
            return "the result of an If branch: the kill pass never kills a scope's result"

        scope = self.scope_of.get(var)
        if scope is None:
            return None
        if var not in self.used:
            return "never used: the kill pass kills a variable only after its last use"
        seq, index = scope
        nested = self.first_nested.get(seq)
        if nested is None:
            return None
        at, if_var = nested
        if index >= at or _used_at_or_after(seq, var, at):
            return f"no kill after the If at {self.site(if_var)}"
        return None


def _label(value: Any, name: str) -> str:
    """What an unnamed binding (``_``) does: ``kill_tensor(alloc)``, ``multiply(...)``."""
    from tvm import relax

    if not isinstance(value, relax.Call):
        return name
    op = value.op
    callee = getattr(op, "name_hint", None) or getattr(op, "global_symbol", None)
    if callee is None and isinstance(op, tvm_op_type()):
        callee = op.name.rsplit(".", 1)[-1]
    if ops.ROLES.get(ops.op_name(value)) == ops.KILL and value.args:
        target = value.args[0]
        return f"{callee}({getattr(target, 'name', '?')})"
    return f"{callee or name}(...)"


def tvm_op_type() -> Any:
    import tvm

    return tvm.ir.Op


def _used_at_or_after(seq: Any, var: Any, start: int) -> bool:
    from tvm import relax

    found = []
    bindings = [b for block in seq.blocks for b in block.bindings]
    for binding in bindings[start:]:
        relax.analysis.post_order_visit(
            binding.value, lambda e: found.append(e) if e.same_as(var) else None
        )
        if found:
            return True
    return bool(isinstance(seq.body, relax.Var) and seq.body.same_as(var))


# --- the answers -----------------------------------------------------------------------


def has_kills(mod: Any) -> bool:
    """Whether any Relax function of ``mod`` calls a kill operator."""
    from tvm import relax

    found: list[Any] = []

    def visit(expr: Any) -> None:
        if isinstance(expr, relax.Call) and ops.ROLES.get(ops.op_name(expr)) == ops.KILL:
            found.append(expr)

    for _, fn in mod.functions_items():
        if isinstance(fn, relax.Function):
            relax.analysis.post_order_visit(fn, visit)
            if found:
                return True
    return False


class Explainer:
    """:func:`explain` for the lifetimes of one module: ``indexes`` gives the
    :class:`BindingIndex` of a function by name."""

    def __init__(self, indexes: Any, kills: bool) -> None:
        self.indexes, self.kills = indexes, kills

    def why(self, function: str, var: str) -> str | None:
        index = self.indexes(function)
        return None if index is None else index.why_not_killed(var)

    def __call__(self, life: Lifetime) -> str:
        return explain(life, self.why, self.kills)


def explain(life: Lifetime, why_not_killed: Any, has_kills: bool) -> str:
    """How ``life`` ends, in words.  ``why_not_killed(function, var)`` gives the text's
    reason a variable was not killed (see :meth:`BindingIndex.why_not_killed`);
    ``has_kills`` says whether the module holds any kill."""
    how = life.release
    if how is None or how[0] == CALLER:
        return "never killed: the output of the run"
    kind, site, var = how
    if kind == KILLED:
        return f"killed at {site}"
    if site is None:
        return "released, but the walk found no step that dropped it"
    if kind == SLOT:
        before = f"killed at {life.killed_at}; " if life.killed_at is not None else ""
        return f"{before}the bytecode VM's return slot held it until {site}"
    if life.kind == "shape_heap":
        return (
            "a shape heap: VMShapeLower adds it after the kill step, so nothing kills it; "
            f"freed at {site}"
        )
    if not has_kills:
        return "never killed: the module has no kills"
    function = site.function if site is not None else "?"
    reason = why_not_killed(function, var) if var is not None else None
    where = f" ({function}.{var})" if var is not None else ""
    if reason is None:
        reason = f"no kill of {function}.{var}" if var is not None else "no kill"
    if kind == REBOUND:
        return f"never killed{where}: {reason}; freed when its register was rebound at {site}"
    return f"never killed{where}: {reason}; freed at {site}"


def _final_var(life: Lifetime) -> tuple[str, str]:
    how = life.release
    if how is not None and how[2] is not None and how[1] is not None:
        return how[1].function, how[2]
    last = life.names[-1] if life.names else f"{life.defined_at.function}.{life.defined_at.var}"
    function, _, var = last.partition(".")
    return function, var


def holders_at(
    lives: Iterable[Lifetime], tick: int, held: dict[int, list[str]], explain_one: Any
) -> tuple[Holder, ...]:
    """The buffers live at ``tick`` (largest first).  ``held`` maps a buffer's index in
    ``lives`` to the variables holding it then; ``explain_one(life)`` gives its reason."""
    out = []
    for i, life in enumerate(lives):
        live = life.allocated_tick <= tick and (
            life.released_tick is None or life.released_tick > tick
        )
        if not live:
            continue
        names = tuple(held.get(i, ())) or tuple(life.names[-1:])
        out.append(
            Holder(
                var=names[0] if names else life.defined_at.var,
                bytes=life.bytes,
                defined_at=life.defined_at,
                last_used_at=life.last_used_at,
                released_at=life.released_at,
                killed_at=life.killed_at,
                reason=explain_one(life),
                held_by=names,
            )
        )
    out.sort(key=lambda h: -h.bytes)
    return tuple(out)


def waste_of(lives: Iterable[Lifetime], explain_one: Any) -> tuple[Waste, ...]:
    """Each buffer's bytes held after its last use, released later (largest first);
    buffers never released (the outputs) and those released with no binding in between
    are left out."""
    out = []
    for life in lives:
        if life.released_clock is None:
            continue
        start = life.last_used_clock
        if start is None:  # never used: wasted from its allocation on
            start = life.defined_clock
        bindings = life.released_clock - start
        if bindings <= 0:
            continue
        function, var = _final_var(life)
        out.append(
            Waste(
                function, var, life.bytes, bindings, life.last_used_at, life.released_at,
                explain_one(life),
            )
        )  # fmt: skip
    out.sort(key=lambda w: (-w.byte_bindings, w.function, w.var))
    return tuple(out)


def waste_by_function(waste: Sequence[Waste]) -> dict[str, int]:
    """Byte-bindings wasted per function (largest first)."""
    total: dict[str, int] = {}
    for w in waste:
        total[w.function] = total.get(w.function, 0) + w.byte_bindings
    return dict(sorted(total.items(), key=lambda kv: -kv[1]))
