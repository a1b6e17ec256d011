"""The walk behind :func:`benchkill.execution.attribution.attribute`: the lowered module
executed symbolically (:class:`benchkill.analysis.vm_model.SymbolicVM`: the frames,
registers and release rules the static liveness estimate follows too), each binding paired
with the call the tracer recorded for it.

:class:`Walker` runs the entry function, descends into Relax callees, takes the branch
the recorded ``read_if_cond`` says, and pairs each allocation, kill, branch and call
binding with the next recorded call, checking each pairing (kind, constant sizes and
shapes, the storage a tensor lives in).  On the way it follows each buffer as a
:class:`~benchkill.analysis.holders.Lifetime` (names, last use, kills), records the
steps that drop references (kills, returns, the bytecode return slot) for the causes of
releases, and takes the registers' snapshot at the trace's peak.
"""

from __future__ import annotations

from typing import Any

from benchkill.analysis.frame import Frame
from benchkill.analysis.holders import Lifetime, Site
from benchkill.analysis.vm_model import SymbolicVM
from benchkill.relax import ops

PROGRAM_KINDS = (
    "alloc_storage", "alloc_tensor", "alloc_shape_heap", "kill", "if_cond", "call", "return",
)  # fmt: skip


class AttributionError(Exception):
    """The recording and the IR disagree: the pairing stops there."""


def _objs(value: Any) -> set[int]:
    if value is None:
        return set()
    if isinstance(value, int):
        return {value}
    out: set[int] = set()
    for item in value:
        out |= _objs(item)
    return out


def _const_dims(expr: Any) -> list[int] | None:
    import tvm
    from tvm import relax

    if isinstance(expr, relax.ShapeExpr) and all(
        isinstance(d, tvm.tirx.IntImm) for d in expr.values
    ):
        return [int(d.value) for d in expr.values]
    return None


class Walker(SymbolicVM):
    """Pairs a recorded trace with the lowered module (module docstring).

    A value is the object id the recording gave an allocation (``None`` for nothing), or
    a tuple of values; a tensor keeps the buffer of its storage alive.  Nothing is freed
    by the walk: the recording says when each buffer was freed, and the release steps
    (kills, returns, the return slot) are kept in ``actions`` for the cause of each."""

    def __init__(self, mod: Any, events: list[dict[str, Any]], exec_mode: str, peak: int):
        super().__init__(mod, return_slot=exec_mode == "bytecode")
        self.exec_mode = exec_mode
        self.program = [e for e in events if e["kind"] in PROGRAM_KINDS]
        self.with_calls = any(e["kind"] == "call" for e in self.program)
        self.pos = 0
        self.objects: dict[int, dict[str, Any]] = {}
        self.lives: list[Lifetime] = []
        self.life_of: dict[int, int] = {}
        self.actions: list[dict[str, Any]] = []
        self.calls: dict[str, int] = {}
        self.peak_seq = peak

    def buffers(self, value: Any) -> set[int]:
        """The lifetimes (indexes) of the buffers ``value`` keeps alive."""
        out = set()
        for obj in _objs(value):
            info = self.objects.get(obj)
            buffer = info["storage"] if info is not None else None
            if buffer in self.life_of:
                out.add(self.life_of[buffer])
        return out

    # -- pairing
    def _last_seq(self) -> int:
        return self.program[self.pos - 1]["seq"] if self.pos else 0

    def expect(self, kind: str, frame: Frame, var: str | None) -> dict[str, Any]:
        if self.pos >= len(self.program):
            raise AttributionError(
                f"{frame.path}: the IR has {kind} for {var!r}, the recording has no more calls"
            )
        event = self.program[self.pos]
        if event["kind"] != kind:
            raise AttributionError(
                f"{frame.path}: the IR has {kind} for {var!r}, the recording has "
                f"{event['kind']} (event {event['seq']})"
            )
        self.pos += 1
        event["func"], event["clock"] = frame.name, self.clock
        if var is not None:
            event["var"] = var
        return event

    def action(self, kind: str, **fields: Any) -> None:
        self.actions.append(
            {"after": self._last_seq(), "clock": self.clock, "action": kind, **fields}
        )

    def new_object(self, event: dict[str, Any], frame: Frame, var: str) -> int:
        obj = event["obj"]
        kind = event["kind"].replace("alloc_", "")
        storage = event.get("storage") if kind == "tensor" else obj
        self.objects[obj] = {
            "kind": kind, "func": frame.name, "var": var, "storage": storage,
            "bytes": event.get("bytes"),
        }  # fmt: skip
        if kind != "tensor":
            self.life_of[obj] = len(self.lives)
            life = Lifetime(int(event["bytes"]), self.site, event["seq"], self.clock, kind=kind)
            self.lives.append(life)
            if event["seq"] == self.peak_seq:
                self.snapshot_pending = True
        return obj

    # -- execution
    def run(self, func: str) -> None:
        fn = self.mod[func]
        none = [None] * len(fn.params)
        self.call_function(func, fn, Frame(func), none, none)
        if self.pos != len(self.program):
            extra = self.program[self.pos]
            raise AttributionError(
                f"{len(self.program) - self.pos} recorded calls left over after the walk "
                f"(first: {extra['kind']}, event {extra['seq']})"
            )

    def returning(self, frame: Frame, index: Any, result: Any, back: Site) -> None:
        returned = _objs(result)
        held = {
            obj: index.printed.get(var, var.name)
            for var, value in frame.regs.items()
            for obj in _objs(value) - returned
        }
        dropped = _objs(self.replace_slot(result)) - returned
        self.action("return", site=back, held=held, slot_dropped=dropped)

    def branch(self, expr: Any, frame: Frame, var: str | None) -> Any:
        event = self.expect("if_cond", frame, var)
        return self.expr(expr.true_branch if event["value"] else expr.false_branch, frame)

    def call_expr(self, call: Any, frame: Frame, var: str | None) -> Any:
        from tvm import relax

        role = ops.ROLES.get(ops.op_name(call))
        if role == ops.STORAGE:
            event = self.expect("alloc_storage", frame, var)
            dims = _const_dims(call.args[0])
            if dims is not None and dims[0] != event["bytes"]:
                raise AttributionError(
                    f"{frame.path}.{var}: IR size {dims[0]} != recorded {event['bytes']}"
                )
            return self.new_object(event, frame, var or "?")
        if role == ops.TENSOR:
            event = self.expect("alloc_tensor", frame, var)
            storage_var = call.args[0]
            expected = frame.regs.get(storage_var)
            if expected is not None and expected != event["storage"]:
                raise AttributionError(
                    f"{frame.path}.{var}: IR storage {storage_var.name} is object "
                    f"{expected}, the recorded tensor lives in {event['storage']}"
                )
            dims = _const_dims(call.args[2])
            if dims is not None and dims != event["shape"]:
                raise AttributionError(
                    f"{frame.path}.{var}: IR shape {dims} != recorded {event['shape']}"
                )
            return self.new_object(event, frame, var or "?")
        if role == ops.KILL:
            event = self.expect("kill", frame, None)
            name, value = self.kill(frame, call.args[0])
            event["var"] = name
            self.action("kill", site=self.site, var=name, objs=_objs(value))
            return None
        if ops.op_name(call) == "relax.call_builtin_with_ctx":
            callee = call.args[0]
            symbol = getattr(callee, "global_symbol", None)
            if symbol == "vm.builtin.alloc_shape_heap":
                event = self.expect("alloc_shape_heap", frame, var)
                return self.new_object(event, frame, var or "shape_heap")
            return None
        if isinstance(call.op, relax.GlobalVar):
            callee = self.mod[call.op]
            if not isinstance(callee, relax.Function):
                return None  # a PrimFunc writes into its destination arguments
            args = [self.expr(a, frame) for a in call.args]
            name = call.op.name_hint
            self.calls[name] = self.calls.get(name, 0) + 1
            sub = Frame(name, f"{frame.path}/{var or '_'}={name}#{self.calls[name]}")
            if self.with_calls:
                event = self.expect("call", sub, None)
                if event.get("callee", name) != name:
                    raise AttributionError(f"{sub.path}: recorded call of {event['callee']}")
            result = self.call_function(name, callee, sub, args, [None] * len(args))
            if self.with_calls:
                self.expect("return", sub, None)
            return result
        if isinstance(call.op, relax.ExternFunc) and call.op.global_symbol == "vm.builtin.reshape":
            return self.expr(call.args[0], frame)  # a view keeps its source alive
        return None
