"""Values and comparisons as text: units, ratios, the compare table (golden file)."""

from pathlib import Path

from benchkill.bench.model import FAILED
from benchkill.reporting.formatting import (
    COMPARISON_HEADER,
    comparison_row,
    comparison_table,
    format_ratio,
    format_value,
    verdict_counts,
)
from benchkill.reporting.run_comparison import compare
from tests.conftest import BASE10, make_record, make_results

GOLDEN = Path(__file__).parent / "golden"


def test_format_value():
    assert format_value(1.5e-3, "seconds") == "1.5 ms"
    assert format_value(2.5, "seconds") == "2.5 s"
    assert format_value(2.5e-3, "s") == "2.5 ms"
    assert format_value(3e-8, "seconds") == "30 ns"
    assert format_value(3 * 2**20, "bytes") == "3 MiB"
    assert format_value(5 * 2**30, "B") == "5 GiB"
    assert format_value(512, "bytes") == "512 B"
    assert format_value(1.234, "ratio") == "1.23x"
    assert format_value(7.0, "widgets") == "7 widgets"
    assert format_value(None, "bytes") == "-"


def test_format_ratio():
    assert format_ratio(None) == "-"
    assert format_ratio(float("inf")) == "inf"
    assert format_ratio(1.23456) == "1.235"


def _report():
    base = [
        make_record(BASE10),
        make_record(BASE10, name="tree"),
        make_record([100.0] * 3, "vm_peak_bytes", "bytes", suite="vm", name="w", params={}),
        make_record(BASE10, name="gone"),
    ]
    new = [
        make_record([v * 1.5 for v in BASE10]),
        make_record(BASE10, name="tree"),
        make_record(
            (), "vm_peak_bytes", "bytes", suite="vm", name="w", params={}, status=FAILED, error="x"
        ),
    ]
    return compare(make_results(base), make_results(new))


def test_comparison_row_has_a_cell_per_column():
    report = _report()
    rows = [comparison_row(c) for c in report.comparisons]
    assert all(len(row) == len(COMPARISON_HEADER) for row in rows)
    assert rows[0][:5] == (
        "pass:chain[bindings=100] pass_time",
        "1 s",
        "1.51 s",
        "1.500",
        "regression",
    )
    assert verdict_counts(report) == "1 regression, 1 failed, 1 no change, 1 missing"


def test_comparison_table_matches_the_golden_file():
    text = comparison_table(_report())
    assert text == (GOLDEN / "compare_table.txt").read_text().rstrip("\n")
