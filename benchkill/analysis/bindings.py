"""Where a binding is in its function: the index :mod:`.holders` explains things with.

:class:`BindingIndex` numbers the bindings of one Relax function in text order and names
their variables as TVMScript prints them, and knows each binding's scope and the first
nested scope (an If) of each scope: enough to say why a kill pass left a variable
unkilled.  What a binding reads is :func:`benchkill.analysis.nodes.vars_in`.
"""

from __future__ import annotations

from typing import Any

from benchkill.analysis.holders import Site
from benchkill.relax import ops


class BindingIndex:
    """Positions of the bindings of one Relax function, its scopes and their first If.

    ``site(var)`` gives a binding's :class:`Site`; ``printed`` the variable names as
    TVMScript prints them (parameters first, then bindings in text order; a second
    ``storage`` is ``storage_1``).
    """

    def __init__(self, name: str, fn: Any) -> None:
        from tvm import relax

        from benchkill.analysis.nodes import vars_in

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
                    self.used.update(vars_in(value))
                    index += 1
            self.used.update(vars_in(seq.body))
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
    if callee is None and ops.op_name(value) is not None:
        callee = ops.op_name(value).rsplit(".", 1)[-1]
    if ops.ROLES.get(ops.op_name(value)) == ops.KILL and value.args:
        target = value.args[0]
        return f"{callee}({getattr(target, 'name', '?')})"
    return f"{callee or name}(...)"


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
