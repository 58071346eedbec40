"""When a measurement job may stop before its last repetition: a rule on precision alone.

Georges, Buytaert and Eeckhout ("Statistically rigorous Java performance evaluation",
OOPSLA 2007) repeat a measurement until its confidence interval is narrow enough. The rule
here does the same per strategy and never looks at the differences between strategies,
only at how precisely each strategy's own median is known, so it cannot steer a comparison
towards significance; ``python -m pinbench.stats.simulate --stopping`` measures the false-positive
rate it leaves and the runs it saves.

The job runs in rounds: every measured strategy once per round, in a seeded random order
within the round (blocked randomisation, so a drift of the machine spreads over every
strategy). From round ``min`` on, after each round the job stops when, for every strategy,
the distribution-free confidence interval of its median run time has a half-width of at most
``precision`` times the median: the order statistics at the binomial(n, 1/2) quantiles
(Conover, "Practical Nonparametric Statistics", 3rd ed., 1999, section 3.2; at 95% it exists
from 6 runs on, hence ``min`` >= 6). At the campaign's ``repetitions`` it stops anyway.

Pure Python: the measuring process imports no numerical library.
"""
from __future__ import annotations

import math
import random


def median_interval(times: list[float], confidence: float) -> tuple[float, float] | None:
    """The distribution-free confidence interval of the median, or None for too few times.

    With the times sorted, it is [x(k), x(n + 1 - k)] for the largest k such that
    P[Binomial(n, 1/2) < k] <= (1 - confidence) / 2.

    >>> median_interval([float(t) for t in range(1, 11)], 0.95)
    (2.0, 9.0)
    >>> median_interval([1.0, 2.0, 3.0, 4.0, 5.0], 0.95) is None
    True
    """
    n = len(times)
    tail, below, k = (1 - confidence) / 2, 0.0, 0
    while k < n and below + math.comb(n, k) / 2 ** n <= tail:
        below += math.comb(n, k) / 2 ** n
        k += 1
    if k == 0:
        return None
    ordered = sorted(times)
    return ordered[k - 1], ordered[n - k]


def fewest_for_interval(confidence: float) -> int:
    """The fewest runs that give an interval of the median at ``confidence``
    (:func:`median_interval`).

    >>> fewest_for_interval(0.95), fewest_for_interval(0.99)
    (6, 8)
    """
    n = 1
    while median_interval([0.0] * n, confidence) is None:
        n += 1
    return n


def precise_enough(samples: list[list[float]], precision: float, confidence: float) -> bool:
    """Whether every sample's median is known to within ``precision`` (a share of it)."""
    for times in samples:
        interval = median_interval(times, confidence)
        if interval is None:
            return False
        median = sorted(times)[len(times) // 2]
        if (interval[1] - interval[0]) / 2 > precision * median:
            return False
    return True


def rounds_order(strategies: list[str], rounds: int, seed: int) -> list[tuple[str, int]]:
    """(strategy, repetition) pairs round by round, each round in a seeded random order."""
    rng = random.Random(seed)
    pairs = []
    for repetition in range(rounds):
        shuffled = list(strategies)
        rng.shuffle(shuffled)
        pairs += [(strategy, repetition) for strategy in shuffled]
    return pairs
