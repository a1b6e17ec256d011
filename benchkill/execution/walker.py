"""The walk behind :func:`benchkill.execution.attribution.attribute`: the lowered module
executed symbolically, each binding paired with the call the tracer recorded for it.

:class:`Walker` runs the entry function, descends into Relax callees, takes the branch
the recorded ``read_if_cond`` says, and pairs each allocation, kill, branch and call
binding with the next recorded call, checking each pairing (kind, constant sizes and
shapes, the storage a tensor lives in).  On the way it follows each buffer as a
:class:`~benchkill.analysis.holders.Lifetime` (names, last use, kills), records the
steps that drop references (kills, returns, the bytecode return slot) for the causes of
releases, and takes the registers' snapshot at the trace's peak.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchkill.analysis.bindings import BindingIndex, used_vars
from benchkill.analysis.holders import Lifetime, Site
from benchkill.relax import ops

PROGRAM_KINDS = (
    "alloc_storage", "alloc_tensor", "alloc_shape_heap", "kill", "if_cond", "call", "return",
)  # fmt: skip


class AttributionError(Exception):
    """The recording and the IR disagree: the pairing stops there."""


@dataclass
class _Frame:
    func: str
    path: str
    regs: dict[Any, Any] = field(default_factory=dict)


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


class Walker:
    """Pairs a recorded trace with the lowered module (module docstring)."""

    def __init__(self, mod: Any, events: list[dict[str, Any]], exec_mode: str, peak: int):
        self.mod = mod
        self.exec_mode = exec_mode
        self.program = [e for e in events if e["kind"] in PROGRAM_KINDS]
        self.with_calls = any(e["kind"] == "call" for e in self.program)
        self.pos = 0
        self.indexes: dict[str, BindingIndex] = {}
        self.objects: dict[int, dict[str, Any]] = {}
        self.lives: list[Lifetime] = []
        self.life_of: dict[int, int] = {}
        self.actions: list[dict[str, Any]] = []
        self.slot: Any = None  # the bytecode VM's return_value_
        self.calls: dict[str, int] = {}
        self.clock = 0
        self.site = Site("?", 0, "?")
        self.frames: list[_Frame] = []
        self.peak_seq = peak
        self.held: dict[int, list[str]] = {}
        self.snapshot_pending = False

    def index(self, name: str) -> BindingIndex:
        found = self.indexes.get(name)
        if found is None:
            found = self.indexes[name] = BindingIndex(name, self.mod[name])
        return found

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

    def expect(self, kind: str, frame: _Frame, var: str | None) -> dict[str, Any]:
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
        event["func"], event["clock"] = frame.func, self.clock
        if var is not None:
            event["var"] = var
        return event

    def action(self, kind: str, **fields: Any) -> None:
        self.actions.append(
            {"after": self._last_seq(), "clock": self.clock, "action": kind, **fields}
        )

    def new_object(self, event: dict[str, Any], frame: _Frame, var: str) -> int:
        obj = event["obj"]
        kind = event["kind"].replace("alloc_", "")
        storage = event.get("storage") if kind == "tensor" else obj
        self.objects[obj] = {
            "kind": kind, "func": frame.func, "var": var, "storage": storage,
            "bytes": event.get("bytes"),
        }  # fmt: skip
        if kind != "tensor":
            self.life_of[obj] = len(self.lives)
            life = Lifetime(int(event["bytes"]), self.site, event["seq"], self.clock, kind=kind)
            self.lives.append(life)
            if event["seq"] == self.peak_seq:
                self.snapshot_pending = True
        return obj

    def _snapshot(self) -> None:
        found: dict[int, list[tuple[bool, int, int, str]]] = {}
        for depth, frame in enumerate(self.frames):
            index = self.index(frame.func)
            for order, (var, value) in enumerate(frame.regs.items()):
                name = f"{frame.func}.{index.printed.get(var, var.name)}"
                param = var not in index.position
                for life in self.buffers(value):
                    found.setdefault(life, []).append((param, depth, -order, name))
        self.held = {life: [n for *_, n in sorted(names)] for life, names in found.items()}

    # -- execution
    def run(self, func: str) -> None:
        fn = self.mod[func]
        self.call_function(func, fn, _Frame(func, func), [None] * len(fn.params))
        if self.pos != len(self.program):
            extra = self.program[self.pos]
            raise AttributionError(
                f"{len(self.program) - self.pos} recorded calls left over after the walk "
                f"(first: {extra['kind']}, event {extra['seq']})"
            )

    def call_function(self, name: str, fn: Any, frame: _Frame, args: list[Any]) -> Any:
        from tvm import relax

        index = self.index(name)
        caller = self.site
        self.frames.append(frame)
        for param, value in zip(fn.params, args, strict=True):
            frame.regs[param] = value
        result = self.expr(fn.body, frame, None)
        back = index.returns()
        body = fn.body.body if isinstance(fn.body, relax.SeqExpr) else fn.body
        self.use(frame, body, back)
        returned = _objs(result)
        held = {
            obj: index.printed.get(var, var.name)
            for var, value in frame.regs.items()
            for obj in _objs(value) - returned
        }
        dropped: set[int] = set()
        if self.exec_mode == "bytecode":
            dropped = _objs(self.slot) - returned
            self.slot = result
        self.action("return", site=back, held=held, slot_dropped=dropped)
        self.frames.pop()
        for life in self.buffers(args):  # the call binding uses its arguments until here
            self.lives[life].use(caller, self.clock)
        self.site = caller
        return result

    def use(self, frame: _Frame, expr: Any, site: Site) -> None:
        for var in used_vars(expr):
            for life in self.buffers(frame.regs.get(var)):
                self.lives[life].use(site, self.clock)

    def expr(self, expr: Any, frame: _Frame, var: str | None) -> Any:
        from tvm import relax

        if isinstance(expr, relax.SeqExpr):
            index = self.index(frame.func)
            for block in expr.blocks:
                for binding in block.bindings:
                    self.binding(binding, frame, index)
            return self.expr(expr.body, frame, None)
        if isinstance(expr, relax.Var):
            return frame.regs.get(expr)
        if isinstance(expr, relax.Tuple):
            return tuple(self.expr(f, frame, None) for f in expr.fields)
        if isinstance(expr, relax.TupleGetItem):
            value = self.expr(expr.tuple_value, frame, None)
            if isinstance(value, tuple) and 0 <= expr.index < len(value):
                return value[expr.index]
            return value
        if isinstance(expr, relax.If):
            event = self.expect("if_cond", frame, var)
            return self.expr(expr.true_branch if event["value"] else expr.false_branch, frame, None)
        if isinstance(expr, relax.Call):
            return self.call(expr, frame, var)
        return None

    def binding(self, binding: Any, frame: _Frame, index: BindingIndex) -> None:
        from tvm import relax

        site = self.site = index.site(binding.var)
        value_expr = binding.value
        kill = isinstance(value_expr, relax.Call) and (
            ops.ROLES.get(ops.op_name(value_expr)) == ops.KILL
        )
        if not kill:
            self.clock += 1
        self.use(frame, value_expr, site)
        value = self.expr(value_expr, frame, site.var)
        self.site = site
        frame.regs[binding.var] = value
        for life in self.buffers(value):
            self.lives[life].name(f"{frame.func}.{site.var}")
        if self.snapshot_pending:
            self.snapshot_pending = False
            self._snapshot()

    def call(self, call: Any, frame: _Frame, var: str | None) -> Any:
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
            target = call.args[0]
            event = self.expect("kill", frame, None)
            value = frame.regs.pop(target, None) if isinstance(target, relax.Var) else None
            name = self.index(frame.func).printed.get(target, getattr(target, "name", "?"))
            event["var"] = name
            for life in self.buffers(value):
                self.lives[life].kill(self.site)
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
            args = [self.expr(a, frame, None) for a in call.args]
            name = call.op.name_hint
            self.calls[name] = self.calls.get(name, 0) + 1
            sub = _Frame(name, f"{frame.path}/{var or '_'}={name}#{self.calls[name]}")
            if self.with_calls:
                event = self.expect("call", sub, None)
                if event.get("callee", name) != name:
                    raise AttributionError(f"{sub.path}: recorded call of {event['callee']}")
            result = self.call_function(name, callee, sub, args)
            if self.with_calls:
                self.expect("return", sub, None)
            return result
        if isinstance(call.op, relax.ExternFunc) and call.op.global_symbol == "vm.builtin.reshape":
            return self.expr(call.args[0], frame, None)  # a view keeps its source alive
        return None
