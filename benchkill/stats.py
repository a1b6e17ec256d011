"""Pure statistics for benchmark samples: summaries, Mann-Whitney U, log-log slopes.

Nothing here reads clocks or files, so every function is tested against values from
textbooks and from scipy.  The regression test is the Mann-Whitney U test on raw samples,
as asv uses it: it makes no normality assumption (timings are skewed, with a long tail of
slow outliers) and it is exact for the small sample counts a quick run produces.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from benchkill.errors import BenchkillError

#: Above this many samples in the larger group the exact null distribution of U is
#: replaced by the normal approximation (which is then accurate to ~1e-4 in p).
EXACT_MAX_SAMPLES = 50

#: A run is flagged noisy when its interquartile range exceeds this fraction of its median.
NOISY_IQR_FRACTION = 0.10


@dataclass(frozen=True)
class Summary:
    """Summary statistics of one record's raw samples (``std`` with ddof=1, 0 for n=1)."""

    n: int
    min: float
    median: float
    q1: float
    q3: float
    mean: float
    std: float

    @property
    def iqr(self) -> float:
        return self.q3 - self.q1


@dataclass(frozen=True)
class MannWhitney:
    """Result of a two-sided Mann-Whitney U test.

    ``u`` is the statistic of the first sample (the number of pairs (x, y) with x > y,
    ties counting one half); ``method`` is ``"exact"`` or ``"asymptotic"``; ``min_p`` is
    the smallest p-value the same method could give for samples of these sizes (and, for
    the normal approximation, these ties): when it is not below the significance level,
    the samples are too few for the test to ever detect a difference.
    """

    u: float
    p_value: float
    method: str
    min_p: float


def _checked(samples: Sequence[float], what: str) -> list[float]:
    values = [float(v) for v in samples]
    if not values:
        raise BenchkillError(f"{what}: no samples")
    if not all(math.isfinite(v) for v in values):
        raise BenchkillError(f"{what}: samples must be finite numbers")
    return values


def quantile(sorted_values: Sequence[float], q: float) -> float:
    """The q-quantile of already sorted values, linear interpolation (numpy's default)."""
    if not sorted_values:
        raise BenchkillError("quantile of no values")
    if not 0.0 <= q <= 1.0:
        raise BenchkillError(f"quantile {q} is outside [0, 1]")
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def summarize(samples: Sequence[float]) -> Summary:
    """Min, quartiles, mean and sample standard deviation of ``samples``."""
    values = sorted(_checked(samples, "summary"))
    n = len(values)
    mean = math.fsum(values) / n
    var = math.fsum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else 0.0
    return Summary(
        n=n,
        min=values[0],
        median=quantile(values, 0.5),
        q1=quantile(values, 0.25),
        q3=quantile(values, 0.75),
        mean=mean,
        std=math.sqrt(var),
    )


def is_noisy(summary: Summary, fraction: float = NOISY_IQR_FRACTION) -> bool:
    """True when the spread (IQR) is above ``fraction`` of the median."""
    if summary.median == 0:
        return summary.iqr > 0
    return summary.iqr > fraction * abs(summary.median)


def _ranks(values: Sequence[float]) -> tuple[list[float], list[int]]:
    """Mid-ranks (1-based, ties get their average rank) and the sizes of tie groups."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    ties = []
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        ties.append(j - i + 1)
        i = j + 1
    return ranks, ties


@lru_cache(maxsize=256)
def _u_counts(m: int, n: int) -> tuple[int, ...]:
    """Number of arrangements giving each U = 0..m*n when there are no ties.

    These are the coefficients of the Gaussian binomial coefficient [m+n choose m]_q,
    i.e. the product over i = 1..m of (1 - q^(n+i)) / (1 - q^i) (Mann and Whitney 1947).
    """
    coeffs = [1] + [0] * (m * n + m)
    degree = 0
    for i in range(1, m + 1):
        # multiply by (1 - q^(n+i)), then divide exactly by (1 - q^i)
        degree += n + i
        for k in range(degree, n + i - 1, -1):
            coeffs[k] -= coeffs[k - n - i]
        for k in range(i, degree + 1):
            coeffs[k] += coeffs[k - i]
        degree -= i
    return tuple(coeffs[: m * n + 1])


def min_attainable_p(m: int, n: int) -> float:
    """The smallest two-sided p-value the U test can give for samples of sizes m and n.

    Reached when the two samples do not overlap: 2 / C(m+n, m).  If it is not below the
    significance level, no data of these sizes can show a significant difference.
    """
    if m < 1 or n < 1:
        return 1.0
    return min(1.0, 2.0 / math.comb(m + n, m))


def _normal_sf(z: float) -> float:
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def mann_whitney_u(x: Sequence[float], y: Sequence[float], method: str = "auto") -> MannWhitney:
    """Two-sided Mann-Whitney U test of x against y.

    ``method="exact"`` uses the exact null distribution (valid without ties);
    ``"asymptotic"`` the normal approximation with tie correction and continuity
    correction (as scipy.stats.mannwhitneyu); ``"auto"`` picks exact when there are no
    ties and neither sample has more than :data:`EXACT_MAX_SAMPLES` values.
    """
    xs, ys = _checked(x, "first sample"), _checked(y, "second sample")
    m, n = len(xs), len(ys)
    ranks, ties = _ranks(xs + ys)
    u = math.fsum(ranks[:m]) - m * (m + 1) / 2
    has_ties = any(t > 1 for t in ties)
    if method == "auto":
        method = "exact" if not has_ties and max(m, n) <= EXACT_MAX_SAMPLES else "asymptotic"
    if method == "exact":
        if has_ties:
            raise BenchkillError("the exact Mann-Whitney U test needs samples without ties")
        counts = _u_counts(m, n)
        u_big = int(round(max(u, m * n - u)))
        tail = sum(counts[u_big:])  # P(U >= u_big) * C(m+n, m), by symmetry the upper tail
        p = min(1.0, 2.0 * tail / math.comb(m + n, m))
        floor = min_attainable_p(m, n)
    elif method == "asymptotic":
        total = m + n
        mean = m * n / 2
        tie_term = sum(t**3 - t for t in ties) / (total * (total - 1))
        var = m * n / 12 * ((total + 1) - tie_term)
        if var <= 0:  # all values equal: no evidence of any difference
            return MannWhitney(u=u, p_value=1.0, method=method, min_p=1.0)
        z = (max(u, m * n - u) - mean - 0.5) / math.sqrt(var)
        p = min(1.0, 2.0 * _normal_sf(z))
        # the most extreme U (samples apart) with the same tie correction
        floor = min(1.0, 2.0 * _normal_sf((m * n - mean - 0.5) / math.sqrt(var)))
    else:
        raise BenchkillError(f"unknown Mann-Whitney method {method!r}")
    return MannWhitney(u=u, p_value=p, method=method, min_p=floor)


def loglog_slope(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
    """Least-squares fit of log y = slope * log x + intercept: the scaling exponent.

    A pass that is linear in the number of bindings has slope 1, a quadratic one 2.
    Returns ``(slope, intercept)`` with natural logarithms.
    """
    if len(x) != len(y):
        raise BenchkillError("loglog_slope: x and y have different lengths")
    if any(v <= 0 for v in list(x) + list(y)):
        raise BenchkillError("loglog_slope: values must be positive")
    lx = [math.log(v) for v in x]
    ly = [math.log(v) for v in y]
    if len(set(lx)) < 2:
        raise BenchkillError("loglog_slope: needs at least two distinct x values")
    mx, my = math.fsum(lx) / len(lx), math.fsum(ly) / len(ly)
    sxy = math.fsum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True))
    sxx = math.fsum((a - mx) ** 2 for a in lx)
    slope = sxy / sxx
    return slope, my - slope * mx


def scaling_exponents(points: Mapping[str, Iterable[tuple[float, float]]]) -> dict[str, float]:
    """Name -> slope of log seconds against log size (:func:`loglog_slope`) of each timing
    ``points[name]`` (``(size, seconds)`` pairs) measured at two distinct sizes or more;
    a timing measured at one size has no exponent and is left out.

    The one rule for the scaling exponent: ``benchkill profile`` over its sizes, the
    targets and the report over the sizes of a run's records."""
    slopes = {}
    for name, pairs in points.items():
        pairs = sorted(pairs)
        if len({size for size, _ in pairs}) >= 2:
            slopes[name] = loglog_slope([s for s, _ in pairs], [t for _, t in pairs])[0]
    return slopes


def round_ratios(numerators: Sequence[float], denominators: Sequence[float]) -> list[float]:
    """``numerators[i] / denominators[i]`` of every round both have (one that stopped early,
    at its time budget, has the first rounds), rounds with a zero denominator left out."""
    return [a / b for a, b in zip(numerators, denominators, strict=False) if b > 0]
