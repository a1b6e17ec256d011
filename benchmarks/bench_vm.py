"""asv benchmarks of what the kills buy: VM peak memory and run time of LLVM builds.

Over workload x exec mode x kill variant (:mod:`benchmarks.common`):

- :class:`VMMemory` measures every variant once in ``setup_cache``, each in its own
  child process with :func:`benchkill.measure_vm` (through the "vm" suite's
  :func:`~benchkill.bench.suites.vm_suite.measure_workload`, which also computes the static
  liveness bound and checks every variant's outputs against the build without kills),
  and its ``track_*`` methods report those figures;
- :class:`VMRun` times one VM call of the built module in the asv process.
"""

from __future__ import annotations

import statistics
from typing import Any

from . import common

#: (workload, exec_mode, kill label, metric) -> (status, error, samples)
Measurements = dict[tuple[str, str, str, str], tuple[str, Any, tuple[float, ...]]]


def _label(kill: str | None) -> str:
    return "none" if kill is None else kill


class VMMemory:
    """Peak resident memory of one VM run, against the static liveness bound."""

    params = (list(common.VM_WORKLOADS), list(common.EXEC_MODES), list(common.KILLS))
    param_names = ("workload", "exec_mode", "kill")
    timeout = 120

    def setup_cache(self) -> Measurements:
        """Measure every combination of ``params`` once (a child process per variant)."""
        from benchkill.bench.suites.vm_suite import measure_workload

        workload_names, exec_modes, kills = self.params
        measured: Measurements = {}
        for name in workload_names:
            for exec_mode in exec_modes:
                records = measure_workload(
                    common.workload(name),
                    exec_mode,
                    common.MEMORY_CFG,
                    [common.kill_variant(k) for k in kills],
                    repeat=3,
                    trace=False,  # the allocation trace is the vm suite's, not timed here
                )
                for r in records:
                    key = (name, exec_mode, _label(r.params["kill"]), r.metric)
                    measured[key] = (r.status, r.error, r.samples)
        return measured

    setup_cache.timeout = 1800

    def _median(
        self, measured: Measurements, workload: str, exec_mode: str, kill: str, metric: str
    ) -> float:
        from benchkill.bench.model import OK

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

    def track_vm_peak_bytes(
        self, measured: Measurements, workload: str, exec_mode: str, kill: str
    ) -> float:
        return self._median(measured, workload, exec_mode, kill, "vm_peak_bytes")

    track_vm_peak_bytes.unit = "bytes"

    def track_vm_liveness_bound_bytes(
        self, measured: Measurements, workload: str, exec_mode: str, kill: str
    ) -> float:
        return self._median(measured, workload, exec_mode, kill, "liveness_bound_bytes")

    track_vm_liveness_bound_bytes.unit = "bytes"

    def track_vm_peak_over_bound(
        self, measured: Measurements, workload: str, exec_mode: str, kill: str
    ) -> float:
        return self._median(measured, workload, exec_mode, kill, "peak_over_bound")

    track_vm_peak_over_bound.unit = "ratio"


class VMRun:
    """Wall time of one call of the entry function on a VM with a warm allocator pool."""

    params = (list(common.VM_WORKLOADS), list(common.EXEC_MODES), list(common.KILLS))
    param_names = ("workload", "exec_mode", "kill")
    timeout = 300

    def setup(self, workload: str, exec_mode: str, kill: str) -> None:
        import tvm
        from tvm import relax

        ex = common.executable(workload, exec_mode, kill)
        self.vm = relax.VirtualMachine(ex, tvm.cpu(), memory_cfg=common.MEMORY_CFG)
        self.func = self.vm[common.workload(workload).func]
        self.args = common.vm_arguments(workload)

    def teardown(self, workload: str, exec_mode: str, kill: str) -> None:
        del self.func, self.vm, self.args

    def time_vm_run(self, workload: str, exec_mode: str, kill: str) -> None:
        self.func(*self.args)
