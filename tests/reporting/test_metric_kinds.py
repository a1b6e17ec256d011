"""Verdicts per metric kind: exact instruction counts, peak bytes with a tolerance."""

import pytest

from benchkill.reporting.formatting import comparison_table
from benchkill.reporting.run_comparison import compare
from benchkill.reporting.verdicts import (
    BYTES,
    BYTES_FLOOR,
    IMPROVEMENT,
    INSTRUCTIONS,
    NO_CHANGE,
    REGRESSION,
    TIME,
    classify,
    metric_kind,
    thresholds_text,
)
from tests.conftest import BASE10, make_results
from tests.conftest import make_record as rec

MiB = 2**20
#: pass_instructions of benchkill on a 3,000-binding chain, 3 repeats (measured: the
#: repeats of one process differ by ~0.1%, identically in every process)
COUNTS = [118712873.0, 118703646.0, 118683825.0]


def instr(samples, **kw):
    return rec(samples, "pass_instructions", "instructions", **kw)


def peak(samples, **kw):
    return rec(samples, "vm_peak_bytes", "bytes", suite="vm", name="chain", **kw)


def test_kinds():
    assert metric_kind("instructions") == INSTRUCTIONS
    assert metric_kind("ratio", {"kind": "instructions"}) == INSTRUCTIONS
    assert metric_kind("bytes") == metric_kind("B") == BYTES
    assert metric_kind("seconds") == metric_kind("ratio") == TIME


def test_instruction_counts_are_exact_at_the_default_factor_1_005():
    same = classify(instr(COUNTS), instr(COUNTS), None, 0.002)
    assert (same.verdict, same.notes, same.ratio) == (NO_CHANGE, ("exact",), 1.0)
    # +1% (what BENCHKILL_INJECT_SLOWDOWN=0.01 gives): a regression without any test,
    # although 3 vs 3 samples could never reach p < 0.002
    slower = classify(instr(COUNTS), instr([c * 1.01 for c in COUNTS]), None, 0.002)
    assert slower.verdict == REGRESSION and slower.p_value is None and "exact" in slower.notes
    faster = classify(instr(COUNTS), instr([c * 0.99 for c in COUNTS]), None, 0.002)
    assert faster.verdict == IMPROVEMENT
    # +0.3% (the heap-layout effects measured are <= 0.1%): no change
    assert classify(instr(COUNTS), instr([c * 1.003 for c in COUNTS]), None, 0.002).verdict == (
        NO_CHANGE
    )
    # an explicit factor applies to instructions too
    assert classify(instr(COUNTS), instr([c * 1.01 for c in COUNTS]), 1.1, 0.002).verdict == (
        NO_CHANGE
    )


def test_instructions_vs_tvm_is_exact_and_higher_is_better():
    ratio = dict(metric="instructions_vs_tvm", unit="ratio", extra={"kind": "instructions"})
    c = classify(rec([1.837] * 3, **ratio), rec([1.818] * 3, **ratio), None, 0.002)
    assert c.verdict == REGRESSION and c.notes[0] == "exact"


def test_times_keep_factor_1_10_and_the_significance_test():
    c = classify(rec(BASE10), rec([v * 1.05 for v in BASE10]), None, 0.002)
    assert c.verdict == NO_CHANGE
    c = classify(rec(BASE10), rec([v * 1.3 for v in BASE10]), None, 0.002)
    assert c.verdict == REGRESSION and c.p_value is not None and "exact" not in c.notes


def test_peak_bytes_that_move_between_runs_are_not_regressions():
    # measured A/A: equal within each run, 0-96 KiB apart between runs of the same code
    small, large = 3 * MiB, 48 * MiB
    for base in (small, large):
        c = classify(peak([base] * 3), peak([base + 96 * 1024] * 3), None, 0.002)
        assert c.verdict == NO_CHANGE, c
        assert "exact" not in c.notes
    # the MLP of the quick vm suite: 4,364 or 4,624 KiB, the same code
    mlp = classify(peak([4364 * 1024] * 3), peak([4624 * 1024] * 3), None, 0.002)
    assert mlp.verdict == NO_CHANGE
    # the tolerance: max(1% of the base median, 512 KiB)
    beyond = classify(peak([small] * 3), peak([small + BYTES_FLOOR + 1] * 3), None, 0.002)
    assert beyond.verdict == REGRESSION
    within = classify(peak([small] * 3), peak([small + BYTES_FLOOR] * 3), None, 0.002)
    assert within.verdict == NO_CHANGE
    over = classify(peak([large] * 3), peak([large + 0.011 * large] * 3), None, 0.002)
    assert over.verdict == REGRESSION and "samples identical within each run" in over.notes
    under = classify(peak([large] * 3), peak([large + 0.009 * large] * 3), None, 0.002)
    assert under.verdict == NO_CHANGE
    # a dropped kill of a 4 MiB tensor: a regression
    c = classify(peak([16 * MiB] * 3), peak([20 * MiB] * 3), None, 0.002)
    assert c.verdict == REGRESSION
    assert classify(peak([20 * MiB] * 3), peak([16 * MiB] * 3), None, 0.002).verdict == (
        IMPROVEMENT
    )


def test_varying_peak_bytes_still_need_the_test():
    base = [10 * MiB + i * 4096 for i in range(3)]
    new = [v + MiB for v in base]
    c = classify(peak(base), peak(new), None, 0.002)
    assert c.verdict == "insufficient samples"  # 3 vs 3 cannot reach p < 0.002
    assert classify(peak(base), peak(new), None, 0.2).verdict == REGRESSION


def test_explicit_factor_replaces_the_relative_part_of_the_bytes_tolerance():
    c = classify(peak([100 * MiB] * 3), peak([104 * MiB] * 3), 1.05, 0.002)
    assert c.verdict == NO_CHANGE and c.notes == ("tolerance 5120 KiB",)


def test_report_says_which_thresholds_were_used():
    base = make_results([instr(COUNTS), peak([MiB] * 3)])
    report = compare(base, base)
    assert report.per_kind and report.thresholds == thresholds_text(None)
    assert "1.005 instructions" in comparison_table(report)
    assert "exact" in comparison_table(report)
    assert "118,703,646" in comparison_table(report)  # the median count, every digit
    assert compare(base, base, factor=1.2).thresholds.startswith("factor 1.2 ")
    assert report.to_dict()["thresholds"] == thresholds_text(None)


def test_a_slowed_pass_is_caught_by_instructions_and_not_by_noise_alone():
    a = make_results([instr(COUNTS)])
    b = make_results([instr([c * 1.0095 for c in COUNTS])])  # the smallest measured +1%
    assert compare(a, a).exit_code == 0
    assert compare(a, b).exit_code == 1
    assert compare(a, b).comparisons[0].ratio == pytest.approx(1.0095)


def test_one_peak_per_run_is_judged_by_the_tolerance():
    """The pass suite's pass_peak_python_memory has one sample per case (the traced
    warm-up): a growth beyond the tolerance is a regression, not "insufficient samples"
    (measured 2026-12-03: a set of positions raised the sweep's peak at 30,000 bindings from
    9.92 to 10.7 MiB and compare could not say so)."""

    def memory(value):
        return rec([value], "pass_peak_python_memory", "bytes", name="chain")

    grown = classify(memory(9.92 * MiB), memory(10.7 * MiB), None, 0.002)
    assert grown.verdict == REGRESSION
    assert "one sample each: the tolerance decides" in grown.notes
    assert classify(memory(10.7 * MiB), memory(9.92 * MiB), None, 0.002).verdict == IMPROVEMENT
    # within the tolerance (325 -> 364 KiB at 1,000 bindings): no change
    assert classify(memory(325 * 1024), memory(364 * 1024), None, 0.002).verdict == NO_CHANGE
