"""What a comparison of n runs against n runs can reach: its smallest p-value, and the least
repetitions that can reach a level.

The verdict's test (:mod:`pinbench.stats.location`) is a permutation test: its p-value is at
least one over the number of relabellings of the pooled runs, C(n_x + n_y, n_x) (1/20 at
3 runs each, 1/70 at 4), and at least one over the random relabellings drawn when there are
more (:data:`DRAWS`). Samples apart reach it when their spreads are equal; the test's
correction for unequal spreads raises it otherwise, so it is the best case. Holm's step-down
over m tests rejects nothing unless some p-value is at most alpha / m: with 3 runs each and
two tests at 0.05 it can never reject, whatever the speedup. The campaign reads this before
measuring (:mod:`pinbench.workflow.campaign`).

Pure Python: reading a campaign imports no numerical library.
"""
from __future__ import annotations

import math

#: Every relabelling is enumerated up to this many; beyond, the test draws at most
#: :data:`DRAWS` at random.
EXACT_LIMIT = 20000
#: The most random relabellings the test draws (its smallest p-value beyond EXACT_LIMIT).
DRAWS = 20000


def smallest_p(n_x: int, n_y: int) -> float:
    """The smallest p-value the test can give for n_x runs against n_y.

    >>> smallest_p(3, 3), smallest_p(4, 4)
    (0.05, 0.014285714285714285)
    >>> smallest_p(35, 35) == 1 / DRAWS
    True
    """
    return max(1 / math.comb(n_x + n_y, n_x), 1 / DRAWS)


def least_repetitions(tests: int, alpha: float, limit: int = 1000) -> int | None:
    """The least runs per strategy with which one of ``tests`` tests can be significant
    after Holm's step-down at ``alpha`` (None: not within ``limit``, or not at all).

    >>> least_repetitions(1, 0.05), least_repetitions(2, 0.05), least_repetitions(144, 0.05)
    (3, 4, 7)
    """
    level = alpha / max(tests, 1)
    return next((n for n in range(2, limit + 1) if smallest_p(n, n) <= level), None)
