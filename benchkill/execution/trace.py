"""The allocation trace of one Relax VM run, in both exec modes.

How it is recorded (in the child process of :func:`benchkill.measure_vm` with
``trace=True``, task ``trace_task`` of :mod:`benchkill.execution.vm_task`, which loads
the library the parent built; the parent attributes the events):

* **Allocations, kills, branches, calls.**  Both VM codegens call their builtins by
  name through the global function registry: bytecode mode resolves the names of its
  function table when the VM is created (``InitFuncPool``: the kernel library's imports
  first, then the registry); compiled mode emits ``tvm_call_packed`` /
  ``anylist_setitem_call_packed`` by name into the TIR of each Relax function, and the
  LLVM code looks the name up at the first call of each call site and caches the handle
  for the library's lifetime.  :func:`install` overrides :data:`NAMES` in the registry
  with Python wrappers of the originals, before the library is loaded and the VM created
  (a library that already ran keeps its cached handles: the trace needs a fresh load,
  so it runs in its own child).  ``vm.builtin.alloc_storage`` is the only allocation of
  planned memory; ``alloc_tensor`` carves a view from a storage; ``alloc_shape_heap``
  takes a buffer from the same allocator; a kill (``R.vm.kill_object`` in both codegens)
  is a call of ``vm.builtin.null_value`` whose result overwrites the killed register;
  ``read_if_cond`` gives the branch taken; compiled mode calls every Relax function
  through ``invoke_closure`` (bytecode mode by function index, seen through the VM's
  instrument, :func:`instrument`).
* **Releases.**  Nothing in Python hears a C++ object die (tvm-ffi's classes take no
  weak references, and a weakref would follow the Python wrapper anyway).  Every FFI
  object starts with the C header ``TVMFFIObject {uint64 combined_ref_count; int32
  type_index; uint32 pad; void (*deleter)(void*, int)}`` (``tvm_ffi/c_api.h``), so the
  wrapper swaps the ``deleter`` of each Storage, Tensor and shape heap it hands to the VM
  for a ctypes callback that records the release and then calls the original deleter.
  A Storage's destructor returns its buffer to the VM allocator, so a storage's release
  is the moment its buffer goes back to the pool (pooled) or to the system (naive).
  :func:`stop` puts the original deleter back on every object still alive.  This rests
  on tvm-ffi's C ABI and touches only objects the tracer created.

**Not traced**, and why: buffers a kernel allocates inside itself (a PrimFunc's
``alloc_buffer`` becomes stack memory or ``TVMBackendAllocWorkspace``, a C symbol bound
when the library is loaded, not a registry name: TVM's legalized attention keeps its
``(heads, seq, seq)`` intermediates there); memory allocated by external packed functions
(``Tensor::Empty`` inside a library call, ``vm.builtin.to_device``), which could be
wrapped by name but is not (no workload calls one); whether a buffer is resident (the
trace records requested bytes).  Each event costs a Python call, so traced runs are
slower; the peak measured during a traced run equals the untraced one on every workload
(the tracer's own memory is negligible).

Events are dicts while recording; :func:`benchkill.execution.attribution.attribute`
names their variables and functions and :class:`TraceEvent` is their public form.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any, NamedTuple

from benchkill.analysis.holders import Holder, Waste, waste_by_function
from benchkill.execution.explain import PeakParts

#: The builtins the tracer overrides.
NAMES = (
    "vm.builtin.alloc_storage",
    "vm.builtin.alloc_tensor",
    "vm.builtin.alloc_shape_heap",
    "vm.builtin.null_value",
    "vm.builtin.read_if_cond",
    "vm.builtin.invoke_closure",
)

#: Stop recording after this many events (the trace then says it is truncated).
MAX_EVENTS = 200_000

#: The kinds of :class:`TraceEvent`.
KINDS = ("storage", "tensor", "shape_heap", "kill", "release", "if", "call", "return", "mark")


class TraceEvent(NamedTuple):
    """One event of a traced VM run.

    ``kind``: "storage" (``vm.builtin.alloc_storage``: a buffer of ``bytes``), "tensor"
    (a view of ``bytes`` carved from the buffer ``storage``), "shape_heap" (a buffer for
    symbolic shapes), "kill" (``var`` is the killed variable), "release" (the object
    ``obj`` died: a buffer went back to the allocator when ``storage == obj``; ``note``
    says why), "if" (``note``: the branch taken), "call" / "return" (of the Relax
    function ``function``), "mark" (``note``: "run_end", "output_released",
    "vm_released").  ``function`` and ``var`` are the Relax function and the variable
    (TVMScript's printed name) of the allocation or kill; ``rss`` the resident bytes of
    the process when the event was recorded (before the buffer is written).
    """

    seq: int
    kind: str
    obj: int | None = None
    bytes: int | None = None
    storage: int | None = None
    function: str | None = None
    var: str | None = None
    note: str | None = None
    rss: int | None = None


@dataclass(frozen=True)
class TraceSummary:
    """What a traced run says about memory (see :func:`benchkill.measure_vm`, ``trace``).

    The replayed peaks of the trace (:class:`~benchkill.execution.replay.Replay`):
    ``live_peak_bytes``, ``pooled_peak_bytes``, ``naive_peak_bytes``, and
    ``predicted_peak_bytes``, the one of
    the allocator the run used (compare it with the measured peak); ``rss_peak_bytes``
    the resident memory sampled at the events; ``traced_run_peak_bytes`` the VmHWM peak
    of the traced run itself.  ``attributed`` of ``program_events`` recorded calls were
    paired with the IR (``attribution_error`` says why not all).  ``at_peak`` is the
    live set at the live peak (event ``peak_seq``), ``waste`` the bytes each variable
    held after its last use (:mod:`benchkill.analysis.holders`); ``live_curve`` the live
    bytes after each allocation or release of a buffer, as (event, bytes); ``peak_parts``
    what the allocator's peak is made of (:mod:`benchkill.execution.explain`; None after an
    attribution error).
    """

    live_peak_bytes: int
    pooled_peak_bytes: int
    naive_peak_bytes: int
    predicted_peak_bytes: int
    rss_peak_bytes: int
    traced_run_peak_bytes: int
    allocated_bytes: int
    peak_seq: int
    attributed: int
    program_events: int
    attribution_error: str | None
    at_peak: tuple[Holder, ...] = ()
    waste: tuple[Waste, ...] = ()
    live_curve: tuple[tuple[int, int], ...] = ()
    peak_parts: PeakParts | None = None

    @property
    def waste_by_function(self) -> dict[str, int]:
        """Byte-bindings held after last use, per function (largest first)."""
        return waste_by_function(self.waste)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TraceSummary:
        return cls(
            **{
                **data,
                "at_peak": tuple(Holder.from_dict(h) for h in data.get("at_peak", ())),
                "waste": tuple(Waste.from_dict(w) for w in data.get("waste", ())),
                "live_curve": tuple(tuple(p) for p in data.get("live_curve", ())),
                "peak_parts": (
                    PeakParts.from_dict(data["peak_parts"]) if data.get("peak_parts") else None
                ),
            }
        )


# --- the recorder (child side) ----------------------------------------------------------

EVENTS: list[dict[str, Any]] = []
_STATE: dict[str, Any] = {"on": False, "seq": 0, "truncated": False}
_ORIG: dict[str, Any] = {}
#: handle -> [object id, kind, original deleter (callable), original deleter address]
_HOOKED: dict[int, list[Any]] = {}
_NEXT = {"id": 0}
_STRONG, _WEAK = 1, 2
_PAGE = 4096


class _Header(ctypes.Structure):
    _fields_ = [
        ("combined_ref_count", ctypes.c_uint64),
        ("type_index", ctypes.c_int32),
        ("padding", ctypes.c_uint32),
        ("deleter", ctypes.c_void_p),
    ]


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int)


def _rss() -> int:
    statm = _STATE.get("statm")
    if statm is None:
        statm = _STATE["statm"] = open("/proc/self/statm", "rb", buffering=0)  # noqa: SIM115
    statm.seek(0)
    return int(statm.read().split()[1]) * _PAGE


def emit(kind: str, **fields: Any) -> None:
    """Record an event (while recording)."""
    if len(EVENTS) >= MAX_EVENTS:
        _STATE["truncated"] = True
        return
    _STATE["seq"] += 1
    EVENTS.append({"seq": _STATE["seq"], "kind": kind, "rss": _rss(), **fields})


def _on_delete(handle: int, flags: int) -> None:
    entry = _HOOKED.get(handle)
    if entry is None:  # only hooked objects point here
        return
    obj, kind, orig, _ = entry
    if flags & _STRONG and _STATE["on"]:
        emit("free_" + kind, obj=obj)
    if flags & _WEAK:
        del _HOOKED[handle]  # the block goes away; its address may be reused
    orig(handle, flags)


_CALLBACK = _DELETER(_on_delete)
_CALLBACK_ADDR = ctypes.cast(_CALLBACK, ctypes.c_void_p).value


def _hook(value: Any, kind: str) -> int:
    """Give the FFI object ``value`` an id and make its death observable."""
    handle = value.__chandle__()
    _NEXT["id"] += 1
    header = _Header.from_address(handle)
    orig = header.deleter
    _HOOKED[handle] = [_NEXT["id"], kind, _DELETER(orig), orig]
    header.deleter = _CALLBACK_ADDR
    return _NEXT["id"]


def _nbytes(shape: Any, dtype: Any) -> int:
    import tvm

    dt = tvm.DataType(str(dtype))
    n = (dt.bits * dt.lanes + 7) // 8
    for d in shape:
        n *= int(d)
    return n


def _alloc_storage(ctx: Any, shape: Any, device: Any, dtype: Any, scope: Any) -> Any:
    storage = _ORIG["vm.builtin.alloc_storage"](ctx, shape, device, dtype, scope)
    if _STATE["on"]:
        emit("alloc_storage", obj=_hook(storage, "storage"), bytes=_nbytes(shape, dtype))
    return storage


def _alloc_tensor(storage: Any, offset: Any, shape: Any, dtype: Any, *rest: Any) -> Any:
    tensor = _ORIG["vm.builtin.alloc_tensor"](storage, offset, shape, dtype, *rest)
    if _STATE["on"]:
        entry = _HOOKED.get(storage.__chandle__())
        emit(
            "alloc_tensor",
            obj=_hook(tensor, "tensor"),
            storage=entry[0] if entry is not None else None,
            shape=[int(d) for d in shape],
            bytes=_nbytes(shape, dtype),
        )
    return tensor


def _alloc_shape_heap(ctx: Any, size: Any) -> Any:
    heap = _ORIG["vm.builtin.alloc_shape_heap"](ctx, size)
    if _STATE["on"]:
        emit("alloc_shape_heap", obj=_hook(heap, "shape_heap"), bytes=8 * int(size))
    return heap


def _null_value() -> None:
    if _STATE["on"]:
        emit("kill")


def _read_if_cond(cond: Any) -> Any:
    value = _ORIG["vm.builtin.read_if_cond"](cond)
    if _STATE["on"]:
        emit("if_cond", value=bool(value))
    return value


def _invoke_closure(ctx: Any, closure: Any, *args: Any) -> Any:
    # compiled mode calls every Relax function through this builtin; the callee's
    # registers die before it returns
    on = _STATE["on"]
    if on:
        emit("call")
    value = _ORIG["vm.builtin.invoke_closure"](ctx, closure, *args)
    if on:
        emit("return")
    return value


_WRAPPERS = {
    "vm.builtin.alloc_storage": _alloc_storage,
    "vm.builtin.alloc_tensor": _alloc_tensor,
    "vm.builtin.alloc_shape_heap": _alloc_shape_heap,
    "vm.builtin.null_value": _null_value,
    "vm.builtin.read_if_cond": _read_if_cond,
    "vm.builtin.invoke_closure": _invoke_closure,
}


def install() -> None:
    """Override the builtins (once per process); recording starts with :func:`start`."""
    import tvm  # noqa: F401 - loads libtvm_runtime, which registers vm.builtin.*
    import tvm_ffi

    if _ORIG:
        return
    for name in NAMES:
        _ORIG[name] = tvm_ffi.get_global_func(name)
    for name in NAMES:
        tvm_ffi.register_global_func(name, _WRAPPERS[name], override=True)


def instrument(relax_functions: set[str]) -> Any:
    """A bytecode ``VirtualMachine.set_instrument`` callback recording the calls of
    Relax functions (bytecode calls them by index: no registry override sees them)."""

    def callback(_func: Any, symbol: Any, before: bool, _ret: Any, *_args: Any) -> int:
        if _STATE["on"]:
            name = str(symbol)
            if name in relax_functions:
                emit("call" if before else "return", callee=name)
        return 0  # VMInstrumentReturnKind.kNoOp

    return callback


def start() -> None:
    EVENTS.clear()
    _STATE["truncated"] = False
    _STATE["on"] = True
    emit("phase", what="start")


def mark(what: str) -> None:
    """A phase marker: the run ended, the output was released, the VM was destroyed."""
    emit("phase", what=what)


def stop() -> tuple[list[dict[str, Any]], bool]:
    """Stop recording; give the objects still alive their own deleters back.  Returns
    the events and whether the trace was truncated at :data:`MAX_EVENTS`."""
    _STATE["on"] = False
    for handle, (_, _, _, orig) in list(_HOOKED.items()):
        _Header.from_address(handle).deleter = orig
        del _HOOKED[handle]
    return list(EVENTS), bool(_STATE["truncated"])


# --- the public form -------------------------------------------------------------------

_PUBLIC_KIND = {
    "alloc_storage": "storage",
    "alloc_tensor": "tensor",
    "alloc_shape_heap": "shape_heap",
    "kill": "kill",
    "if_cond": "if",
    "call": "call",
    "return": "return",
    "phase": "mark",
}


def public_event(e: dict[str, Any]) -> list[Any]:
    """An attributed raw event as the fields of a :class:`TraceEvent` (JSON-ready)."""
    kind = e["kind"]
    if kind.startswith("free_"):
        return [e["seq"], "release", e["obj"], e.get("bytes"), e.get("storage"),
                e.get("func"), e.get("var"), e.get("cause"), e["rss"]]  # fmt: skip
    public = _PUBLIC_KIND[kind]
    storage = e.get("storage") if kind == "alloc_tensor" else e.get("obj")
    note = None
    if kind == "if_cond":
        note = "true" if e["value"] else "false"
    elif kind == "phase":
        note = e["what"]
    function = e.get("callee", e.get("func")) if kind in ("call", "return") else e.get("func")
    return [e["seq"], public, e.get("obj"), e.get("bytes"), storage, function, e.get("var"),
            note, e["rss"]]  # fmt: skip
