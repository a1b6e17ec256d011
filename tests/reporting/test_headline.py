"""The headline figures: speedups, memory saved by kills, targets met or not."""

import pytest

from benchkill.reporting.headline import memory_saved, met_counts, speedups, target_results
from tests.conftest import MiB, make_record, vm_records

#: Each implementation's samples relative to its least: min, median and mean all differ,
#: and differ between implementations (speedups are of medians, targets of minima).
SHAPE = {"benchkill": (1.1, 1.0, 2.0), "tvm": (1.5, 1.0, 1.7), "naive": (1.2, 1.0, 1.4)}
MEDIAN = {impl: sorted(shape)[1] for impl, shape in SHAPE.items()}


def time(family, n, impl, seconds):
    """pass_time samples of ``impl`` whose least is ``seconds``."""
    params = {"family": family, "bindings": n, "impl": impl}
    return make_record([seconds * f for f in SHAPE[impl]], name=family, params=params)


def test_speedups_per_family_in_suite_order_from_medians_when_no_ratios():
    records = [time("mixed", 1000, "benchkill", 1.0), time("mixed", 1000, "tvm", 0.5)]
    records += [
        time("chain", n, impl, t * n)
        for n in (3000, 1000)
        for impl, t in (("benchkill", 1), ("tvm", 4))
    ]
    table = speedups(records)
    assert list(table) == ["chain", "mixed"]
    ratio = MEDIAN["tvm"] / MEDIAN["benchkill"]  # TVM / benchkill of the medians
    assert [p.bindings for p in table["chain"]] == [1000, 3000]
    assert [p.median for p in table["chain"]] == pytest.approx([4.0 * ratio] * 2)
    assert table["mixed"][0].median == pytest.approx(0.5 * ratio)


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


def test_every_family_exponent_is_judged_not_only_chains():
    # chain scales linearly (met), mixed at 1.2 (not met): both rows, both judged
    records = []
    for n in (3000, 30000, 300000):
        records += [time("chain", n, "benchkill", 1e-6 * n), time("chain", n, "tvm", 4e-6 * n)]
        mixed = 1e-6 * 3000 * (n / 3000) ** 1.2
        records += [time("mixed", n, "benchkill", mixed), time("mixed", n, "tvm", 4 * mixed)]
    exponents = {
        t.figure: t for t in target_results(records) if t.figure.startswith("scaling exponent")
    }
    assert list(exponents) == [
        "scaling exponent of benchkill, chain 3,000-600,000 bindings",
        "scaling exponent of benchkill, mixed 3,000-600,000 bindings",
    ]
    chain, mixed = exponents.values()
    assert chain.value == pytest.approx(1.0) and chain.met is True
    assert mixed.value == pytest.approx(1.2) and mixed.met is False


def test_a_reported_figure_is_neither_met_nor_missing():
    records = [time("chain", 3000, impl, t) for impl, t in (("benchkill", 0.5), ("tvm", 2.0))]
    records.append(time("chain", 3000, "naive", 6.0))
    results = target_results(records)
    naive = [t for t in results if t.figure.startswith("naive / benchkill")]
    assert [(t.value, t.target, t.met) for t in naive] == [(12.0, "reported", None)]
    # the benchkill / tvm row met, the exponent missing; the naive row in no count
    assert met_counts(results) == (1, 0, 1)
