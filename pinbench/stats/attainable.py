"""What a comparison of n runs against n runs can reach: its smallest p-value, and the least
repetitions that can reach a level.

The verdict's test (:mod:`pinbench.stats.location`) is a permutation test: its p-value is at
least one over the number of relabellings of the pooled runs, C(n_x + n_y, n_x) (1/20 at
3 runs each, 1/70 at 4), and at least one over the random relabellings drawn when there are
more (1 / (:data:`REFERENCE` + 1) for untied samples, 1 / :data:`DRAWS` for tied ones). The
verdicts' test is two-sided (faster or slower): two relabellings put the samples apart, so
its smallest p-value is twice that (1/10 at 3 runs each). Samples apart reach it when their
spreads are equal; the test's correction for unequal spreads raises it otherwise, at most to
:func:`reachable_p`. Holm's step-down over m tests rejects nothing unless some p-value is at
most alpha / m: two-sided, 3 runs each can never reject, whatever the speedup. The campaign
reads this before measuring (:mod:`pinbench.workflow.campaign`), the analysis after
(:func:`too_few`).

Pure Python: reading a campaign imports no numerical library.
"""
from __future__ import annotations

import math

#: Every relabelling is enumerated up to this many; beyond, the test draws at most
#: :data:`DRAWS` at random.
EXACT_LIMIT = 20000
#: The most random relabellings the test draws for tied samples (its smallest p-value
#: there beyond EXACT_LIMIT).
DRAWS = 20000
#: Random relabellings in the reference distribution of untied samples
#: (:mod:`pinbench.stats.location`): its smallest p-value there is 1 / (REFERENCE + 1).
REFERENCE = 2 ** 18


def smallest_p(n_x: int, n_y: int, sides: int = 1) -> float:
    """The smallest p-value the test can give for n_x runs against n_y, one- or two-sided
    (untied samples: the best case).

    >>> smallest_p(3, 3), smallest_p(4, 4), smallest_p(3, 3, sides=2)
    (0.05, 0.014285714285714285, 0.1)
    >>> smallest_p(35, 35) == 1 / (REFERENCE + 1)
    True
    """
    return max(sides / math.comb(n_x + n_y, n_x), 1 / (REFERENCE + 1))


def reachable_p(n_x: int, n_y: int, sides: int = 1) -> float:
    """The smallest p-value that n_x runs against n_y reach whatever their observed spreads:
    :func:`smallest_p` after the test's correction for unequal spreads at its most (read
    at n_x + n_y - 2 degrees of freedom, taken back at min(n_x, n_y) - 1, the least the
    Welch-Satterthwaite degrees of freedom can be). Samples apart with equal observed
    spreads reach :func:`smallest_p`; these reach this one in any case.

    >>> round(reachable_p(5, 5, sides=2), 4), round(reachable_p(8, 8, sides=2), 5)
    (0.0246, 0.00137)
    """
    p = smallest_p(n_x, n_y, sides)
    low_df, high_df = min(n_x, n_y) - 1, n_x + n_y - 2
    if low_df < 1 or low_df == high_df:
        return p
    two = p * 2 / sides  # as a two-sided p-value
    low, high = 0.0, 1e4  # the t quantile of ``two`` at high_df, by bisection
    for _ in range(80):  # the halves are adjacent floats after about 64
        middle = (low + high) / 2
        low, high = (middle, high) if _t_two_sided(middle, high_df) > two else (low, middle)
    return max(p, _t_two_sided(high, low_df) * sides / 2)


def _t_two_sided(t: float, df: int) -> float:
    """P[|T| > t] for Student's t with an integer ``df`` (Abramowitz and Stegun 26.7.3-4)."""
    theta = math.atan(t / math.sqrt(df))
    cos2, term = math.cos(theta) ** 2, 1.0
    if df % 2:
        total = 0.0
        if df > 1:
            total = term
            for k in range(3, df - 1, 2):
                term *= cos2 * (k - 1) / k
                total += term
        within = 2 / math.pi * (theta + math.sin(theta) * math.cos(theta) * total)
    else:
        total = term
        for k in range(2, df - 1, 2):
            term *= cos2 * (k - 1) / k
            total += term
        within = math.sin(theta) * total
    return max(1.0 - within, 0.0)


def least_repetitions(tests: int, alpha: float, limit: int = 1000, sides: int = 1
                      ) -> int | None:
    """The least runs per strategy with which one of ``tests`` tests can be significant
    after Holm's step-down at ``alpha``, whatever the samples' observed spreads
    (:func:`reachable_p`; None: not within ``limit``, or not at all).

    >>> least_repetitions(1, 0.05), least_repetitions(2, 0.05), least_repetitions(144, 0.05)
    (4, 5, 9)
    >>> least_repetitions(1, 0.05, sides=2), least_repetitions(72, 0.05, sides=2)
    (5, 9)
    """
    level = alpha / max(tests, 1)
    if level < 1 / (REFERENCE + 1):  # below any p-value the test gives
        return None
    return next((n for n in range(2, limit + 1) if reachable_p(n, n, sides) <= level), None)


def too_few(n_x: int, n_y: int, cell_tests: int, report_tests: int, alpha: float,
            decision: str = "fwer") -> str:
    """What n_x runs against n_y are too few for: the decisions of the verdicts' two-sided
    test (a cell's, Holm over ``cell_tests``; the report's, over ``report_tests`` by
    ``decision``: Holm's first level alpha / tests, or Benjamini-Hochberg's best, alpha)
    that cannot name any strategy faster or slower whatever the difference, why, and the
    runs per strategy with which every level can whatever the samples' observed spreads
    (:func:`reachable_p`; "" when each level can).

    >>> said = too_few(4, 4, 4, 72, 0.05)
    >>> said[:99]
    'with 4 runs against 4 the smallest p-value is 0.029: no strategy can be found faster or slower than'
    >>> said[99:]
    ' the baseline in a cell (4 tests, Holm at 0.05: at most 0.05/4) nor over the whole report (72 \
tests, Holm at 0.05: at most 0.05/72); 9 runs per strategy can in a cell and over the whole report'
    >>> too_few(6, 6, 4, 72, 0.05, "fdr")
    ''
    """
    smallest = smallest_p(n_x, n_y, sides=2)
    fdr = decision == "fdr"
    levels = [("in a cell", cell_tests, cell_tests, "Holm"),
              ("over the whole report", report_tests, 1 if fdr else report_tests,
               "Benjamini-Hochberg" if fdr else "Holm")]
    failing = [f"{where} ({tests} test{'s' if tests != 1 else ''}, {rule} at {alpha:.2g}: "
               f"at most {alpha:.2g}" + (f"/{divisor})" if divisor > 1 else ")")
               for where, tests, divisor, rule in levels
               if tests and smallest > alpha / divisor]
    if not failing:
        return ""
    least = least_repetitions(max(divisor for _, tests, divisor, _ in levels if tests), alpha,
                              sides=2)
    return (f"with {n_x} runs against {n_y} the smallest p-value is {smallest:.2g}: no strategy "
            "can be found faster or slower than the baseline " + " nor ".join(failing) + "; "
            + (f"{least} runs per strategy can in a cell and over the whole report" if least
               else "no number of runs can, with this many tests"))
