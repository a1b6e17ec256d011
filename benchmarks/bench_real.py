"""asv benchmarks of real models: VM peak memory of PyTorch models built by TVM.

The registry's real models (:mod:`benchkill.inputs.real_models`: torchvision CNNs, a
transformer encoder and a GPT-style decoder, random weights, nothing downloaded) at their
quick sizes with a dynamic dimension and no upper bound, the case where kills matter,
under the naive allocator (the pooled one keeps what kills free: docs/notes/real-models.md).
One ``setup_cache`` measures every (model, exec mode) pair as :mod:`benchmarks.bench_vm`
does (:func:`~benchkill.bench.suites.vm_parallel.measure_memory_in_parallel`: every kill
variant, outputs checked against PyTorch's, equal programs measured once).  The models
need the ``models`` extra (torch, torchvision), which ``asv.conf.json`` installs; without
it the benchmarks are skipped.
"""

from __future__ import annotations

import importlib.util
import statistics
from typing import Any

from . import common

#: The real models, cheapest first (asv --quick and the tests run the first only).
MODELS = ("squeezenet1_0", "decoder", "encoder", "resnet18", "mobilenet_v3_small")
MEMORY_CFG = "naive"
#: (model, exec_mode, kill label, metric) -> (status, error, samples)
Measurements = dict[tuple[str, str, str, str], tuple[str, Any, tuple[float, ...]]]


def measure_real(self: Any) -> Measurements:
    """``setup_cache``: every combination of ``params``, measured."""
    if not all(importlib.util.find_spec(name) for name in ("torch", "torchvision")):
        raise NotImplementedError("the real models need the models extra (torch, torchvision)")
    from benchkill.bench.suites.vm_parallel import measure_memory_in_parallel

    models, exec_modes, kills = self.params
    pairs = [(name, mode) for name in models for mode in exec_modes]
    variants = [common.kill_variant(k) for k in kills]
    per_pair = measure_memory_in_parallel(pairs, MEMORY_CFG, variants, quick=True, repeat=1)
    measured: Measurements = {}
    for (name, exec_mode), records in zip(pairs, per_pair, strict=True):
        for r in records:
            label = "none" if r.params["kill"] is None else r.params["kill"]
            measured[(name, exec_mode, label, r.metric)] = (r.status, r.error, r.samples)
    return measured


measure_real.timeout = 1800  # type: ignore[attr-defined]


class RealModelMemory:
    """Peak resident memory of one VM run of a real model, and its static liveness bound."""

    params = (list(MODELS), list(common.EXEC_MODES), list(common.KILLS))
    param_names = ("model", "exec_mode", "kill")
    timeout = 120
    setup_cache = measure_real

    def _median(self, cache: Measurements, key: tuple[str, str, str], metric: str) -> float:
        from benchkill.bench.model import OK

        entry = cache.get((*key, metric))
        if entry is None:
            failures = [
                f"{m}: {e}" for (*k, m), (s, e, _) in cache.items() if tuple(k) == key and s != OK
            ]
            raise RuntimeError(f"no {metric} measured; " + ("; ".join(failures) or "no record"))
        status, error, samples = entry
        if status != OK:
            raise RuntimeError(f"{metric} {status}: {error}")
        return float(statistics.median(samples))

    def track_real_peak_bytes(
        self, cache: Measurements, model: str, exec_mode: str, kill: str
    ) -> float:
        return self._median(cache, (model, exec_mode, kill), "vm_peak_bytes")

    track_real_peak_bytes.unit = "bytes"

    def track_real_liveness_bound_bytes(
        self, cache: Measurements, model: str, exec_mode: str, kill: str
    ) -> float:
        return self._median(cache, (model, exec_mode, kill), "liveness_bound_bytes")

    track_real_liveness_bound_bytes.unit = "bytes"
