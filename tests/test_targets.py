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
    assert naive["value"] == pytest.approx(25.0) and naive["met"] is True


def test_scaling_exponents_recover_the_power_law():
    slopes = scaling_exponents(_records(exponent=1.1))
    assert slopes["benchkill"] == pytest.approx(1.1)
    assert slopes["tvm"] == pytest.approx(1.2)
    assert "**no**" in format_targets(_records(exponent=1.1))  # 1.1 > 1.05


def test_failed_records_and_missing_sizes_give_no_figure():
    records = [r for r in _records() if r.params["bindings"] != 200_000]
    records.append(_record("chain", 200_000, "benchkill", 1.0, status=FAILED))
    rows = {row["figure"]: row for row in pass_targets(records)}
    assert rows["benchkill / tvm time, chain at 200,000 bindings"]["value"] is None


def test_targets_command_rejects_a_missing_file(tmp_path, capsys):
    assert main(["targets", str(tmp_path / "none.json")]) == 2
    assert capsys.readouterr().err.startswith("benchkill: error:")
