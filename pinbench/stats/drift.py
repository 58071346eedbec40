"""Drift along the run order of a measurement job, and whether the run order protected it.

The runs of one job (machine, benchmark, threads) ran one after the other. If the machine
drifts (a warming or cooling processor, another job starting, the first runs paying for cold
caches and page faults), run times trend along the order. Each run's time is divided by the
median of its strategy's runs, so that the strategies' own differences do not look like a
trend, and Kendall's tau between the order and these ratios is tested (Mann's trend test:
H. B. Mann, "Nonparametric tests against trend", Econometrica 13, 1945; two-sided). A step
(the first 50 runs 3x slower) is a trend to this test as much as a slope. Under no drift the
ratios are exchangeable along the order and the flag is raised at rate alpha.

Drift biases a comparison only if it falls unequally on the strategies. With the interleaved
order (the default) every strategy's runs spread over the whole job; back to back, each
strategy owns one stretch of time. The job's order is called **balanced** when the strategies'
order positions do not differ (Kruskal-Wallis, p > alpha): then drift adds noise to every
strategy alike instead of a bias to some.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np
from scipy import stats

from pinbench.results.runs import RunRecord


def drift(records: list[RunRecord], alpha: float) -> dict:
    """``drift`` (flag), ``drift_p``, ``drift_tau``, ``order_balanced`` of one job's runs.

    Only runs that count are used; with fewer than 4, nothing is tested (None).
    """
    runs = sorted((r for r in records if r.counts), key=lambda r: r.order_index)
    found = {"drift": False, "drift_p": None, "drift_tau": None, "order_balanced": None}
    if len(runs) < 4:
        return found
    by_strategy: dict[str, list[float]] = defaultdict(list)
    for run in runs:
        by_strategy[run.strategy].append(run.time_s)
    median = {s: float(np.median(times)) for s, times in by_strategy.items()}
    ratios = [run.time_s / median[run.strategy] for run in runs]
    if np.ptp(ratios) > 0:
        tau, p = stats.kendalltau([run.order_index for run in runs], ratios)
        found.update(drift=bool(p <= alpha), drift_p=float(p), drift_tau=float(tau))
    positions = defaultdict(list)
    for run in runs:
        positions[run.strategy].append(run.order_index)
    groups = [values for values in positions.values() if len(values) > 1]
    if len(groups) > 1 and len({v for values in groups for v in values}) > 1:
        found["order_balanced"] = bool(stats.kruskal(*groups).pvalue > alpha)
    return found
