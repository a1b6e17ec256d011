"""The asv suite's VM measurements: each distinct program measured once, exported, and
pairs measured side by side in worker processes (real builds, real children)."""

from __future__ import annotations

import os

import pytest

from benchkill.bench.model import OK
from benchkill.bench.suites import vm_suite
from benchkill.bench.suites.vm_parallel import measure_memory_in_parallel
from benchkill.execution.peak import peak_supported
from benchkill.inputs import workloads

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not peak_supported(), reason="needs Linux /proc/self/clear_refs"),
]

KILLS = (None, "tvm", "benchkill", "beyond")


def _by_kill(records, metric):
    return {r.params["kill"]: r for r in records if r.metric == metric}


def test_equal_programs_are_measured_once_and_say_so(tmp_path):
    w = workloads.layer_chain(3, 1)
    records = vm_suite.measure_workload(
        w, "bytecode", "pooled", KILLS, repeat=1, trace=False, export_dir=tmp_path,
        reuse_equal_programs=True,
    )  # fmt: skip
    peaks = _by_kill(records, "vm_peak_bytes")
    assert all(r.status == OK for r in records)
    # a straight chain: every kill step gives TVM's module, and no kill is another program
    assert {k: r.extra.get("same_program_as") for k, r in peaks.items()} == {
        None: None, "tvm": None, "benchkill": "tvm", "beyond": "tvm",
    }  # fmt: skip
    assert peaks["benchkill"].samples == peaks["tvm"].samples
    assert peaks[None].samples != peaks["tvm"].samples
    paths = {k: vm_suite.library_path(tmp_path, r.params) for k, r in peaks.items()}
    assert all(p.is_file() for p in paths.values())
    assert os.path.samefile(paths["benchkill"], paths["tvm"])
    assert not os.path.samefile(paths[None], paths["tvm"])
    # each variant's own static bound, not the other's
    bounds = _by_kill(records, "liveness_bound_bytes")
    assert bounds[None].samples[0] > bounds["tvm"].samples[0]


def test_without_reuse_every_variant_is_measured():
    w = workloads.layer_chain(3, 1)
    records = vm_suite.measure_workload(
        w, "bytecode", "pooled", (None, "tvm", "benchkill"), repeat=1, trace=False
    )
    assert all("same_program_as" not in r.extra for r in records)
    assert len(_by_kill(records, "vm_peak_bytes")) == 3


def test_pairs_measured_in_workers_come_back_in_order(tmp_path):
    pairs = [("chain", "compiled"), ("if_chain", "bytecode"), ("chain", "bytecode")]
    per_pair = measure_memory_in_parallel(
        pairs, "pooled", (None, "benchkill"), repeat=0, export_dir=tmp_path, workers=2
    )
    for (name, exec_mode), records in zip(pairs, per_pair, strict=True):
        assert {r.params["exec_mode"] for r in records} == {exec_mode}
        assert {r.params["workload"] for r in records} == {
            workloads.make_workload(name, quick=True).name
        }
    for records in per_pair:
        assert all(r.status == OK for r in records), [r.error for r in records]
        assert set(_by_kill(records, "vm_peak_bytes")) == {None, "benchkill"}
    assert len(list(tmp_path.glob("*.so"))) == 6


def test_a_pair_whose_child_fails_raises_and_names_it():
    from benchkill.errors import BenchkillError

    with pytest.raises(BenchkillError, match="vm workloads no_such_workload"):
        measure_memory_in_parallel([("no_such_workload", "bytecode")], "pooled", (None,))
