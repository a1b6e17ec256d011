"""Replay an allocation trace (:mod:`.trace`) through models of the VM's allocators.

Buffers are the storages (``vm.builtin.alloc_storage``) and shape heaps (which take a
buffer from the same allocator); tensors carved from a storage own no memory of their
own.  :func:`replay` gives the live bytes over the run, the pooled allocator's high-water
mark and the naive allocator's page-rounded peak: the trace's prediction of what the VM
with ``memory_cfg="pooled"`` or ``"naive"`` holds at its peak.
"""

from __future__ import annotations

from typing import Any, NamedTuple

_PAGE = 4096


class Replay(NamedTuple):
    """A trace replayed: ``live_peak`` is the largest total of requested bytes of live
    buffers (reached at event ``live_peak_seq``); ``pooled_peak`` what the pooled
    allocator holds at its high-water mark (each request rounded up to a 4096-byte page,
    a freed buffer reused only for a request of the same rounded size, nothing given
    back during the run); ``naive_peak`` the largest total of page-rounded live buffers
    (the naive allocator frees at once; with the child's fixed mmap threshold every
    buffer of 64 KiB or more is its own mapping, plus glibc's 16-byte header);
    ``rss_peak`` the largest rise of resident memory over the start sampled at the
    events of the run (a measured curve in both modes; it misses peaks between events);
    ``curve`` the live bytes after each allocation and release of a buffer, as
    ``(seq, live bytes)``."""

    live_peak: int
    live_peak_seq: int
    pooled_peak: int
    naive_peak: int
    rss_peak: int
    allocated: int
    curve: tuple[tuple[int, int], ...]


def _pages(n: int, extra: int = 0) -> int:
    return -(-(n + extra) // _PAGE) * _PAGE


def replay(events: list[dict[str, Any]]) -> Replay:
    """Replay the buffers of a trace (raw events, see :func:`stop`) up to the end of
    the run (the "run_end" mark)."""
    sizes: dict[int, int] = {}
    live = live_peak = peak_seq = naive = naive_peak = pooled = allocated = rss_peak = 0
    pool: dict[int, int] = {}
    curve: list[tuple[int, int]] = []
    base = next((e["rss"] for e in events if e.get("what") == "start"), None)
    for e in events:
        if e.get("what") == "run_end":
            break
        if base is not None:
            rss_peak = max(rss_peak, e["rss"] - base)
        kind = e["kind"]
        if kind in ("alloc_storage", "alloc_shape_heap"):
            n = sizes[e["obj"]] = int(e["bytes"])
            allocated += n
            live += n
            naive += _pages(n, 16)
            rounded = _pages(n)
            if pool.get(rounded):
                pool[rounded] -= 1
            else:
                pooled += rounded
            if live > live_peak:
                live_peak, peak_seq = live, e["seq"]
            naive_peak = max(naive_peak, naive)
        elif kind in ("free_storage", "free_shape_heap") and e["obj"] in sizes:
            n = sizes.pop(e["obj"])
            live -= n
            naive -= _pages(n, 16)
            pool[_pages(n)] = pool.get(_pages(n), 0) + 1
        else:
            continue
        curve.append((e["seq"], live))
    return Replay(live_peak, peak_seq, pooled, naive_peak, rss_peak, allocated, tuple(curve))
