"""Memory of Relax VM programs: the measured peak of a run, and the static liveness bound.

Measured peak (Linux)
---------------------
:func:`peak_of` runs a callable and returns how far the process's resident set rose
above where it stood just before: it reads ``VmRSS``, writes ``5`` to
``/proc/self/clear_refs`` (which resets the kernel's high-water mark ``VmHWM`` to the
current RSS), runs the callable, then reads ``VmHWM``.  The kernel raises ``VmHWM``
whenever pages are unmapped and on reading, so it holds the true peak of the call
(within the kernel's per-CPU RSS counter slack, a few hundred KB).  Everything
resident before the call (the interpreter, TVM, the compiled module, the inputs)
cancels out.  Pages count only once written, which VM tensors always are.

A measurement runs in a fresh child process (:func:`run_child`), so one case cannot
disturb another and a crash, even a segfault, is reported instead of taking the
parent down.  The child sets ``MALLOC_MMAP_THRESHOLD_`` (see :data:`CHILD_ENV`): a
fixed threshold turns off glibc's dynamic one, so every large buffer is its own mmap
and ``free`` returns it to the system at once.  Without it glibc keeps freed 16 MB
buffers in its heap and reuses them, and the naive allocator's peak (or the pooled
allocator's after its pool is cleared) would be hidden by memory left over from an
earlier run.  The VM's pooled allocator keeps freed buffers in a pool and hands them
out again for a request of the same page-rounded size, so its resident peak is the
pool's high-water mark: the largest total the program held at once when its buffers
have one size, which is exactly what kills lower (see ``pooled_bytes`` below for mixed
sizes).  The calibration test checks the method against known allocations.

Static liveness bound
---------------------
:func:`estimate_memory` lowers a module like ``relax.build`` does up to and including
the kill step and then executes it abstractly, following what the bytecode VM frees
and when:

* ``alloc_storage`` allocates a block of its byte size; ``alloc_tensor`` carves a tensor
  that keeps its storage's block alive; a block is freed when nothing refers to it.
* every binding holds its value in its own VM register (a binding ``b = a`` copies the
  reference, as CodeGenVM's ``vm.builtin.copy`` does), and so does the merge register
  of an ``If``; a register lets go of its value at ``kill_tensor``, ``kill_storage`` or
  ``kill_object`` of its variable, or when its function returns;
* a call of a Relax function runs the callee in a new frame; in bytecode mode its
  result is also held by the VM's return slot (``return_value_``) until the next
  function returns, so a killed result can outlive its kill (the compiled VM has no
  such slot: ``return_slot=False``);
* the inputs belong to the caller and are not counted; constants are loaded with the
  executable and not counted; buffers allocated inside kernels and by packed functions
  are not seen (a packed call's result is taken to share its arguments' memory).

The liveness peak is the largest total of live block bytes at any point of the run,
taken over every path through ``If`` branches: the least memory the kills in the module
allow.  The live-bytes curve gives the total after each binding of each frame.  The
same execution also replays the pooled allocator (a freed buffer is reused only for a
request of the same page-rounded size), whose total is ``pooled_bytes``: what the VM
with ``memory_cfg="pooled"`` should measure when buffer sizes differ.
"""

from __future__ import annotations

import math
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from benchkill.errors import BenchkillError

T = TypeVar("T")

# ---------------------------------------------------------------------------
# Measured peak
# ---------------------------------------------------------------------------

#: Environment added to a measurement child: a fixed mmap threshold (bytes) disables
#: glibc's dynamic threshold, so that freed large buffers go back to the system.
CHILD_ENV = {"MALLOC_MMAP_THRESHOLD_": "65536"}

_CLEAR_REFS = "/proc/self/clear_refs"
_STATUS = "/proc/self/status"
_STATM = "/proc/self/statm"
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def peak_supported() -> bool:
    """True where :func:`peak_of` works (Linux with a writable ``clear_refs``)."""
    return os.access(_CLEAR_REFS, os.W_OK) and os.path.exists(_STATUS)


def resident_bytes() -> int:
    """The resident set size of this process, in bytes (cheap: one read of statm)."""
    with open(_STATM) as f:
        return int(f.read().split()[1]) * _PAGE


def _status_bytes(key: str) -> int:
    with open(_STATUS) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise BenchkillError(f"{_STATUS} has no {key} line")


def peak_of(fn: Callable[[], T]) -> tuple[T, int]:
    """Run ``fn()``; return its result and the peak rise of resident memory in bytes.

    The result is kept alive until the peak has been read, so it counts in the peak.
    """
    if not peak_supported():
        raise BenchkillError("peak memory needs Linux with a writable /proc/self/clear_refs")
    before = _status_bytes("VmRSS")
    with open(_CLEAR_REFS, "w") as f:
        f.write("5")
    result = fn()
    peak = _status_bytes("VmHWM")
    return result, max(0, peak - before)


class VMEvent(NamedTuple):
    """One point of a measured bytecode timeline: a VM call, before or after it ran,
    and the resident bytes above the start of the run at that moment."""

    symbol: str
    before: bool
    resident_bytes: int


# ---------------------------------------------------------------------------
# Child processes
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ChildOutcome:
    """How a child process ended: exit code (negative: killed by that signal)."""

    returncode: int | None
    timed_out: bool
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def describe(self) -> str:
        """One line saying why the child failed (empty if it did not)."""
        if self.timed_out:
            return "child process timed out"
        if self.returncode is None or self.returncode == 0:
            return ""
        if self.returncode < 0:
            # (the stderr of a crash is a native backtrace: no one line says more)
            try:
                return f"child process killed by {signal.Signals(-self.returncode).name}"
            except ValueError:
                return f"child process killed by signal {-self.returncode}"
        tail = _last_line(self.stderr)
        what = f"child process exited with code {self.returncode}"
        return f"{what}: {tail}" if tail else what


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def run_child(module: str, workdir: Path, timeout: float) -> ChildOutcome:
    """Run ``python -m module workdir`` in a fresh process with :data:`CHILD_ENV`."""
    env = dict(os.environ)
    for key, value in CHILD_ENV.items():
        env.setdefault(key, value)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", module, str(workdir)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as exc:
        stderr = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else ""
        return ChildOutcome(None, True, stderr or "")
    return ChildOutcome(proc.returncode, False, proc.stderr)


def measure_allocation(nbytes: int, *, timeout: float = 120.0) -> int:
    """Measured peak of a child that allocates and writes ``nbytes`` with numpy.

    The calibration of :func:`peak_of`: the answer should be ``nbytes`` within a
    fraction of a percent.  Also the reference measurement of the ``vm`` suite.
    """
    import json
    import tempfile

    if not isinstance(nbytes, int) or nbytes <= 0:
        raise BenchkillError(f"nbytes must be a positive integer, not {nbytes!r}")
    with tempfile.TemporaryDirectory(prefix="benchkill-alloc-") as tmp:
        work = Path(tmp)
        (work / "request.json").write_text(json.dumps({"task": "allocate", "nbytes": nbytes}))
        outcome = run_child("benchkill.execution.vm_child", work, timeout)
        result_file = work / "result.json"
        if not outcome.ok or not result_file.exists():
            raise BenchkillError(f"allocation measurement failed: {outcome.describe()}")
        result = json.loads(result_file.read_text())
    if result.get("error"):
        raise BenchkillError(f"allocation measurement failed: {result['error']}")
    return int(result["peak_bytes"])


# ---------------------------------------------------------------------------
# Static estimate
# ---------------------------------------------------------------------------

#: Above this many paths through If branches the liveness search stops (exhaustive=False).
MAX_PATHS = 64

#: The pooled allocator rounds every request up to a multiple of this (its page size).
POOL_PAGE = 4096

_ALLOC_STORAGE = ("relax.memory.alloc_storage", "relax.vm.alloc_storage")
_ALLOC_TENSOR = ("relax.memory.alloc_tensor", "relax.vm.alloc_tensor")
_BUILTIN_ALLOC = "relax.builtin.alloc_tensor"
_KILLS = ("relax.memory.kill_tensor", "relax.memory.kill_storage", "relax.vm.kill_object")


class LivePoint(NamedTuple):
    """Live storage bytes right after the binding of ``var`` in ``function``."""

    function: str
    var: str
    live_bytes: int


@dataclass(frozen=True)
class MemoryEstimate:
    """Static memory figures of one lowered module (see the module docstring).

    ``allocated_bytes`` maps each Relax function to the bytes of its constant-size
    ``alloc_storage`` calls (TVM's ``estimate_memory_usage`` "with memory planning"
    figure) and ``total_bytes`` is their sum; ``executed_bytes`` counts every
    allocation of one run of ``func`` (a function called twice counts twice, symbolic
    sizes from the input shapes); ``liveness_peak_bytes`` is the largest total live at
    once given the kills; ``pooled_bytes`` what the VM's pooled allocator ends up
    holding, which can be more: it reuses a freed buffer only for a request of the same
    page-rounded size; ``curve`` the live bytes after each binding on the path that
    reaches the peak.  ``paths`` is how many paths through If branches were followed.
    """

    kill: str | None
    func: str
    allocated_bytes: Mapping[str, int]
    total_bytes: int
    executed_bytes: int
    liveness_peak_bytes: int
    pooled_bytes: int
    curve: tuple[LivePoint, ...]
    paths: int
    exhaustive: bool = True
    dynamic_allocations: Mapping[str, int] = field(default_factory=dict)


def estimate_memory(
    mod: Any,
    input_shapes: Mapping[str, Sequence[int]] | Sequence[Sequence[int] | None] | None = None,
    *,
    kill: str | None = "benchkill",
    lowered: bool = False,
    func: str = "main",
    return_slot: bool = True,
) -> MemoryEstimate:
    """Static memory figures of ``mod`` as ``relax.build`` would run it.

    Parameters
    ----------
    mod : tvm.IRModule
        A high-level Relax module, or with ``lowered=True`` one already lowered to
        ``alloc_storage``/``alloc_tensor`` (used exactly as given).
    input_shapes : mapping of parameter name to shape, or shapes by position
        Values for symbolic dimensions of ``func``'s parameters (None where a
        parameter is not a tensor).  Needed only when sizes are symbolic.
    kill : {"tvm", "benchkill", "beyond", "legacy", None}
        The kill step run after lowering (ignored when ``lowered``).
    return_slot : bool
        Model the bytecode VM's return slot, which holds the last returned value until
        the next return (True; the compiled VM has none).
    """
    import tvm

    from benchkill.execution.pipeline import kill_pass, lower_to_kill_input

    if not isinstance(mod, tvm.IRModule):
        raise BenchkillError(f"estimate_memory needs a tvm.IRModule, not {type(mod).__name__}")
    names = [gv.name_hint for gv in mod.get_global_vars()]
    if func not in names:
        raise BenchkillError(f"module has no function {func!r} (has {', '.join(sorted(names))})")
    if not lowered:
        step = kill_pass(kill)
        mod = lower_to_kill_input(mod)
        if step is not None:
            mod = step(mod)
    allocated, dynamic = _static_allocations(mod)
    search = _explore(mod, func, input_shapes, return_slot)
    best = max(search.runs, key=lambda r: r.peak)
    return MemoryEstimate(
        kill=None if lowered else kill,
        func=func,
        allocated_bytes=allocated,
        total_bytes=sum(allocated.values()),
        executed_bytes=best.allocated,
        liveness_peak_bytes=best.peak,
        pooled_bytes=max(r.pooled for r in search.runs),
        curve=tuple(best.curve),
        paths=len(search.runs),
        exhaustive=search.exhaustive,
        dynamic_allocations=dynamic,
    )


def tvm_planned_bytes(mod: Any) -> dict[str, float]:
    """Per function, the "with memory planning" bytes of TVM's estimate_memory_usage.

    TVM prints the figure in GB to four significant digits, so it is approximate.
    """
    from tvm import relax

    text = relax.analysis.estimate_memory_usage(mod)
    out: dict[str, float] = {}
    pattern = re.compile(
        r"- Function (\S+):.*?With memory planning, there are \d+ constant-size memory "
        r"allocation\(s\) with total size ([0-9.e+-]+) GB",
        re.S,
    )
    for name, gb in pattern.findall(text):
        out[name] = float(gb) * 2**30
    return out


# --- static totals -----------------------------------------------------------


def _op_name(call: Any) -> str | None:
    import tvm

    return call.op.name if isinstance(call.op, tvm.ir.Op) else None


def _walk_calls(expr: Any) -> list[Any]:
    from tvm import relax

    calls: list[Any] = []
    relax.analysis.post_order_visit(
        expr, lambda e: calls.append(e) if isinstance(e, relax.Call) else None
    )
    return calls


def _static_allocations(mod: Any) -> tuple[dict[str, int], dict[str, int]]:
    """Constant-size bytes allocated in the text of each Relax function (and the number
    of allocations whose size is symbolic)."""
    import tvm
    from tvm import relax

    allocated: dict[str, int] = {}
    dynamic: dict[str, int] = {}
    for gv, fn in mod.functions_items():
        if not isinstance(fn, relax.Function):
            continue
        total = count = 0
        for call in _walk_calls(fn):
            name = _op_name(call)
            if name in _ALLOC_STORAGE:
                size = call.args[0].values[0]
            elif name == _BUILTIN_ALLOC:
                size = _tensor_bytes_expr(call.args[0].values, call.args[1].value)
            else:
                continue
            if isinstance(size, tvm.tirx.IntImm):
                total += int(size.value)
            else:
                count += 1
        allocated[gv.name_hint] = total
        if count:
            dynamic[gv.name_hint] = count
    return allocated, dynamic


def _dtype_bytes(dtype: Any) -> int:
    import tvm

    dt = tvm.DataType(str(dtype))
    return (dt.bits * dt.lanes + 7) // 8


def _tensor_bytes_expr(dims: Sequence[Any], dtype: Any) -> Any:
    """Bytes of a tensor of shape ``dims``: an IntImm when every dim is constant."""
    import tvm

    nbytes = _dtype_bytes(dtype)
    if all(isinstance(d, tvm.tirx.IntImm) for d in dims):
        return tvm.tirx.IntImm("int64", nbytes * math.prod(int(d.value) for d in dims))
    size: Any = tvm.tirx.IntImm("int64", nbytes)
    for d in dims:
        size = size * d
    return size


# --- abstract execution --------------------------------------------------------

# A value is the frozenset of blocks it keeps alive, or a tuple of values.
_EMPTY: frozenset[int] = frozenset()


def _blocks(value: Any) -> frozenset[int]:
    if isinstance(value, frozenset):
        return value
    out: set[int] = set()
    for item in value:
        out |= _blocks(item)
    return frozenset(out)


class _Frame:
    """One function activation: its registers and the values of its shape variables."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.regs: dict[Any, Any] = {}
        self.symbols: dict[int, tuple[Any, int]] = {}  # handle -> (tir var, value)
        self._analyzer: Any = None

    def bind(self, var: Any, value: int) -> None:
        key = var.__chandle__()
        if key in self.symbols:
            return
        self.symbols[key] = (var, value)
        if self._analyzer is not None:
            self._analyzer.bind(var, value)

    def value_of(self, expr: Any) -> int | None:
        """The integer value of a PrimExpr, or None if it depends on unknown symbols."""
        import tvm

        if isinstance(expr, tvm.tirx.IntImm):
            return int(expr.value)
        if self._analyzer is None:
            import tvm.sym

            self._analyzer = tvm.sym.Analyzer()
            for var, value in self.symbols.values():
                self._analyzer.bind(var, value)
        folded = self._analyzer.simplify(expr)
        return int(folded.value) if isinstance(folded, tvm.tirx.IntImm) else None

    def size_of(self, expr: Any) -> int:
        value = self.value_of(expr)
        if value is None:
            raise BenchkillError(
                f"size {expr} in function {self.name!r} depends on symbolic dimensions "
                "without a value; pass input_shapes"
            )
        return value


def _shape_values(ty: Any) -> list[Any] | None:
    """The dimension expressions of a tensor or shape type (None if unknown)."""
    from tvm import relax

    if isinstance(ty, relax.TensorType):
        shape = ty.shape
        return list(shape.values) if isinstance(shape, relax.ShapeExpr) else None
    if isinstance(ty, relax.ShapeType):
        return list(ty.values) if ty.values is not None else None
    return None


def _bind_shape(frame: _Frame, ty: Any, concrete: Sequence[int] | None) -> None:
    """Give the symbolic dimensions of ``ty`` the values of a concrete shape."""
    import tvm

    dims = _shape_values(ty)
    if dims is None or concrete is None or len(dims) != len(concrete):
        return
    for dim, value in zip(dims, concrete, strict=True):
        if value is not None and isinstance(dim, tvm.tirx.Var):
            frame.bind(dim, int(value))


def _concrete_shape(frame: _Frame, ty: Any) -> list[int | None] | None:
    dims = _shape_values(ty)
    return None if dims is None else [frame.value_of(d) for d in dims]


@dataclass
class _Run:
    """One abstract execution along one path through the If branches."""

    choices: list[bool] = field(default_factory=list)
    peak: int = 0
    allocated: int = 0
    pooled: int = 0
    curve: list[LivePoint] = field(default_factory=list)


class _Machine:
    """Executes lowered Relax abstractly, counting live block bytes (module docstring)."""

    def __init__(self, mod: Any, forced: Sequence[bool], return_slot: bool) -> None:
        self.mod = mod
        self.forced = list(forced)
        self.use_return_slot = return_slot
        self.run = _Run()
        self.sizes: dict[int, int] = {}
        self.refs: dict[int, int] = {}
        self.live = 0
        self.next_block = 0
        self.slot: Any = _EMPTY
        self.pool: dict[int, int] = {}  # page-rounded size -> free pooled buffers

    # -- block reference counting
    def _new_block(self, size: int) -> frozenset[int]:
        self.next_block += 1
        block = self.next_block
        self.sizes[block] = size
        self.refs[block] = 0
        self.live += size
        self.run.allocated += size
        self.run.peak = max(self.run.peak, self.live)
        # the pooled allocator reuses a free buffer of the same page-rounded size
        rounded = -(-size // POOL_PAGE) * POOL_PAGE
        if self.pool.get(rounded, 0) > 0:
            self.pool[rounded] -= 1
        else:
            self.run.pooled += rounded
        return frozenset((block,))

    def _free(self, block: int) -> None:
        size = self.sizes.pop(block)
        del self.refs[block]
        self.live -= size
        rounded = -(-size // POOL_PAGE) * POOL_PAGE
        self.pool[rounded] = self.pool.get(rounded, 0) + 1

    def _hold(self, value: Any) -> None:
        for block in _blocks(value):
            self.refs[block] += 1

    def _release(self, value: Any) -> None:
        for block in _blocks(value):
            self.refs[block] -= 1
            if self.refs[block] == 0:
                self._free(block)

    def _drop_unheld(self, value: Any) -> None:
        """Free blocks of a value nobody holds (e.g. an allocation bound to nothing)."""
        for block in _blocks(value):
            if self.refs.get(block) == 0:
                self._free(block)

    # -- functions
    def call(self, name: str, fn: Any, args: Sequence[Any], shapes: Sequence[Any]) -> Any:
        """Run ``fn`` on argument values; the result comes back held once (by the
        return slot, or by a temporary hold the caller drops after binding it)."""
        frame = _Frame(name)
        for param, value, shape in zip(fn.params, args, shapes, strict=True):
            _bind_shape(frame, param.ty, shape)
            frame.regs[param] = value
            self._hold(value)
        result = self.expr(fn.body, frame)
        self._hold(result)
        if self.use_return_slot:
            self._release(self.slot)
            self.slot = result
        for value in frame.regs.values():
            self._release(value)
        return result

    def _returned(self, value: Any) -> None:
        """The caller has bound a call's result: drop the temporary hold."""
        if not self.use_return_slot:
            self._release(value)

    # -- expressions
    def expr(self, expr: Any, frame: _Frame) -> Any:
        from tvm import relax

        if isinstance(expr, relax.SeqExpr):
            for block in expr.blocks:
                for binding in block.bindings:
                    self.binding(binding, frame)
            return self.expr(expr.body, frame)
        if isinstance(expr, relax.Var):
            return frame.regs.get(expr, _EMPTY)
        if isinstance(expr, relax.Tuple):
            return tuple(self.expr(f, frame) for f in expr.fields)
        if isinstance(expr, relax.TupleGetItem):
            value = self.expr(expr.tuple_value, frame)
            if isinstance(value, tuple) and 0 <= expr.index < len(value):
                return value[expr.index]
            return value
        if isinstance(expr, relax.If):
            return self.branch(expr, frame)
        if isinstance(expr, relax.Call):
            return self.call_expr(expr, frame)
        return _EMPTY  # constants, shapes, prim values, strings, functions

    def binding(self, binding: Any, frame: _Frame) -> None:
        from tvm import relax

        value = self.expr(binding.value, frame)
        if isinstance(binding, relax.MatchCast):
            _bind_shape(frame, binding.ty, _concrete_shape(frame, binding.value.ty))
        var = binding.var
        old = frame.regs.get(var)
        frame.regs[var] = value
        self._hold(value)
        if old is not None:
            self._release(old)
        if isinstance(binding.value, relax.Call) and self._is_relax_call(binding.value):
            self._returned(value)
        self._drop_unheld(value)
        self.run.curve.append(LivePoint(frame.name, var.name, self.live))

    def branch(self, expr: Any, frame: _Frame) -> Any:
        index = len(self.run.choices)
        taken = self.forced[index] if index < len(self.forced) else True
        self.run.choices.append(taken)
        return self.expr(expr.true_branch if taken else expr.false_branch, frame)

    def _is_relax_call(self, call: Any) -> bool:
        from tvm import relax

        return isinstance(call.op, relax.GlobalVar) and isinstance(
            self.mod[call.op], relax.Function
        )

    def call_expr(self, call: Any, frame: _Frame) -> Any:
        from tvm import relax

        name = _op_name(call)
        if name in _ALLOC_STORAGE:
            return self._new_block(frame.size_of(call.args[0].values[0]))
        if name in _ALLOC_TENSOR:
            return _blocks(self.expr(call.args[0], frame))
        if name == _BUILTIN_ALLOC:
            dims = [frame.size_of(d) for d in call.args[0].values]
            return self._new_block(_dtype_bytes(call.args[1].value) * math.prod(dims))
        if name in _KILLS:
            target = call.args[0]
            if isinstance(target, relax.Var) and target in frame.regs:
                self._release(frame.regs.pop(target))
            return _EMPTY
        if name == "relax.null_value":
            return _EMPTY
        if isinstance(call.op, relax.GlobalVar):
            callee = self.mod[call.op]
            if not isinstance(callee, relax.Function):
                return _EMPTY  # a PrimFunc writes into its destination arguments
            args = [self.expr(a, frame) for a in call.args]
            shapes = [_concrete_shape(frame, a.ty) for a in call.args]
            return self.call(call.op.name_hint, callee, args, shapes)
        # packed functions, views, other builtins: assume the result shares the
        # memory of its arguments (reshape, view) and allocates nothing of its own.
        if isinstance(call.ty, (relax.TensorType, relax.TupleType, relax.AnyType)):
            return _blocks(tuple(self.expr(a, frame) for a in call.args))
        return _EMPTY


@dataclass(frozen=True)
class _Search:
    runs: list[_Run]
    exhaustive: bool


def _entry_frame_shapes(
    fn: Any, input_shapes: Mapping[str, Sequence[int]] | Sequence[Any] | None
) -> list[Any]:
    """The concrete shape given for each parameter of the entry function (or None)."""
    params = list(fn.params)
    if input_shapes is None:
        return [None] * len(params)
    if isinstance(input_shapes, Mapping):
        names = {p.name for p in params}
        unknown = sorted(set(input_shapes) - names)
        if unknown:
            raise BenchkillError(f"input_shapes names unknown parameter(s): {', '.join(unknown)}")
        return [input_shapes.get(p.name) for p in params]
    shapes = list(input_shapes)
    if len(shapes) != len(params):
        raise BenchkillError(
            f"input_shapes has {len(shapes)} entries; the function has {len(params)} parameters"
        )
    return shapes


def _explore(mod: Any, func: str, input_shapes: Any, return_slot: bool) -> _Search:
    """Execute ``func`` abstractly once per path through its If branches."""
    from tvm import relax

    entry = mod[func]
    if not isinstance(entry, relax.Function):
        raise BenchkillError(f"{func!r} is not a Relax function")
    shapes = [
        None if s is None else [int(d) for d in s] for s in _entry_frame_shapes(entry, input_shapes)
    ]
    runs: list[_Run] = []
    pending: list[tuple[bool, ...]] = [()]
    while pending:
        if len(runs) == MAX_PATHS:
            return _Search(runs, False)
        forced = pending.pop()
        machine = _Machine(mod, forced, return_slot)
        # inputs are the caller's: they hold no blocks of the program
        machine.call(func, entry, [_EMPTY] * len(entry.params), shapes)
        run = machine.run
        runs.append(run)
        for k in range(len(forced), len(run.choices)):
            pending.append(tuple(run.choices[:k]) + (False,))
    return _Search(runs, True)
