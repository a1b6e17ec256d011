"""The headline figures: speedups, memory saved by kills, targets met or not."""

import pytest

from benchkill.reporting.headline import memory_saved, met_counts, speedups, target_results
from tests.conftest import MiB, make_record, vm_records


def time(family, n, impl, seconds):
    params = {"family": family, "bindings": n, "impl": impl}
    return make_record([seconds] * 3, name=family, params=params)


def test_speedups_per_family_in_suite_order_from_medians_when_no_ratios():
    records = [time("mixed", 1000, "benchkill", 1.0), time("mixed", 1000, "tvm", 0.5)]
    records += [
        time("chain", n, impl, t * n)
        for n in (3000, 1000)
        for impl, t in (("benchkill", 1), ("tvm", 4))
    ]
    table = speedups(records)
    assert list(table) == ["chain", "mixed"]
    assert [(p.bindings, p.median) for p in table["chain"]] == [(1000, 4.0), (3000, 4.0)]
    assert table["mixed"][0].median == 0.5


def test_memory_saved_per_workload_and_mode():
    rows = memory_saved(vm_records(("mlp",)))
    assert [(r.workload, r.exec_mode) for r in rows] == [("mlp", "bytecode"), ("mlp", "compiled")]
    row = rows[0]
    assert list(row.peaks) == ["none", "tvm", "benchkill"]
    assert row.saved_bytes() == 10 * MiB and row.ratio() == 2.0
    assert row.bound == pytest.approx(8 * MiB)
    assert row.saved_bytes("beyond") is None


def test_targets_met_not_met_and_not_measured():
    records = [time("chain", 3000, "benchkill", 0.5), time("chain", 3000, "tvm", 2.0)]
    results = target_results(records)
    first = results[0]
    assert first.figure == "benchkill / tvm time, chain at 3,000 bindings"
    assert (first.value, first.met) == (0.25, True)
    # rows are the measured sizes; the exponent needs two sizes: not measured
    assert met_counts(results) == (1, 0, 1)
