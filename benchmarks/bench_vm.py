"""asv benchmarks of what the kills buy: VM peak memory and run time of LLVM builds.

Over workload x exec mode x kill variant (:mod:`benchmarks.common`), both classes share
one ``setup_cache``, :func:`measure_all`, run once per asv run: it measures every
variant through the "vm" suite's
:func:`~benchkill.bench.suites.vm_suite.measure_workload` (which also computes the static
liveness bound and checks every variant's outputs against the build without kills), the
distinct programs of each (workload, exec mode) pair in one child process of their own
(:func:`~benchkill.execution.vm_measure.measure_vm_variants`), and exports each measured
executable to asv's cache directory.

- :class:`VMMemory`'s ``track_*`` methods report the measured figures;
- :class:`VMRun` times one VM call of the exported executable in the asv process.

The (workload, exec mode) pairs are measured in parallel, one worker process per core
(:func:`~benchkill.bench.suites.vm_parallel.measure_memory_in_parallel`): peak resident
memory is a figure of each child alone, and the run times those children also take are
not reported here (:class:`VMRun` times one run at a time).
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from . import common

#: (workload, exec_mode, kill label, metric) -> (status, error, samples)
Measurements = dict[tuple[str, str, str, str], tuple[str, Any, tuple[float, ...]]]
#: What :func:`measure_all` returns: the measurements, and the exported executable of
#: each (workload, exec_mode, kill label) that was measured.
Cache = tuple[Measurements, dict[tuple[str, str, str], str]]


def _label(kill: str | None) -> str:
    return "none" if kill is None else kill


def measure_all(self: Any) -> Cache:
    """``setup_cache`` of both classes: every combination of ``params``, measured and
    exported to the current directory (asv's cache directory)."""
    from benchkill.bench.model import OK
    from benchkill.bench.suites.vm_parallel import measure_memory_in_parallel
    from benchkill.bench.suites.vm_suite import library_path

    workload_names, exec_modes, kills = self.params
    pairs = [(name, mode) for name in workload_names for mode in exec_modes]
    export_dir = Path.cwd()
    per_pair = measure_memory_in_parallel(
        pairs,
        common.MEMORY_CFG,
        [common.kill_variant(k) for k in kills],
        quick=True,  # as common.workload makes them
        repeat=3,
        export_dir=export_dir,
    )
    measured: Measurements = {}
    libraries: dict[tuple[str, str, str], str] = {}
    for (name, exec_mode), records in zip(pairs, per_pair, strict=True):
        for r in records:
            key = (name, exec_mode, _label(r.params["kill"]))
            measured[(*key, r.metric)] = (r.status, r.error, r.samples)
            if r.status == OK:
                libraries[key] = str(library_path(export_dir, r.params))
    return measured, libraries


measure_all.timeout = 1800  # type: ignore[attr-defined]


class VMMemory:
    """Peak resident memory of one VM run, against the static liveness bound."""

    params = (list(common.VM_WORKLOADS), list(common.EXEC_MODES), list(common.KILLS))
    param_names = ("workload", "exec_mode", "kill")
    timeout = 120
    setup_cache = measure_all

    def _median(self, cache: Cache, workload: str, exec_mode: str, kill: str, metric: str) -> float:
        from benchkill.bench.model import OK

        measured, _ = cache
        entry = measured.get((workload, exec_mode, kill, metric))
        if entry is None:
            # The variant failed before this metric was recorded: say why.
            failures = [
                f"{m}: {error}"
                for (w, e, k, m), (status, error, _) in measured.items()
                if (w, e, k) == (workload, exec_mode, kill) and status != OK
            ]
            raise RuntimeError(f"no {metric} measured; " + ("; ".join(failures) or "no record"))
        status, error, samples = entry
        if status != OK:
            raise RuntimeError(f"{metric} {status}: {error}")
        return float(statistics.median(samples))

    def track_vm_peak_bytes(self, cache: Cache, workload: str, exec_mode: str, kill: str) -> float:
        return self._median(cache, workload, exec_mode, kill, "vm_peak_bytes")

    track_vm_peak_bytes.unit = "bytes"

    def track_vm_liveness_bound_bytes(
        self, cache: Cache, workload: str, exec_mode: str, kill: str
    ) -> float:
        return self._median(cache, workload, exec_mode, kill, "liveness_bound_bytes")

    track_vm_liveness_bound_bytes.unit = "bytes"

    def track_vm_peak_over_bound(
        self, cache: Cache, workload: str, exec_mode: str, kill: str
    ) -> float:
        return self._median(cache, workload, exec_mode, kill, "peak_over_bound")

    track_vm_peak_over_bound.unit = "ratio"


class VMRun:
    """Wall time of one call of the entry function on a VM with a warm allocator pool.

    The VM runs the executable :func:`measure_all` measured and exported (the same
    LLVM code ``relax.build`` made, loaded as a shared library)."""

    params = (list(common.VM_WORKLOADS), list(common.EXEC_MODES), list(common.KILLS))
    param_names = ("workload", "exec_mode", "kill")
    timeout = 300
    setup_cache = measure_all

    def setup(self, cache: Cache, workload: str, exec_mode: str, kill: str) -> None:
        _, libraries = cache
        path = libraries.get((workload, exec_mode, kill))
        if path is None:
            raise RuntimeError(f"{workload} {exec_mode} {kill}: not measured (see VMMemory)")
        import tvm  # loaded already (benchmarks.common)
        from tvm import relax

        ex = tvm.runtime.load_module(path)
        self.vm = relax.VirtualMachine(ex, tvm.cpu(), memory_cfg=common.MEMORY_CFG)
        self.func = self.vm[common.workload(workload).func]
        self.args = common.vm_arguments(workload)
        self.func(*self.args)  # warm-up: first-call effects, and the pool filled

    def teardown(self, cache: Cache, workload: str, exec_mode: str, kill: str) -> None:
        del self.func, self.vm, self.args

    def time_vm_run(self, cache: Cache, workload: str, exec_mode: str, kill: str) -> None:
        self.func(*self.args)
