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
from dataclasses import dataclass, field
from typing import Any

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

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Waste:
        return cls(**_sites(data))


def _sites(data: dict[str, Any]) -> dict[str, Any]:
    return {
        key: Site(*value) if key.endswith("_at") and value is not None else value
        for key, value in data.items()
    }


# --- the answers -----------------------------------------------------------------------


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
    reason a variable was not killed (see
    :meth:`benchkill.analysis.bindings.BindingIndex.why_not_killed`);
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


def _site_text(site: Any) -> str | None:
    return None if site is None else str(site)


def compact_holders(at_peak: Sequence[Holder], waste: Sequence[Waste], top: int) -> dict[str, Any]:
    """The compact JSON form of a live set at the peak and a waste table (the ``top``
    first entries of each, sites as text such as ``"main binding 7 (gv6)"``): the
    ``peak_holders``, ``waste_by_function`` and ``waste_top`` a record's ``extra`` holds."""
    holders = [
        {
            "var": h.var,
            "bytes": h.bytes,
            "defined_at": _site_text(h.defined_at),
            "last_used_at": _site_text(h.last_used_at),
            "released_at": _site_text(h.released_at),
            "killed_at": _site_text(h.killed_at),
            "reason": h.reason,
        }
        for h in at_peak[:top]
    ]
    top_waste = [
        {"function": w.function, "var": w.var, "bytes": w.bytes, "bindings": w.bindings,
         "reason": w.reason}
        for w in waste[:top]
    ]  # fmt: skip
    return {
        "peak_holders": holders,
        "waste_by_function": waste_by_function(waste),
        "waste_top": top_waste,
    }
