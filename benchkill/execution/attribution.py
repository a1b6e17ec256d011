"""Attribute a recorded trace (:mod:`.trace`) to the lowered Relax module the VM ran.

Both codegens emit one VM call per binding, in binding order, and the tracer hears
exactly these bindings:

=============================================  ==========================================
lowered binding                                recorded call
=============================================  ==========================================
``s = R.vm.alloc_storage(...)``                ``vm.builtin.alloc_storage``
``t = R.vm.alloc_tensor(s, ...)``              ``vm.builtin.alloc_tensor``
``R.vm.kill_object(v)``                        ``vm.builtin.null_value``
``h = R.call_builtin_with_ctx(                 ``vm.builtin.alloc_shape_heap``
"vm.builtin.alloc_shape_heap", ...)``
``if c: ... else: ...``                        ``vm.builtin.read_if_cond`` (the branch)
``y = f(x)``, ``f`` a Relax function           compiled: ``invoke_closure``; bytecode:
                                               the VM instrument
=============================================  ==========================================

So :func:`attribute` executes the lowered module symbolically alongside the recording:
it walks the entry function, descends into every call of a Relax function, takes the
branch the recording says, and pairs each binding of the table with the next recorded
call.  Every pairing is checked (the kind; a constant size or shape; the storage a tensor
is carved from must be the object bound to the storage variable the IR names), so a wrong
pairing is an attribution error, never a guess.  Each event gets its function and
variable; each release a cause, inferred from what the program did between the two
recorded calls around it (a kill of a variable holding the object, a return dropping a
frame's registers, the bytecode VM's return slot, the caller releasing the output).
The same walk follows every buffer as a :class:`~benchkill.analysis.holders.Lifetime`,
which gives the live set at the trace's peak and the waste of each variable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchkill.analysis.bindings import has_kills
from benchkill.analysis.holders import (
    CALLER,
    KILLED,
    RETURNED,
    SLOT,
    Explainer,
    Holder,
    Waste,
    holders_at,
    waste_of,
)
from benchkill.execution.explain import peak_parts, storage_classes
from benchkill.execution.replay import replay
from benchkill.execution.trace import MAX_EVENTS, TraceSummary, public_event
from benchkill.execution.walker import PROGRAM_KINDS, AttributionError, Walker

_PHASES = {
    "start": None,
    "run_end": "the caller released the output",
    "output_released": "the VM was destroyed (its return slot and registers)",
    "vm_released": "after the VM was destroyed",
}


@dataclass
class Attribution:
    """What :func:`attribute` found: ``matched`` of ``program_events`` recorded calls
    paired with the IR (``error`` says where the pairing stopped, if it did), the live
    set at the trace's peak and the waste of each variable (empty after an error)."""

    matched: int
    program_events: int
    error: str | None
    at_peak: tuple[Holder, ...] = ()
    waste: tuple[Waste, ...] = ()
    lives: list[Any] = field(default_factory=list)
    life_of: dict[int, int] = field(default_factory=dict)


def _how(free: dict[str, Any], actions: list[dict[str, Any]]) -> tuple[tuple, int | None]:
    """How an object died, from the last step between the two recorded calls around it
    that dropped a reference to it, and the binding clock of that step."""
    obj = free["obj"]
    found: tuple = ("unknown", None, None)
    clock = None
    for act in actions:
        if act["action"] == "kill" and obj in act["objs"]:
            found, clock = (KILLED, act["site"], act["var"]), act["clock"]
        elif act["action"] == "return" and obj in act["held"]:
            found, clock = (RETURNED, act["site"], act["held"][obj]), act["clock"]
        elif act["action"] == "return" and obj in act["slot_dropped"]:
            found, clock = (SLOT, act["site"], None), act["clock"]
    return found, clock


def _cause_text(how: tuple) -> str:
    kind, site, var = how
    if kind == KILLED:
        return f"kill of {site.function}.{var}"
    if kind == RETURNED:
        return f"{site} dropped its registers ({site.function}.{var})"
    if kind == SLOT:
        return f"{site} overwrote the VM return slot"
    return "unknown"


def attribute(
    mod: Any, events: list[dict[str, Any]], func: str, exec_mode: str, peak_seq: int
) -> Attribution:
    """Annotate the raw ``events`` in place (``func``, ``var``, a release's ``cause``) and
    follow every buffer; ``peak_seq`` is the event of the live peak (see
    :func:`benchkill.execution.trace.replay`), whose live set ``at_peak`` gives."""
    walker = Walker(mod, events, exec_mode, peak_seq)
    error = None
    try:
        walker.run(func)
    except AttributionError as exc:
        error = str(exc)
    by_after: dict[int, list[dict[str, Any]]] = {}
    for act in walker.actions:
        by_after.setdefault(act["after"], []).append(act)
    last_seq, last_clock, phase, prev = 0, 0, None, None
    for event in events:
        kind = event["kind"]
        if kind in PROGRAM_KINDS:
            last_seq, last_clock = event["seq"], event.get("clock", last_clock)
        elif kind == "phase":
            phase = _PHASES.get(event["what"], event["what"])
        elif kind.startswith("free_"):
            info = walker.objects.get(event["obj"], {})
            event["func"], event["var"] = info.get("func"), info.get("var")
            event["storage"], event["bytes"] = info.get("storage"), info.get("bytes")
            prev_info = walker.objects.get(prev["obj"], {}) if prev else {}
            if info.get("kind") == "storage" and prev_info.get("storage") == event["obj"]:
                how, clock = prev["how"], prev["how_clock"]  # its last tensor died
                event["cause"] = f"its last tensor {prev_info['func']}.{prev_info['var']} died"
            elif phase is not None:
                how, clock = (CALLER, None, None), last_clock
                event["cause"] = phase
            else:
                how, clock = _how(event, by_after.get(last_seq, []))
                event["cause"] = _cause_text(how)
            event["how"], event["how_clock"] = how, clock if clock is not None else last_clock
            life = walker.life_of.get(event["obj"])
            if life is not None:
                walker.lives[life].released(how, event["seq"], event["how_clock"])
        prev = event if kind.startswith("free_") else None
    result = Attribution(
        walker.pos, len(walker.program), error, lives=walker.lives, life_of=walker.life_of
    )
    if error is None:
        explain = Explainer(
            lambda name: walker.index(name) if name in walker.indexes else None, has_kills(mod)
        )
        lives = walker.lives
        result.at_peak = holders_at(lives, peak_seq, walker.held, explain) if lives else ()
        result.waste = waste_of(lives, explain)
    for event in events:
        event.pop("how", None)
    return result


def summarize_trace(
    lowered: Any,
    kill_input: Any,
    events: list[dict[str, Any]],
    func: str,
    exec_mode: str,
    memory_cfg: str,
    *,
    traced_run_peak: int,
    truncated: bool = False,
) -> tuple[list[list[Any]], TraceSummary]:
    """The raw ``events`` of a traced run (:func:`benchkill.execution.trace.stop`)
    replayed (:func:`~benchkill.execution.replay.replay`) and attributed to ``lowered``,
    the module the run's executable was built from (in the caller's process, which holds
    it; ``kill_input`` the module its kill step received, which tells the planner's
    storages, see :mod:`.explain`): the public events
    (:class:`~benchkill.execution.trace.TraceEvent` fields) and the
    :class:`~benchkill.execution.trace.TraceSummary`.  ``traced_run_peak`` is the VmHWM
    peak of the traced run; ``truncated`` whether the recorder stopped at its limit."""
    replayed = replay(events)
    found = attribute(lowered, events, func, exec_mode, replayed.live_peak_seq)
    error = found.error
    if truncated:
        error = f"the trace stopped at {MAX_EVENTS} events"
    parts = None
    if error is None:
        classes = storage_classes(kill_input, lowered)
        parts = peak_parts(events, found.lives, found.life_of, classes, memory_cfg)
    pooled = memory_cfg == "pooled"
    summary = TraceSummary(
        live_peak_bytes=replayed.live_peak,
        pooled_peak_bytes=replayed.pooled_peak,
        naive_peak_bytes=replayed.naive_peak,
        predicted_peak_bytes=replayed.pooled_peak if pooled else replayed.naive_peak,
        rss_peak_bytes=replayed.rss_peak,
        traced_run_peak_bytes=traced_run_peak,
        allocated_bytes=replayed.allocated,
        peak_seq=replayed.live_peak_seq,
        attributed=found.matched,
        program_events=found.program_events,
        attribution_error=error,
        at_peak=found.at_peak,
        waste=found.waste,
        live_curve=replayed.curve,
        peak_parts=parts,
    )
    return [public_event(e) for e in events], summary
