"""The multiple-testing decisions of the verdicts and their three-way outcome.

Every comparison of a strategy with the baseline is tested both ways at once (a two-sided
p-value, :func:`pinbench.stats.location.brunner_munzel`) and its direction is the sign of the
estimated relative effect: after the adjustment, a rejected comparison is **faster** or
**slower**, any other **none** (no difference shown). A wrong direction (a slower strategy
called faster, or the reverse) needs the observed statistic in the tail of the other side:
when the permutation distribution is symmetric (equal runs on both sides, the campaigns'
case) that tail is half the two-sided p-value, so it is at most half as likely as a false
rejection of a strategy equal to the baseline, and Holm's step-down keeps its directions
(Shaffer, "Control of directional errors with stagewise multiple test procedures", Ann.
Statist. 8, 1980). The simulation measures it (docs/statistics-error-rates.md). Two
one-sided tests at alpha / 2 each would decide the same; one two-sided test costs one
permutation p-value.

Over a cell, Holm's step-down holds the family-wise error (FWER). Over a whole report the
campaign's ``report_decision`` chooses (:data:`DECISIONS`):

- ``fwer``: Holm's step-down over every test of every cell (Holm, Scand. J. Statist. 6,
  1979): the probability that any faster or slower on the page is wrong is at most alpha;
- ``fdr``: Benjamini and Hochberg's step-up ("Controlling the false discovery rate", JRSS B
  57, 1995): the expected share of wrong ones among those named is at most alpha (under the
  positive dependence of tests that share their cell's baseline, Benjamini and Yekutieli,
  Ann. Statist. 29, 2001), with more power when many strategies really differ.

How the default was chosen: ``python -m pinbench.stats.simulate_report``
(docs/statistics-error-rates.md). Pure Python: the campaign reads :data:`DECISIONS`.
"""
from __future__ import annotations

from collections.abc import Sequence

#: The report-wide decisions a campaign may choose (``report_decision``), and what each holds.
DECISIONS = {"fwer": "family-wise error, Holm's step-down",
             "fdr": "false discovery rate, Benjamini-Hochberg"}
#: The outcome of a comparison: faster, slower than the baseline, or no difference shown.
OUTCOMES = ("faster", "slower", "none")


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given.

    >>> holm([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
    """
    order = sorted(range(len(p_values)), key=lambda k: p_values[k])
    adjusted = [0.0] * len(p_values)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Benjamini and Hochberg's step-up adjusted p-values (q-values), in the order given.

    >>> [round(q, 4) for q in benjamini_hochberg([0.01, 0.04, 0.03])]
    [0.03, 0.04, 0.04]
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda k: p_values[k], reverse=True)
    adjusted = [0.0] * m
    running = 1.0
    for rank, index in enumerate(order):
        running = min(running, m * p_values[index] / (m - rank))
        adjusted[index] = running
    return adjusted


ADJUST = {"fwer": holm, "fdr": benjamini_hochberg}


def outcome(p_adjusted: float | None, effect: float | None, alpha: float) -> str:
    """``faster``, ``slower`` or ``none``: the direction of the estimated relative effect
    (above 1/2: the strategy's runs tend to be faster) where the adjusted p-value is at most
    alpha.

    >>> outcome(0.01, 0.8, 0.05), outcome(0.01, 0.2, 0.05), outcome(0.2, 0.8, 0.05)
    ('faster', 'slower', 'none')
    """
    if p_adjusted is None or effect is None or p_adjusted > alpha or effect == 0.5:
        return "none"
    return "faster" if effect > 0.5 else "slower"


def level(decision: str, alpha: float, tests: int, rejected: int) -> float:
    """The two-sided level a test of the report meets: alpha / tests under ``fwer`` (Holm's
    first step), alpha x max(rejected, 1) / tests under ``fdr`` (Benjamini-Hochberg's, at
    the campaign's own number of rejections)."""
    return alpha * (max(rejected, 1) if decision == "fdr" else 1) / max(tests, 1)
