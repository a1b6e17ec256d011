"""Target figures computed from records with known values (no measurement)."""

from __future__ import annotations

import pytest

from benchkill.bench.model import FAILED, Record
from benchkill.cli.main import main
from benchkill.reporting.targets import format_targets, pass_targets, scaling_exponents


def _record(family, bindings, impl, seconds, status="ok"):
    return Record(
        suite="pass",
        name=family,
        params={"family": family, "bindings": bindings, "impl": impl},
        metric="pass_time",
        unit="seconds",
        samples=(seconds * 1.5, seconds, seconds * 2),
        status=status,
    )


def _records(exponent=1.0):
    out = []
    for n in (3_000, 30_000, 200_000, 600_000):
        out.append(_record("chain", n, "benchkill", 1e-6 * n**exponent))
        out.append(_record("chain", n, "tvm", 4e-6 * n**1.2))
        if n <= 30_000:
            out.append(_record("chain", n, "naive", 25e-6 * n))
    return out


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
    cpu = [
        Record(**{**vars(r), "metric": "pass_cpu_time", "samples": (r.samples[1] / 2,)})
        for r in records
    ]
    cpu[0] = Record(**{**vars(cpu[0]), "samples": (0.2,)})  # benchkill mixed: 0.2 / 1.0
    rows = {row["figure"]: row for row in pass_targets(records + cpu)}
    mixed = rows["benchkill / tvm time, mixed at 3,000 bindings"]
    assert mixed["value"] == pytest.approx(0.2) and mixed["met"] is True
    model = rows["benchkill / tvm time, model at 750 bindings"]
    assert model["value"] == pytest.approx(1 / 3) and model["target"] == "<= 0.5"
    assert "pass_cpu_time" in format_targets(records + cpu)
    wall = {row["figure"]: row for row in pass_targets(records, "pass_time")}
    assert wall["benchkill / tvm time, mixed at 3,000 bindings"]["value"] == pytest.approx(0.5)


def test_scaling_exponents_recover_the_power_law():
    slopes = scaling_exponents(_records(exponent=1.1))
    assert slopes["benchkill"] == pytest.approx(1.1)
    assert slopes["tvm"] == pytest.approx(1.2)
    assert "**no**" in format_targets(_records(exponent=1.1))  # 1.1 > 1.0


def test_failed_records_and_missing_sizes_give_no_figure():
    records = [r for r in _records() if r.params["bindings"] != 200_000]
    records.append(_record("chain", 200_000, "benchkill", 1.0, status=FAILED))
    rows = {row["figure"]: row for row in pass_targets(records)}
    assert rows["benchkill / tvm time, chain at 200,000 bindings"]["value"] is None


def test_targets_command_rejects_a_missing_file(tmp_path, capsys):
    assert main(["targets", str(tmp_path / "none.json")]) == 2
    assert capsys.readouterr().err.startswith("benchkill: error:")
