"""What a peak is made of: planned storage, allocations kills can free, the pool's free buffers.

At the moment the run's allocator reaches its peak (the pooled allocator: its last fresh
allocation, after which it only reuses; the naive allocator: the largest page-rounded live
total), the replayed trace (:mod:`.replay`) says which buffers the VM holds and how many
freed bytes sit in the pool, and the attribution (:mod:`.attribution`) names each buffer's
binding.  :func:`peak_parts` splits the peak into

* ``planned_bytes``: storages of constant size ``StaticPlanBlockMemory`` created (static
  shapes, and dynamic ones with a ``tir_var_upper_bound``, sized for the bound): its storage has the
  dtype of its first tensor, while ``LowerAllocTensor`` makes every other allocation a
  storage of ``uint8`` bytes (``src/relax/transform/lower_alloc_tensor.cc``, TVM 0.27;
  a planned storage for a ``uint8`` tensor would count as unplanned);
* ``symbolic_bytes``: the planner's storages whose size depends on a dynamic dimension
  with no upper bound (it reuses one only for a tensor of provably equal size; a kill
  frees the others);
* ``unplanned_bytes``: the allocations the planner left to run time, one storage per tensor
  (shapes with no upper bound, results that cross a function or an ``If``): only a kill,
  or the end of their function, releases them;
* ``shape_heap_bytes``: ``VMShapeLower``'s shape heaps;
* ``pooled_free_bytes``: freed buffers the pooled allocator keeps (0 for the naive one):
  a kill returned them, but no later request had their page-rounded size;

which add up to the peak (sizes rounded as the allocator rounds them).  ``dead_bytes`` is
the part of the live buffers held after their last use: what kills placed there would
free at that moment.  :func:`~benchkill.execution.measured_peak.explain_peak` measures a module and
returns its :class:`PeakExplanation`.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

_PAGE = 4096


def _pages(n: int, extra: int = 0) -> int:
    return -(-(n + extra) // _PAGE) * _PAGE


@dataclass(frozen=True)
class PeakParts:
    """The parts of the replayed peak of ``allocator`` (module docstring); ``at_seq`` is
    the trace event at which it is reached."""

    allocator: str
    peak_bytes: int
    at_seq: int
    planned_bytes: int
    symbolic_bytes: int
    unplanned_bytes: int
    shape_heap_bytes: int
    pooled_free_bytes: int
    dead_bytes: int

    @property
    def case(self) -> str:
        """Which part dominates the peak: "planned" (the planner's storage of constant
        size, static or bounded shapes: it reuses memory itself, kills change little),
        "symbolic" (the planner's storage sized by an unbounded dynamic dimension: it
        reuses only storages of provably equal size, kills free the others),
        "unplanned" (run-time allocations: only kills or returns free them), "pool"
        (freed buffers the pooled allocator keeps for a request of their size)."""
        parts = {
            "planned": self.planned_bytes,
            "symbolic": self.symbolic_bytes,
            "unplanned": self.unplanned_bytes,
            "pool": self.pooled_free_bytes,
        }
        return max(parts, key=lambda k: parts[k])

    def advice(self) -> str:
        """What the :attr:`case` means for kills, in one sentence."""
        mib = 1 << 20
        return {
            "planned": "the planner's storage of constant size (static or bounded shapes) "
            "holds the peak: it reuses memory itself, kills change little",
            "symbolic": "storage sized by a dynamic dimension with no upper bound holds the "
            "peak: kills free it (with the naive allocator; the pooled one keeps freed "
            "buffers for a request of their size)",
            "unplanned": "allocations left to run time (results crossing functions or "
            "branches, unbounded shapes) hold the peak: only kills or returns free them",
            "pool": f"the pooled allocator holds {self.pooled_free_bytes / mib:.2f} MiB of "
            "freed buffers at the peak: kills freed them, but no later request had their "
            "page-rounded size (memory_cfg='naive' would return them)",
        }[self.case]

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "case": self.case}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PeakParts:
        return cls(**{k: v for k, v in data.items() if k != "case"})


_DTYPE = re.compile(r'R\.dtype\("(\w+)"\)')


def _dtype_arg(call: Any) -> str:
    """The dtype argument of an ``alloc_storage`` call ("" if none is found)."""
    from tvm import relax

    for arg in call.args:
        if not isinstance(arg, (relax.ShapeExpr, relax.Var)):
            match = _DTYPE.fullmatch(str(arg))
            if match:
                return match[1]
    return ""


def _storages(fn: Any) -> list[Any]:
    """The ``alloc_storage`` bindings of ``fn`` in text order (If branches included)."""
    from tvm import relax

    from benchkill.relax import ops

    found: list[Any] = []

    def visit(expr: Any) -> None:
        if not isinstance(expr, relax.SeqExpr):
            return
        for block in expr.blocks:
            for binding in block.bindings:
                value = binding.value
                if isinstance(value, relax.If):
                    visit(value.true_branch)
                    visit(value.false_branch)
                elif isinstance(value, relax.Call) and (
                    ops.ROLES.get(ops.op_name(value)) == ops.STORAGE
                ):
                    found.append(binding)

    visit(fn.body)
    return found


#: The classes of storages (:func:`storage_classes`).
PLANNED, SYMBOLIC, UNPLANNED = "planned", "symbolic", "unplanned"


def _storage_class(call: Any) -> str:
    import tvm
    from tvm import relax

    if _dtype_arg(call) in ("uint8", ""):
        return UNPLANNED
    size = call.args[0]
    static = isinstance(size, relax.ShapeExpr) and all(
        isinstance(d, tvm.tirx.IntImm) for d in size.values
    )
    return PLANNED if static else SYMBOLIC


def storage_classes(kill_input: Any, lowered: Any) -> dict[tuple[str, str], str]:
    """(function, variable as printed in ``lowered``) -> the class of its storage, told
    by its ``alloc_storage`` in ``kill_input`` (the module the kill step received;
    ``LowerRuntimeBuiltin``, after it, makes every storage ``uint8``): :data:`PLANNED`
    (the planner's, of a constant size), :data:`SYMBOLIC` (the planner's, sized by a
    dynamic dimension with no upper bound) or :data:`UNPLANNED`.  The passes after the
    kill step keep the storages one for one, so the k-th storage of a function is the
    same in both; a function whose counts differ is left out (its storages count as
    unplanned)."""
    from tvm import relax

    from benchkill.analysis.bindings import BindingIndex

    found: dict[tuple[str, str], str] = {}
    if kill_input is None:
        return found
    before = {gv.name_hint: fn for gv, fn in kill_input.functions_items()}
    for gv, fn in lowered.functions_items():
        source = before.get(gv.name_hint)
        if not isinstance(fn, relax.Function) or not isinstance(source, relax.Function):
            continue
        old, new = _storages(source), _storages(fn)
        if len(old) != len(new):
            continue
        index = BindingIndex(gv.name_hint, fn)
        for a, b in zip(old, new, strict=True):
            found[(gv.name_hint, index.printed[b.var])] = _storage_class(a.value)
    return found


def peak_parts(
    events: list[dict[str, Any]], lives: list[Any], life_of: dict[int, int], classes: Any, cfg: str
) -> PeakParts:
    """The parts of the peak of the allocator ``cfg`` ("pooled" or "naive") of an
    attributed trace: its raw ``events``, the walk's buffer ``lives`` (``life_of``: buffer
    object -> index) and the :func:`storage_classes` of the lowered module."""
    pooled = cfg == "pooled"
    live: dict[int, int] = {}  # buffer -> rounded bytes
    kinds: dict[int, str] = {}
    pool: dict[int, int] = {}
    total = best = at = clock = 0
    best_live: dict[int, int] = {}
    best_free = best_clock = 0
    for e in events:
        if e.get("what") == "run_end":
            break
        clock = e.get("clock", clock)
        kind = e["kind"]
        if kind in ("alloc_storage", "alloc_shape_heap"):
            n = int(e["bytes"])
            rounded = _pages(n) if pooled else _pages(n, 16)
            live[e["obj"]], kinds[e["obj"]] = rounded, kind
            if pooled and pool.get(rounded):
                pool[rounded] -= 1
            elif pooled:
                total += rounded
            height = total if pooled else sum(live.values())
            if height > best:
                best, at, best_clock = height, e["seq"], clock
                best_live = dict(live)
                best_free = sum(size * k for size, k in pool.items())
        elif kind in ("free_storage", "free_shape_heap") and e["obj"] in live:
            rounded = live.pop(e["obj"])
            if pooled:
                pool[rounded] = pool.get(rounded, 0) + 1
    parts = {PLANNED: 0, SYMBOLIC: 0, UNPLANNED: 0, "heap": 0}
    dead = 0
    for obj, size in best_live.items():
        life = lives[life_of[obj]] if obj in life_of else None
        if kinds[obj] == "alloc_shape_heap":
            parts["heap"] += size
        else:
            site = (life.defined_at.function, life.defined_at.var) if life else None
            parts[classes.get(site, UNPLANNED)] += size
        last = None if life is None else life.last_used_clock
        if life is not None and (last is None or last < best_clock):
            dead += size
    return PeakParts(
        cfg,
        best,
        at,
        parts[PLANNED],
        parts[SYMBOLIC],
        parts[UNPLANNED],
        parts["heap"],
        best_free,
        dead,
    )


@dataclass(frozen=True)
class PeakExplanation:
    """A module's measured peak (``measured_peak_bytes``, the median of the peak runs)
    and the parts of its trace's replayed peak (:class:`PeakParts`)."""

    kill: str | None
    exec_mode: str
    memory_cfg: str
    measured_peak_bytes: int
    parts: PeakParts

    def text(self) -> str:
        """The explanation in one line, MiB and shares of the replayed peak."""
        p, mib = self.parts, 1 << 20
        share = max(p.peak_bytes, 1)

        def part(name: str, n: int) -> str:
            return f"{name} {n / mib:.2f} MiB ({n / share:.0%})"

        return (
            f"peak {self.measured_peak_bytes / mib:.2f} MiB measured, "
            f"{p.peak_bytes / mib:.2f} MiB replayed ({p.allocator}): "
            f"{part('planned', p.planned_bytes)}, {part('symbolic', p.symbolic_bytes)}, "
            f"{part('unplanned', p.unplanned_bytes)}, "
            f"{part('pooled free', p.pooled_free_bytes)}, "
            f"{part('shape heaps', p.shape_heap_bytes)}; "
            f"{p.dead_bytes / mib:.2f} MiB held after last use; case: {p.case}"
        )
