"""Statistics against scipy/numpy and textbook values (never against timing)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from benchkill.errors import BenchkillError
from benchkill.stats import (
    is_noisy,
    loglog_slope,
    mann_whitney_u,
    min_attainable_p,
    quantile,
    round_ratios,
    scaling_exponents,
    summarize,
)


def samples_with_u(u_per_x: list[int], n: int) -> tuple[list[float], list[float]]:
    """Samples without ties whose U statistic (pairs x > y) is sum(u_per_x)."""
    y = [float(i) for i in range(n)]
    x = [c - 0.5 + i * 1e-3 for i, c in enumerate(u_per_x)]
    return x, y


def spread(u: int, m: int, n: int) -> list[int]:
    """m counts in [0, n] summing to u (as many x above all y as possible)."""
    full, rest = divmod(u, n)
    return [0] * (m - full - 1) + [rest] + [n] * full


# --- summaries -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "values",
    [[3.0], [1.0, 2.0], [5.0, 1.0, 4.0, 2.0, 3.0], [0.1, 0.7, 0.2, 9.0, 0.3, 0.3, 1.5, 2.5]],
)
def test_summary_matches_numpy(values):
    s = summarize(values)
    a = np.array(values)
    assert s.n == len(values)
    assert s.min == a.min()
    assert s.median == pytest.approx(np.median(a))
    assert s.q1 == pytest.approx(np.percentile(a, 25))
    assert s.q3 == pytest.approx(np.percentile(a, 75))
    assert s.iqr == pytest.approx(np.percentile(a, 75) - np.percentile(a, 25))
    assert s.mean == pytest.approx(a.mean())
    assert s.std == pytest.approx(a.std(ddof=1) if len(a) > 1 else 0.0)


def test_summary_textbook_values():
    # 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sample variance 32/7
    s = summarize([2, 4, 4, 4, 5, 5, 7, 9])
    assert s.mean == 5.0
    assert s.std == pytest.approx(math.sqrt(32 / 7))
    assert s.median == 4.5


@pytest.mark.parametrize("bad", [[], [1.0, float("nan")], [float("inf")]])
def test_summary_rejects_bad_samples(bad):
    with pytest.raises(BenchkillError):
        summarize(bad)


def test_quantile_bounds():
    assert quantile([1.0, 2.0, 3.0], 0.0) == 1.0
    assert quantile([1.0, 2.0, 3.0], 1.0) == 3.0
    with pytest.raises(BenchkillError):
        quantile([1.0], 1.5)


def test_noisy_threshold_is_iqr_over_ten_percent_of_median():
    assert not is_noisy(summarize([100, 100, 104, 108, 108]))  # IQR 8 = 8%
    assert is_noisy(summarize([100, 100, 104, 112, 112]))  # IQR 12 = 12%
    assert not is_noisy(summarize([0.0, 0.0, 0.0]))
    assert is_noisy(summarize([0.0, 0.0, 1.0, 1.0]))


# --- Mann-Whitney U ------------------------------------------------------------------


@pytest.mark.parametrize("m,n", [(1, 1), (2, 3), (3, 4), (5, 5), (7, 7), (8, 12), (20, 15)])
def test_exact_u_test_matches_scipy(m, n):
    rng = np.random.default_rng(m * 100 + n)
    x, y = rng.normal(size=m), rng.normal(0.7, size=n)
    ours = mann_whitney_u(x, y, method="exact")
    ref = sps.mannwhitneyu(x, y, alternative="two-sided", method="exact")
    assert ours.u == ref.statistic
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-12)


@pytest.mark.parametrize("m,n", [(5, 6), (10, 10), (30, 45), (60, 80)])
def test_asymptotic_u_test_matches_scipy(m, n):
    rng = np.random.default_rng(m + n)
    # rounding makes ties, exercising the tie correction
    x, y = np.round(rng.normal(size=m), 1), np.round(rng.normal(0.3, size=n), 1)
    ours = mann_whitney_u(x, y, method="asymptotic")
    ref = sps.mannwhitneyu(x, y, alternative="two-sided", method="asymptotic")
    assert ours.u == ref.statistic
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-9)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 12), min_size=1, max_size=15),
    st.lists(st.integers(0, 12), min_size=1, max_size=15),
)
def test_auto_method_matches_scipy_on_any_small_samples(x, y):
    ours = mann_whitney_u(x, y)
    has_ties = len(set(x + y)) < len(x + y)
    method = "asymptotic" if has_ties else "exact"
    assert ours.method == method
    if len(set(x + y)) == 1:
        assert ours.p_value == 1.0  # scipy gives nan: no information at all
        return
    ref = sps.mannwhitneyu(x, y, alternative="two-sided", method=method)
    assert ours.u == ref.statistic
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-9)


def test_exact_null_distribution_textbook():
    # Mann and Whitney (1947): for m=2, n=3 the 10 arrangements give U = 0..6 with
    # frequencies 1, 1, 2, 2, 2, 1, 1.  U = 0 has P = 1/10, two-sided p = 0.2.
    x, y = samples_with_u([0, 0], 3)
    assert mann_whitney_u(x, y).p_value == pytest.approx(0.2)
    x, y = samples_with_u([1, 1], 3)  # U = 2: P(U <= 2) = 4/10
    assert mann_whitney_u(x, y).p_value == pytest.approx(0.8)


def test_critical_values_of_published_table():
    # Two-sided 5% critical value of U for n1 = n2 = 8 is 13; for n1 = n2 = 10 it is 23
    # (standard Mann-Whitney tables): U at the critical value is significant, one more is not.
    for n, crit in ((8, 13), (10, 23)):
        at, above = samples_with_u(spread(crit, n, n), n), samples_with_u(spread(crit + 1, n, n), n)
        assert mann_whitney_u(*at).u == crit
        assert mann_whitney_u(*at).p_value < 0.05
        assert mann_whitney_u(*above).p_value > 0.05


def test_min_attainable_p():
    assert min_attainable_p(6, 6) == pytest.approx(2 / 924)
    assert min_attainable_p(7, 7) == pytest.approx(2 / 3432)
    assert min_attainable_p(1, 1) == 1.0
    # the floor is reached by non-overlapping samples
    assert mann_whitney_u(range(7), range(10, 17)).p_value == pytest.approx(min_attainable_p(7, 7))


def test_min_p_of_the_normal_approximation_uses_the_ties():
    # 7 vs 7 with ties: the normal approximation cannot go below ~0.002 even when the
    # samples are apart, so the floor is that of the method used, not the exact one
    x, y = [1, 1, 2, 3, 4, 5, 6], [10, 10, 11, 12, 13, 14, 15]
    test = mann_whitney_u(x, y)
    assert test.method == "asymptotic"
    assert test.p_value == pytest.approx(sps.mannwhitneyu(x, y, method="asymptotic").pvalue)
    assert test.min_p == pytest.approx(test.p_value)  # apart: the floor is reached
    assert test.min_p > 0.002 > min_attainable_p(7, 7)
    assert mann_whitney_u(x, [0, 3, 3, 9, 20, 21, 22]).min_p == pytest.approx(test.min_p, rel=0.1)
    exact = mann_whitney_u(range(7), [v + 0.5 for v in range(3, 10)])
    assert exact.method == "exact" and exact.min_p == min_attainable_p(7, 7)


def test_u_test_rejects_bad_input():
    with pytest.raises(BenchkillError):
        mann_whitney_u([], [1.0])
    with pytest.raises(BenchkillError):
        mann_whitney_u([1.0, 1.0], [2.0], method="exact")
    with pytest.raises(BenchkillError):
        mann_whitney_u([1.0], [2.0], method="bootstrap")


# --- scaling exponent ----------------------------------------------------------------


def test_loglog_slope_of_exact_power_law():
    x = [100, 200, 400, 800, 1600]
    slope, intercept = loglog_slope(x, [3 * v**1.5 for v in x])
    assert slope == pytest.approx(1.5)
    assert intercept == pytest.approx(math.log(3))


def test_loglog_slope_matches_numpy_polyfit():
    rng = np.random.default_rng(1)
    x = np.array([10, 30, 100, 300, 1000, 3000], dtype=float)
    y = 1e-6 * x**1.1 * rng.lognormal(0, 0.1, size=x.size)
    slope, intercept = loglog_slope(x, y)
    ref_slope, ref_intercept = np.polyfit(np.log(x), np.log(y), 1)
    assert slope == pytest.approx(ref_slope)
    assert intercept == pytest.approx(ref_intercept)


@pytest.mark.parametrize("x,y", [([1, 2], [1, 0]), ([5, 5], [1, 2]), ([1, 2], [1])])
def test_loglog_slope_rejects_bad_input(x, y):
    with pytest.raises(BenchkillError):
        loglog_slope(x, y)


def test_round_ratios_pair_rounds_in_order_up_to_the_shorter_side():
    # the second side stopped at its budget after two rounds; a zero round is left out
    assert round_ratios([2.0, 3.0, 4.0], [1.0, 2.0]) == [2.0, 1.5]
    assert round_ratios([2.0, 3.0], [0.0, 1.5]) == [2.0]
    assert round_ratios([], [1.0]) == []


def test_scaling_exponents_are_the_slopes_of_each_timing():
    points = {
        "linear": [(1_000, 1.0), (10_000, 10.0), (100_000, 100.0)],
        "quadratic": [(10_000, 100.0), (1_000, 1.0), (100_000, 10_000.0)],  # any order
        "partial": [(1_000, 2.0)],  # one size: no exponent
        "same size": [(1_000, 2.0), (1_000, 3.0)],  # one distinct size
        "two sizes": [(1_000, 1.0), (4_000, 8.0)],  # 8 = 4 ** 1.5
    }
    exponents = scaling_exponents(points)
    assert exponents.keys() == {"linear", "quadratic", "two sizes"}
    assert exponents["linear"] == pytest.approx(1.0, abs=1e-12)
    assert exponents["quadratic"] == pytest.approx(2.0, abs=1e-12)
    assert exponents["two sizes"] == pytest.approx(1.5, abs=1e-12)
    assert scaling_exponents({}) == {}
