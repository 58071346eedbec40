"""Drift along the run order of a measurement job, and whether the run order protects it.

The runs of one job (machine, benchmark, threads) ran one after the other. If the machine
drifts (a warming or cooling processor, another job starting, the first runs paying for cold
caches and page faults), run times trend along the order. Each run's time is divided by the
median of its strategy's runs, so that the strategies' own differences do not look like a
trend, and these ratios are tested for a monotonic trend along the order by Mann-Kendall's
test (H. B. Mann, "Nonparametric tests against trend", Econometrica 13, 1945; two-sided). A
step (the first 50 runs 3x slower) is a trend to this test as much as a slope.

Run times are not independent: a busy spell slows a few runs in a row. Mann-Kendall's variance
assumes independent runs, and with autocorrelated noise (AR(1), lag-1 correlation 0.5) and
no trend it flagged 17-26% of jobs. So its variance is multiplied by the effective-sample-size
factor of Yue and Wang ("The Mann-Kendall test modified by effective sample size to detect
trend in serially correlated hydrological series", Water Resources Management 18, 2004),
1 + 2 sum_k (1 - k/n) rho^k, with rho the lag-1 autocorrelation of the ranks of the
series detrended by Sen's slope, corrected for its small-sample bias ((n rho + 1) / (n - 4))
and taken one standard error (sqrt((1 - rho^2) / n)) above, so that an underestimated
correlation does not make the test liberal; the statistic is referred to Student's t with
n / factor - 2 degrees of freedom. Simulated without trend, this flags at most alpha of the
jobs with AR(1) noise of lag-1 correlation 0 to 0.8 and 20 to 315 runs (below alpha without
correlation: the price of the margin), docs/statistics-error-rates.md.

A report holds many jobs: :func:`across_jobs` adjusts the jobs' p-values by Holm's step-down,
so that the drift marks of a report hold the family-wise error at alpha.

Drift biases a comparison only if it falls unequally on the strategies. With the interleaved
order (the default, shuffled with the campaign's seed) every strategy's runs spread over the
whole job, and a drift adds noise to each alike; back to back, each strategy owns one
stretch of time and a drift becomes a difference between strategies. ``run_order`` says
which the job's runs were (back to back when every strategy's runs are consecutive); it is
read from the order, not tested.
"""
from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
from scipy import stats

from pinbench.results.runs import RunRecord
from pinbench.stats.decisions import holm


def sen_slope(values: np.ndarray) -> float:
    """Sen's slope: the median of the slopes between every two points of the series."""
    first, second = np.triu_indices(len(values), 1)
    return float(np.median((values[second] - values[first]) / (second - first)))


def _correction(values: np.ndarray) -> float:
    """Yue and Wang's factor on Mann-Kendall's variance (see the module's text)."""
    n = len(values)
    ranks = stats.rankdata(values - sen_slope(values) * np.arange(n))
    ranks -= ranks.mean()
    rho = float(ranks[1:] @ ranks[:-1] / (ranks @ ranks))
    rho = min(max((n * rho + 1) / (n - 4), 0.0), 0.99)
    rho = min(rho + math.sqrt((1 - rho ** 2) / n), 0.99)
    lags = np.arange(1, n)
    return float(1 + 2 * np.sum((1 - lags / n) * rho ** lags))


def trend_test(values: list[float]) -> tuple[float, float]:
    """(Kendall's tau of the values against their order, two-sided p-value) of the
    autocorrelation-robust Mann-Kendall test (see the module's text); at least 5 values."""
    series = np.asarray(values, dtype=float)
    n = len(series)
    tau = float(stats.kendalltau(np.arange(n), series).statistic)
    pairs = n * (n - 1) / 2
    _, tied = np.unique(series, return_counts=True)
    score = tau * math.sqrt(pairs * (pairs - float(np.sum(tied * (tied - 1) / 2))))
    variance = (n * (n - 1) * (2 * n + 5) - float(np.sum(tied * (tied - 1) * (2 * tied + 5)))) / 18
    factor = _correction(series)
    z = (score - np.sign(score)) / math.sqrt(variance * factor)
    return tau, float(2 * stats.t.sf(abs(z), max(n / factor - 2, 1)))


def drift(records: list[RunRecord]) -> dict:
    """``drift_p``, ``drift_tau`` and ``run_order`` of one job's runs (``drift`` and
    ``drift_p_adjusted`` come from :func:`across_jobs`).

    Only runs that count are used; with fewer than 5, nothing is tested (None).
    """
    runs = sorted((r for r in records if r.counts), key=lambda r: r.order_index)
    found = {"drift": False, "drift_p": None, "drift_p_adjusted": None, "drift_tau": None,
             "run_order": run_order(runs)}
    if len(runs) < 5:
        return found
    by_strategy: dict[str, list[float]] = defaultdict(list)
    for run in runs:
        by_strategy[run.strategy].append(run.time_s)
    median = {s: float(np.median(times)) for s, times in by_strategy.items()}
    ratios = [run.time_s / median[run.strategy] for run in runs]
    if np.ptp(ratios) > 0:
        tau, p = trend_test(ratios)
        found.update(drift_p=p, drift_tau=tau)
    return found


def run_order(runs: list[RunRecord]) -> str:
    """``back-to-back`` when every strategy's runs (in order) are consecutive, else
    ``interleaved``; "" with fewer than two strategies."""
    strategies = [run.strategy for run in runs]
    if len(set(strategies)) < 2:
        return ""
    stretches = sum(a != b for a, b in zip(strategies, strategies[1:])) + 1
    return "back-to-back" if stretches == len(set(strategies)) else "interleaved"


def across_jobs(rows: list[dict], alpha: float) -> None:
    """Holm's step-down over the jobs' ``drift_p`` (in place): ``drift_p_adjusted`` and the
    ``drift`` flag (adjusted p-value at most alpha)."""
    tested = [row for row in rows if row["drift_p"] is not None]
    for row, adjusted in zip(tested, holm([row["drift_p"] for row in tested])):
        row.update(drift_p_adjusted=adjusted, drift=adjusted <= alpha)
