"""Confidence interval of a proportion: the share of benchmarks a strategy accelerates.

The interval is Wilson's score interval with continuity correction, computed as
R's ``prop.test(a, b, conf.level = level)`` does (Newcombe 1998, method 4), the
interval the Speedup-Test report uses for "a of b benchmarks are faster".
"""
from __future__ import annotations

import math

from scipy.stats import norm


def wilson_interval(a: int, b: int, level: float = 0.95) -> tuple[float, float]:
    """(low, high) for a successes out of b, as R's ``prop.test(a, b)$conf.int``.

    R's continuity correction is ``min(0.5, |a - b/2|)``: it vanishes when a is
    exactly half of b, and so does it here. 9 of 9 at 95% gives (0.629, 1).
    """
    if not 0 <= a <= b or b == 0:
        raise ValueError(f"need 0 <= a <= b and b > 0, got a={a}, b={b}")
    z = norm.ppf((1 + level) / 2)
    estimate = a / b
    yates = min(0.5, abs(a - b * 0.5))
    z22n = z * z / (2 * b)

    def bound(p: float, sign: int) -> float:
        spread = z * math.sqrt(p * (1 - p) / b + z22n / (2 * b))
        return (p + z22n + sign * spread) / (1 + 2 * z22n)

    upper = estimate + yates / b
    lower = estimate - yates / b
    high = 1.0 if upper >= 1 else bound(upper, +1)
    low = 0.0 if lower <= 0 else bound(lower, -1)
    return float(low), float(high)


def approximation_warning(a: int, b: int) -> str:
    """A warning when the normal approximation behind the interval is poor (a(1 - a/b) <= 5)."""
    if a * (1 - a / b) <= 5:
        return f"{a} of {b}: too few benchmarks for the normal approximation (a(1-a/b) <= 5)"
    return ""


def benchmarks_needed(a: int, b: int, precision: float, level: float = 0.95) -> int:
    """How many benchmarks estimate the proportion a/b to within ``precision``:
    ceil(z^2 c(1-c) / r^2), c = a/b, the Speedup-Test report's rule.

    When a is 0 or b, c(1-c) is 0 and the rule would answer 0 benchmarks whatever b; c is
    then the share within the interval of a/b (:func:`wilson_interval`) nearest 1/2: of the
    shares the b benchmarks cannot rule out, the hardest to estimate.

    >>> benchmarks_needed(5, 10, 0.1), benchmarks_needed(0, 10, 0.1), benchmarks_needed(10, 10, 0.1)
    (97, 87, 87)
    """
    z = norm.ppf((1 + level) / 2)
    share = a / b
    if a in (0, b):
        low, high = wilson_interval(a, b, level)
        share = min(high, 0.5) if a == 0 else max(low, 0.5)
    return math.ceil(z * z * share * (1 - share) / precision ** 2)
