"""How much one sample is above another: the Hodges-Lehmann shift and its interval.

For two independent samples x (m values) and y (n values), the shift estimate is the median of
the m·n differences x_i − y_j (Hodges and Lehmann, "Estimates of location based on rank
tests", Ann. Math. Statist. 34, 1963), and its interval runs from the k-th smallest to the
k-th largest of those differences, k from the Wilcoxon-Mann-Whitney statistic's exact null
distribution (Moses' interval; Hollander, Wolfe and Chicken, "Nonparametric Statistical
Methods", 3rd ed., 2014, section 4.3). When y is x shifted by a constant, the interval covers
that constant with at least the confidence asked, whatever the distribution; no normality and
no bootstrap. Its width follows the samples' spread, so a difference of a few runs' noise is
not called a difference.

Pure Python (the explain analysis imports no numerical library).
"""
from __future__ import annotations

import functools
import statistics


@functools.lru_cache(maxsize=256)
def mann_whitney_counts(m: int, n: int) -> tuple[int, ...]:
    """How many of the C(m + n, m) orderings of two samples give each value u = 0..m·n of
    the Mann-Whitney statistic (the coefficients of the Gaussian binomial [m + n, m]_q).

    >>> mann_whitney_counts(2, 2)
    (1, 1, 2, 1, 1)
    """
    counts = [1] + [0] * (m * n)
    for i in range(1, m + 1):
        # multiply by (1 - q^(n + i)), then divide by (1 - q^i): exact, step by step
        for u in range(m * n, n + i - 1, -1):
            counts[u] -= counts[u - n - i]
        for u in range(i, m * n + 1):
            counts[u] += counts[u - i]
    return tuple(counts)


def rank_of_bound(m: int, n: int, confidence: float) -> int:
    """k: the interval's bounds are the k-th smallest and k-th largest difference, the
    largest k whose two tails hold at most 1 − confidence; 0 when no k is small enough
    (too few values for that confidence).

    >>> rank_of_bound(6, 6, 0.95), rank_of_bound(3, 3, 0.95)
    (6, 0)
    """
    counts = mann_whitney_counts(m, n)
    total = sum(counts)
    tail, k = 0, 0
    for u, count in enumerate(counts):
        tail += count
        if 2 * tail > (1 - confidence) * total:
            break
        k = u + 1
    return k


def shift_interval(x: list[float], y: list[float], confidence: float
                   ) -> tuple[float, float, float] | None:
    """(estimate, low, high) of the shift x − y; None when either sample is empty or too
    small for an interval at ``confidence``.

    >>> shift_interval([10.0, 11.0, 12.0, 13.0, 14.0, 15.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0], 0.95)
    (10.0, 7.0, 13.0)
    """
    if not x or not y:
        return None
    k = rank_of_bound(len(x), len(y), confidence)
    if k == 0:
        return None
    differences = sorted(a - b for a in x for b in y)
    return statistics.median(differences), differences[k - 1], differences[-k]
