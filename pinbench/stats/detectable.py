"""The smallest speedup a comparison could have detected, from its own noise and runs.

"No significant difference" says little without the difference the runs could have shown.
For a comparison of n_x baseline runs with n_y runs of a strategy, tested at a level a (the
first step of Holm's procedure over m tests: alpha / m), the smallest detectable speedup is
the one found with probability :data:`POWER` by the verdict's test
(:mod:`pinbench.stats.location`), computed as for the Wilcoxon-Mann-Whitney test (Noether,
"Sample size determination for some common nonparametric tests", JASA 82, 1987): the
relative effect theta = P[Y < X] + P[Y = X] / 2 must exceed 1/2 by
(z_(1-a) + z_power) * sqrt((n_x + n_y + 1) / (12 n_x n_y)). With lognormal run times whose log
spreads are s_x and s_y (each estimated robustly, the interquartile range of the log times
over 1.349), a speedup S gives theta = Phi(log S / sqrt(s_x^2 + s_y^2)), so

    S = exp(sqrt(s_x^2 + s_y^2)
            * Phi^-1(1/2 + (z_(1-a) + z_power) sqrt((n_x + n_y + 1) / (12 n_x n_y)))).

With few runs the theta needed comes near 1 (beyond :data:`THETA_MAX`, where the approximation
fails). A bound is given there instead: the speedup that puts every run of the strategy below
every run of the baseline with probability ``power`` (each sample's log spread taken as noise /
sqrt(2)); samples apart with equal spreads reach the level (their p-value is the smallest the
test gives), so a speedup this large is found about that often. None when no speedup can be
detected at all: the smallest p-value the test can give is above a
(:func:`pinbench.stats.attainable.smallest_p`). ``python -m pinbench.stats.simulate`` measures
the power actually reached at the speedup these give (docs/statistics-error-rates.md).
"""
from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import ndtr, ndtri

from pinbench.stats.attainable import smallest_p

#: The probability of finding the effect that "detectable" refers to.
POWER = 0.8
#: Beyond this relative effect the normal approximation is not used.
THETA_MAX = 0.99
#: The interquartile range of a normal distribution, in standard deviations.
IQR_NORMAL = 1.349


def log_spread(times: list[float]) -> float:
    """A robust standard deviation of the log run times: their interquartile range / 1.349."""
    low, high = np.percentile(np.log(times), [25, 75])
    return float(high - low) / IQR_NORMAL


def comparison_noise(baseline: list[float], other: list[float]) -> float:
    """The noise of a comparison: sqrt(s_x^2 + s_y^2) of the two samples' log spreads."""
    return math.hypot(log_spread(baseline), log_spread(other))


def detectable_speedup(noise: float, n_x: int, n_y: int, level: float,
                       power: float = POWER, sides: int = 1) -> float | None:
    """The smallest speedup found with probability ``power`` by a one-sided (``sides`` 2:
    two-sided, the verdicts') test at ``level`` of n_x baseline runs against n_y, with the
    comparison's ``noise`` (:func:`comparison_noise`); None when none is at these n (see
    the module's text).

    >>> round(detectable_speedup(0.05 * 2 ** 0.5, 35, 35, 0.05), 4)
    1.0322
    >>> detectable_speedup(0.05, 3, 3, 0.025) is None
    True
    >>> round(detectable_speedup(0.05 * 2 ** 0.5, 6, 6, 0.05 / 4), 3)  # samples apart
    1.179
    """
    if smallest_p(n_x, n_y, sides) > level:
        return None
    theta = 0.5 + (float(ndtri(1 - level / sides) + ndtri(power))) * math.sqrt(
        (n_x + n_y + 1) / (12 * n_x * n_y))
    if theta > THETA_MAX:
        return math.exp(noise / math.sqrt(2) * _separating_shift(n_x, n_y, power))
    return math.exp(noise * float(ndtri(theta)))


@functools.lru_cache(maxsize=256)
def _separating_shift(n_x: int, n_y: int, power: float) -> float:
    """The shift d (in standard deviations) at which n_y standard normal values all fall
    below n_x values of mean d with probability ``power``: P = integral of the density of
    the smallest of n_x values at t times Phi(t)^n_y, solved for d by bisection."""
    t = np.linspace(-10.0, 20.0, 6001)
    below = ndtr(t) ** n_y
    low, high = 0.0, 20.0
    for _ in range(50):
        shift = (low + high) / 2
        u = t - shift
        smallest = n_x * np.exp(-u * u / 2) / math.sqrt(2 * math.pi) * ndtr(-u) ** (n_x - 1)
        if float(np.sum(smallest * below) * (t[1] - t[0])) < power:
            low = shift
        else:
            high = shift
    return (low + high) / 2
