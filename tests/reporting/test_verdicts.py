"""Verdicts of ``compare``: classification, the direction table, matching two runs."""

import json
import re
from dataclasses import replace

import pytest
from scipy import stats as sps

from benchkill.bench.model import EXPECTED_FAILURE, FAILED
from benchkill.errors import BenchkillError
from benchkill.reporting.run_comparison import compare
from benchkill.reporting.verdicts import (
    FAILED_VERDICT,
    IMPROVEMENT,
    INSUFFICIENT,
    MISSING,
    NO_CHANGE,
    NOISY,
    REGRESSION,
    better_direction,
    classify,
)
from tests.conftest import BASE10, make_results
from tests.conftest import make_record as rec


def scaled(values, factor):
    return [v * factor for v in values]


# --- verdicts ------------------------------------------------------------------------


def test_clear_slowdown_is_a_regression_with_scipy_p_value():
    c = classify(rec(BASE10), rec(scaled(BASE10, 1.3)), factor=1.1, alpha=0.002)
    assert c.verdict == REGRESSION
    assert c.ratio == pytest.approx(1.3)
    ref = sps.mannwhitneyu(BASE10, scaled(BASE10, 1.3), method="asymptotic")
    assert c.p_value == pytest.approx(ref.pvalue)  # BASE10 has ties: normal approximation
    assert c.p_value < 0.002


def test_clear_speedup_is_an_improvement():
    c = classify(rec(BASE10), rec(scaled(BASE10, 0.5)), factor=1.1, alpha=0.002)
    assert c.verdict == IMPROVEMENT


def test_change_within_factor_is_no_change_even_if_significant():
    c = classify(rec(BASE10), rec([v + 0.05 for v in BASE10]), factor=1.1, alpha=0.002)
    assert c.verdict == NO_CHANGE
    assert c.p_value is None


def test_large_ratio_without_significance_is_not_a_regression():
    base = [1.0, 1.05, 0.95, 1.9, 1.0, 1.02, 0.97, 1.01]
    new = [1.3, 1.02, 1.25, 0.96, 1.2, 1.28, 1.0, 1.22]
    c = classify(rec(base), rec(new), factor=1.1, alpha=0.002)
    assert c.ratio > 1.1
    assert c.verdict in (NO_CHANGE, NOISY)
    assert any(n.startswith("not significant") for n in c.notes)


def test_too_few_samples_are_reported_not_guessed():
    base, new = rec([1.0, 1.01, 0.99]), rec([2.0, 2.01, 1.99])
    c = classify(base, new, factor=1.1, alpha=0.002)
    assert c.verdict == INSUFFICIENT
    assert c.notes == ("3 vs 3 samples cannot reach p < 0.002 (min p 0.1)",)
    # with a looser alpha the same data suffices: min p for 3 vs 3 is 2/20 = 0.1
    assert classify(base, new, 1.1, 0.2).verdict == REGRESSION


def test_ties_that_keep_the_test_from_reaching_alpha_are_insufficient():
    base = [1.0, 1.0, 1.01, 1.02, 1.03, 1.04, 1.05]
    c = classify(rec(base), rec([2 * v for v in base]), factor=1.1, alpha=0.002)
    assert c.verdict == INSUFFICIENT
    assert c.notes == ("7 vs 7 samples cannot reach p < 0.002 (min p 0.0021)",)


def test_noisy_runs_are_flagged_but_still_classified():
    noisy_base = [1.0, 0.8, 1.2, 0.9, 1.1, 1.0, 0.85, 1.15, 1.0, 0.95]
    c = classify(rec(noisy_base), rec(scaled(noisy_base, 3.0)), 1.1, 0.002)
    assert c.verdict == REGRESSION
    assert any(n.startswith("noisy") for n in c.notes)
    c = classify(rec(noisy_base), rec(noisy_base), 1.1, 0.002)
    assert c.verdict == NOISY


def test_deterministic_measurements_need_no_test():
    # identical times on both sides: the ratio alone decides, and the notes say "exact"
    c = classify(rec([1.0] * 3), rec([1.2] * 3), None, 0.002)
    assert c.verdict == REGRESSION and c.notes[0] == "exact" and c.p_value is None
    declared = {"deterministic": True}
    c = classify(rec([100], extra=declared), rec([80], extra=declared), 1.1, 0.002)
    assert c.verdict == IMPROVEMENT and "exact" in c.notes
    # a single undeclared sample proves nothing
    assert classify(rec([1.0]), rec([1.2]), 1.1, 0.002).verdict == INSUFFICIENT


@pytest.mark.parametrize("metric, worse", [("speedup_vs_tvm", 0.7), ("time_over_floor", 1.3)])
def test_a_ratio_regresses_in_its_metrics_direction(metric, worse):
    """Both are ratios: TVM / benchkill is better higher (a higher-is-better metric inverts
    the verdict), benchkill's time over the floor's better lower."""
    base, new = rec(BASE10, metric, "ratio"), rec(scaled(BASE10, worse), metric, "ratio")
    assert classify(base, new, 1.1, 0.002).verdict == REGRESSION
    assert classify(new, base, 1.1, 0.002).verdict == IMPROVEMENT


def test_direction_table():
    assert better_direction("pass_time", "seconds") == "lower"
    assert better_direction("vm_peak_bytes", "bytes") == "lower"
    assert better_direction("speedup_vs_tvm", "ratio") == "higher"
    assert better_direction("peak_over_bound", "ratio") == "lower"
    assert better_direction("pass_time_over_floor", "ratio") == "lower"  # asv's name
    assert better_direction("anything", "ratio") == "higher"
    assert better_direction("mystery", "widgets") == "lower"
    assert better_direction("vm_run_time", "s") == "lower"
    assert better_direction("pass_time", "seconds", {"better": "higher"}) == "higher"


def test_failures_and_expected_failures():
    ok, failed = rec(BASE10), rec([], status=FAILED, error="boom")
    expected = rec([], status=EXPECTED_FAILURE, error="unsupported")
    c = classify(ok, failed, 1.1, 0.002)
    assert (
        c.verdict == FAILED_VERDICT and "newly failed" in c.notes and "new: failed: boom" in c.notes
    )
    c = classify(failed, ok, 1.1, 0.002)
    assert c.verdict == FAILED_VERDICT and "newly failed" not in c.notes
    assert classify(expected, expected, 1.1, 0.002).verdict == NO_CHANGE


# --- matching two runs -----------------------------------------------------------------


def test_compare_matches_by_name_params_and_metric():
    base = make_results(
        [rec(BASE10), rec(BASE10, params={"bindings": 200}), rec(BASE10, name="only_base")]
    )
    new = make_results(
        [
            rec(scaled(BASE10, 1.5)),
            rec(BASE10, params={"bindings": 200}),
            rec(BASE10, name="only_new"),
        ]
    )
    report = compare(base, new)
    verdicts = {(c.name, c.params.get("bindings")): c.verdict for c in report.comparisons}
    assert verdicts == {
        ("chain", 100): REGRESSION,
        ("chain", 200): NO_CHANGE,
        ("only_base", 100): MISSING,
        ("only_new", 100): MISSING,
    }
    assert report.comparisons[0].verdict == REGRESSION  # most urgent first
    assert report.exit_code == 1
    assert compare(base, base).exit_code == 0


def test_failed_case_explains_the_records_it_replaced():
    base = make_results(
        [
            rec(BASE10, case="k"),
            rec(BASE10, metric="pass_peak_python_memory", unit="bytes", case="k"),
        ]
    )
    crash = rec([], metric="case", unit="", status=FAILED, error="RuntimeError: boom", case="k")
    # every case of the new run crashed: its cases are in common, and newly failed
    report = compare(base, make_results([crash]))
    assert {c.verdict for c in report.comparisons} == {FAILED_VERDICT}
    assert all("newly failed" in c.notes for c in report.comparisons)
    assert report.exit_code == 1
    with pytest.raises(BenchkillError, match="no case in common"):  # a crash of another case
        compare(base, make_results([rec(BASE10, name="other"), replace(crash, case="j")]))
    new = make_results([rec(BASE10), crash])
    report = compare(base, new)
    [failed] = [c for c in report.comparisons if c.verdict == FAILED_VERDICT]
    assert failed.metric == "pass_peak_python_memory"
    assert "newly failed" in failed.notes
    assert report.exit_code == 1


def test_cases_failing_in_both_runs_or_only_in_the_new_one():
    crash = rec([], metric="case", unit="", status=FAILED, error="RuntimeError: boom", case="k")
    fresh_crash = rec([], "case", "", name="new_case", status=FAILED, error="OSError: x", case="n")
    base = make_results([rec(BASE10), crash])
    new = make_results([rec(BASE10), crash, fresh_crash])
    report = compare(base, new)
    verdicts = {c.name: (c.verdict, c.notes) for c in report.comparisons if c.metric == "case"}
    assert verdicts["chain"] == (
        FAILED_VERDICT,
        ("base: failed: RuntimeError: boom", "new: failed: RuntimeError: boom"),
    )
    assert verdicts["new_case"] == (
        FAILED_VERDICT,
        ("only in new", "new: failed: OSError: x", "newly failed"),
    )
    assert report.exit_code == 1


def test_only_filters_by_label():
    base = make_results([rec(BASE10), rec(BASE10, name="tree")])
    report = compare(base, base, only=re.compile(r"tree"))
    assert [c.name for c in report.comparisons] == ["tree"]
    assert report.comparisons[0].label == "pass:tree[bindings=100] pass_time"
    with pytest.raises(BenchkillError, match="matching --only 'nothing'"):
        compare(base, base, only=re.compile("nothing"))


def test_json_form_is_strict_json():
    base = make_results([rec([0.0] * 3, unit="instructions")])
    new = make_results([rec([5.0] * 3, unit="instructions")])
    data = compare(base, new).to_dict()
    text = json.dumps(data, allow_nan=False)
    assert json.loads(text)["comparisons"][0]["ratio"] is None  # infinite ratio
    assert data["counts"][REGRESSION] == 1


def test_benchkill_times_carry_the_floor_ratio_of_their_case_and_keep_their_verdict():
    """A benchkill regression whose floor moved as much is the machine's: the comparison
    says how far the floor moved, and the verdict (and the exit code) stay."""

    def run(benchkill, floor, tvm):
        records = []
        for impl, factor in (("benchkill", benchkill), ("floor", floor), ("tvm", tvm)):
            for metric in ("pass_time", "pass_cpu_time"):
                params = {"family": "chain", "bindings": 3000, "impl": impl}
                records.append(rec(scaled(BASE10, factor), metric, params=params))
        other = {"family": "mixed", "bindings": 3000, "impl": "benchkill"}  # no floor
        records.append(rec(scaled(BASE10, benchkill), params=other))
        return make_results(records)

    report = compare(run(1.0, 1.0, 1.0), run(1.3, 1.25, 1.0))
    by = {(c.name, c.params["impl"], c.params["family"], c.metric): c for c in report.comparisons}
    for metric in ("pass_time", "pass_cpu_time"):
        ours = by[("chain", "benchkill", "chain", metric)]
        assert ours.verdict == REGRESSION and "floor moved 1.250" in ours.notes
        assert not [n for n in by[("chain", "tvm", "chain", metric)].notes if "floor" in n]
        assert not [n for n in by[("chain", "floor", "chain", metric)].notes if "floor" in n]
    assert not [n for n in by[("chain", "benchkill", "mixed", "pass_time")].notes if "floor" in n]
    assert report.exit_code == 1
    # --only benchkill's records: the floor is still read
    only = compare(run(1.0, 1.0, 1.0), run(1.3, 1.25, 1.0), only=re.compile("impl=benchkill"))
    assert {c.params["impl"] for c in only.comparisons} == {"benchkill"}
    noted = {
        (c.params["family"], c.metric) for c in only.comparisons if "floor moved 1.250" in c.notes
    }
    assert noted == {("chain", "pass_time"), ("chain", "pass_cpu_time")}
    # no floor in the base run: no note
    base = make_results([r for r in run(1.0, 1.0, 1.0).records if r.params["impl"] != "floor"])
    notes = [n for c in compare(base, run(1.3, 1.25, 1.0)).comparisons for n in c.notes]
    assert not [n for n in notes if n.startswith("floor moved")]
