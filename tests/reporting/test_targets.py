"""Target figures computed from records with known values (no measurement)."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from benchkill.bench.model import FAILED
from benchkill.cli.main import main
from benchkill.reporting.formatting import machine_text
from benchkill.reporting.targets import (
    VM_TARGETS,
    family_exponents,
    format_targets,
    pass_targets,
    vm_targets,
)
from benchkill.results.store import load, save
from tests.conftest import MiB, make_record, make_results, write_results

BASELINE = Path(__file__).resolve().parents[2] / "results" / "baseline-2core-vm"
REPOSITORY_RESULTS = sorted(BASELINE.glob("*.json"))
GOLDEN = Path(__file__).parent / "golden"


#: How far above its least sample an implementation's other samples lie: different per
#: implementation and per size, so the ratios and slopes of minima differ from those of
#: medians, means or first samples (a figure made of any of those fails the tests).
_SPREAD = {"benchkill": 0.1, "tvm": 0.6, "naive": 1.1, "floor": 0.35}


def _record(family, bindings, impl, seconds, status="ok"):
    params = {"family": family, "bindings": bindings, "impl": impl}
    above = 1 + _SPREAD[impl] + math.log10(bindings) ** 2 / 20
    samples = (seconds * above, seconds, seconds * above * 1.7)  # the least in the middle
    return make_record(samples, name=family, params=params, status=status)


def _records(exponent=1.0):
    out = []
    for n in (3_000, 30_000, 200_000, 600_000):
        out.append(_record("chain", n, "benchkill", 1e-6 * n**exponent))
        out.append(_record("chain", n, "tvm", 4e-6 * n**1.2))
        if n <= 30_000:
            out.append(_record("chain", n, "naive", 25e-6 * n))
    return out


# --- pass suite ----------------------------------------------------------------------


def test_pass_targets_are_ratios_of_minimum_times():
    rows = {row["figure"]: row for row in pass_targets(_records())}
    at_3k = rows["benchkill / tvm time, chain at 3,000 bindings"]
    assert at_3k["value"] == pytest.approx(1e-6 * 3000 / (4e-6 * 3000**1.2))
    assert at_3k["met"] is True
    naive = rows["naive / benchkill time, chain at 30,000 bindings"]
    assert naive["value"] == pytest.approx(25.0) and naive["met"] is None  # reported only
    assert naive["target"] == "reported"
    at_200k = rows["benchkill / tvm time, chain at 200,000 bindings"]
    assert at_200k["target"] == "<= 0.15"
    assert rows["benchkill / tvm time, chain at 600,000 bindings"]["target"] == "<= 0.33"


def test_every_family_and_the_model_family_get_rows_in_cpu_time_when_recorded():
    records = [_record("mixed", 3_000, impl, s) for impl, s in (("benchkill", 1.0), ("tvm", 2.0))]
    records += [_record("model", 750, impl, s) for impl, s in (("benchkill", 1.0), ("tvm", 3.0))]
    cpu = [replace(r, metric="pass_cpu_time", samples=(r.samples[1] / 2,)) for r in records]
    cpu[0] = replace(cpu[0], samples=(0.2,))  # benchkill mixed: 0.2 / 1.0
    rows = {row["figure"]: row for row in pass_targets(records + cpu)}
    mixed = rows["benchkill / tvm time, mixed at 3,000 bindings"]
    assert mixed["value"] == pytest.approx(0.2) and mixed["met"] is True
    model = rows["benchkill / tvm time, model at 750 bindings"]
    assert model["value"] == pytest.approx(1 / 3) and model["target"] == "<= 0.5"
    assert "pass_cpu_time" in format_targets(records + cpu)
    wall = {row["figure"]: row for row in pass_targets(records, "pass_time")}
    assert wall["benchkill / tvm time, mixed at 3,000 bindings"]["value"] == pytest.approx(0.5)


def test_benchkill_over_its_floor_is_reported_beside_benchkill_over_tvm_where_timed():
    records = _records() + [_record("chain", n, "floor", 0.5e-6 * n) for n in (3_000, 1_000)]
    rows = {row["figure"]: row for row in pass_targets(records)}
    floor = rows["benchkill / floor time, chain at 3,000 bindings"]
    assert floor["value"] == pytest.approx(2.0) and floor["target"] == "reported"
    assert floor["met"] is None
    # none where the floor was not timed, nor at a size with no benchkill / TVM figure
    assert not [f for f in rows if "floor" in f and "3,000" not in f]
    assert "| benchkill / floor time, chain at 3,000 bindings | 2.000 | reported |  |" in (
        format_targets(records)
    )
    assert family_exponents(records + [_record("chain", 30_000, "floor", 0.015)])[
        "floor"
    ] == pytest.approx(1.0)


def test_family_exponents_recover_the_power_law():
    slopes = family_exponents(_records(exponent=1.1))
    assert slopes["benchkill"] == pytest.approx(1.1)
    assert slopes["tvm"] == pytest.approx(1.2)
    assert slopes["naive"] == pytest.approx(1.0)
    assert "**no**" in format_targets(_records(exponent=1.1))  # 1.1 > 1.0


def test_family_exponents_need_two_sizes_and_skip_failures():
    records = [_record("tree", n, "tvm", 2e-7 * n**1.5) for n in (1_000, 10_000, 100_000)]
    records += [_record("tree", n, "benchkill", 3e-6 * n) for n in (1_000, 30_000)]
    records += [_record("tree", 1_000, "naive", 1.0)]  # one size only: no fit
    records += [_record("tree", 300, "benchkill", 99.0, status=FAILED)]  # ignored
    slopes = family_exponents(records, family="tree", span=(0, math.inf))
    assert set(slopes) == {"tvm", "benchkill"}
    assert slopes["tvm"] == pytest.approx(1.5, rel=1e-9)
    assert slopes["benchkill"] == pytest.approx(1.0, rel=1e-9)
    assert family_exponents(records) == {}  # no chain records


def test_failed_records_and_missing_sizes_give_no_figure():
    records = [r for r in _records() if r.params["bindings"] != 200_000]
    records.append(_record("chain", 200_000, "benchkill", 1.0, status=FAILED))
    rows = {row["figure"]: row for row in pass_targets(records)}
    row = rows["benchkill / tvm time, chain at 200,000 bindings"]
    assert row["value"] is None and row["met"] is None
    assert "| n/a | <= 0.15 | n/a |" in format_targets(records)


# --- vm suite ------------------------------------------------------------------------


def _vm(workload, mode, kill, metric, samples, status="ok"):
    params = {"workload": workload, "exec_mode": mode, "memory_cfg": "pooled", "kill": kill}
    return make_record(samples, metric, "", suite="vm", name=workload, params=params, status=status)


def _chain_records(workload="chain-8x4MiB", none_peak=400 * MiB):
    return [
        # min, median and mean differ in every sample set: the figures are of medians
        _vm(workload, "bytecode", None, "vm_peak_bytes", [none_peak * f for f in (1, 1.25, 1.01)]),
        _vm(workload, "bytecode", "benchkill", "vm_peak_bytes", [48 * MiB, 53 * MiB, 49 * MiB]),
        _vm(workload, "bytecode", "benchkill", "liveness_bound_bytes", [48 * MiB]),
        _vm(workload, "bytecode", "tvm", "vm_peak_bytes", [49 * MiB]),
        _vm(workload, "bytecode", "beyond", "vm_peak_bytes", [7 * MiB], status=FAILED),
        _vm(workload, "bytecode", None, "vm_run_time", [2.0, 4.5, 3.0]),
        _vm(workload, "bytecode", "benchkill", "vm_run_time", [1.5, 1.0, 2.5]),
        _vm(workload, "compiled", "benchkill", "vm_run_time", [0.75]),
    ]


def test_vm_figures_are_ratios_of_medians():
    records = _chain_records() + [
        _vm("tiny", "bytecode", None, "vm_peak_bytes", [1000]),
        _vm("tiny", "bytecode", "benchkill", "vm_peak_bytes", [10]),
    ]
    rows = {(r["workload"], r["exec_mode"]): r for r in vm_targets(records)}
    row = rows[("chain-8x4MiB", "bytecode")]
    assert row["peak_over_bound"] == pytest.approx(49 / 48)
    assert row["none_over_kills"] == pytest.approx(400 * 1.01 / 49)
    assert row["benchkill_over_tvm"] == pytest.approx(1.0)
    assert "beyond_over_tvm" not in row  # the beyond record failed
    assert row["kill_time_ratio"] == pytest.approx(1.5 / 3.0)
    assert rows[("chain-8x4MiB", "compiled")]["compiled_over_bytecode"] == pytest.approx(0.5)
    assert "none_over_kills" not in rows[("tiny", "bytecode")]  # below the resolution


def test_vm_targets_are_applied_to_chains_only():
    sense, bound = VM_TARGETS["none_over_kills"]
    assert sense == ">="
    low = bound * 49 * MiB * 0.9  # no kills only 0.9x the target above benchkill's peak
    records = _chain_records() + _chain_records("symbolic_chain-8x4MiB", low)
    records += _chain_records("mlp-1x2x3", low)
    met = {(r["workload"], r["exec_mode"]): r["met"] for r in vm_targets(records)}
    assert met[("chain-8x4MiB", "bytecode")] is True
    assert met[("symbolic_chain-8x4MiB", "bytecode")] is False
    assert met[("chain-8x4MiB", "compiled")] is None  # no peaks measured in that mode
    assert met[("mlp-1x2x3", "bytecode")] is None  # no target for an MLP
    text = format_targets(records)
    assert "| symbolic_chain-8x4MiB | bytecode | pooled | 1.021 | **" in text
    assert text.count("| **no** |") == 1 and text.count("| yes |") == 1


def test_targets_of_the_repository_results_match_the_golden_file():
    records = [r for path in REPOSITORY_RESULTS for r in load(path).records]
    assert format_targets(records) == (GOLDEN / "targets_baseline.md").read_text().rstrip("\n")


# --- the command ---------------------------------------------------------------------


def test_targets_command_prints_what_measured_each_file_then_the_tables(capsys):
    assert main(["targets", *map(str, REPOSITORY_RESULTS)]) == 0
    out = capsys.readouterr().out
    machines, tables = out.split("\n\n", 1)
    assert machines.splitlines() == [
        f"- `{path.name}`: {machine_text(load(path).machine)}" for path in REPOSITORY_RESULTS
    ]
    assert "Xeon" in machines and "CPython 3.11" in machines
    assert tables.rstrip("\n") == (GOLDEN / "targets_baseline.md").read_text().rstrip("\n")


def test_targets_command_rejects_a_missing_file_and_results_without_figures(tmp_path, capsys):
    assert main(["targets", str(tmp_path / "none.json")]) == 2
    assert capsys.readouterr().err.startswith("benchkill: error:")
    other = write_results(tmp_path / "other.json", name="other")
    assert main(["targets", str(other)]) == 2
    assert "no pass or vm records a target figure is computed from" in capsys.readouterr().err


def test_targets_exits_3_when_every_measurement_behind_the_figures_failed(tmp_path, capsys):
    """Records of the figures that all failed: the measurement, not the input, is bad."""
    failed = [_record("chain", 3_000, impl, 1.0, status=FAILED) for impl in ("benchkill", "tvm")]
    failed += [_vm("chain-8x4MiB", "bytecode", None, "vm_peak_bytes", [], status=FAILED)]
    path = tmp_path / "failed.json"
    save(make_results(failed), path)
    assert main(["targets", str(path)]) == 3
    err = capsys.readouterr().err
    assert err.startswith("benchkill: error: no target figure could be computed: 3 pass or vm")
    # one succeeded figure is enough: exit 0
    ok = [
        *failed[2:],
        _record("chain", 3_000, "benchkill", 1.0),
        _record("chain", 3_000, "tvm", 4.0),
    ]
    save(make_results(ok), tmp_path / "some.json")
    assert main(["targets", str(tmp_path / "some.json")]) == 0
