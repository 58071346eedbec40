"""The headline verdict of each cell: which strategy, if any, is faster than the baseline.

A cell here is one (machine, benchmark, threads): the family of comparisons of every
strategy with the baseline. Each comparison alone is the study's Speedup-Test
(:mod:`pinbench.stats.tables`, unchanged); naming the best of k strategies from k tests at level
alpha each would call a winner far more often than alpha when no strategy differs (26% of
cells for 9 strategies, n = 35). So the headline follows three rules.

1. **One experiment, one test.** Strategies whose runs all used the same placement, or
   placements equal up to a symmetry of the machine's tree
   (:func:`pinbench.place.symmetry.canonical_form`), ran one experiment: their runs are
   pooled and tested once, and the verdict names the strategies it stands for. A strategy
   that drew a fresh placement per run (``random``) ran different placements and is never
   merged; one identical to the baseline is not tested at all.
2. **One pre-declared test per comparison**: the one-sided Wilcoxon-Mann-Whitney test of
   the Speedup-Test's median question (H1: a baseline run tends to be slower than a run of
   the strategy, i.e. P[X > Y] > 1/2), exact or normal with tie and continuity correction
   as R computes it (:func:`pinbench.stats.speeduptest.wilcoxon_test`). It needs no normality, is
   exact under H0 (both samples from one distribution) and exists for every cell with runs
   on both sides, where the mean test may be "not applied".
3. **Family-wise error by Holm's step-down** (Holm, "A simple sequentially rejective
   multiple test procedure", Scand. J. Statist. 6, 1979) over the family's tests: the
   probability of naming any winner when no strategy differs from the baseline is at most
   alpha, whatever the dependence between the tests (they share the baseline's runs).

Among the strategies Holm declares faster, the **best** is the one with the largest median
speedup (ties: the smaller adjusted p-value). It is called a **clear** winner only when it is
also significantly faster than the runner-up, the tested strategy with the next largest
median speedup (the same one-sided test at alpha, best against runner-up); otherwise the
report says the best is not distinguishable from it.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

import numpy as np

from pinbench.results.runs import RunRecord
from pinbench.stats.speeduptest import wilcoxon_test

#: key(machine, planned PU list) -> what identifies the experiment (default: the list itself)
PlacementKey = Callable[[str, tuple[int, ...]], Hashable]


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given.

    >>> holm([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
    """
    order = np.argsort(p_values, kind="stable")
    adjusted = [0.0] * len(p_values)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


@dataclass
class Experiment:
    """One distinct experiment of a cell: the strategies that ran it and their pooled times."""

    strategies: list[str]
    fixed: bool  #: one planned placement in every run (not ``os``, not a draw per run)
    times: list[float] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.strategies[0]


def experiments(records: list[RunRecord], key: PlacementKey,
                order: Sequence[str] = ()) -> list[Experiment]:
    """The cell's strategies grouped by what they ran, in ``order`` (the campaign's), then
    in the order they first appear in ``records``.

    A strategy whose runs all planned one PU list is identified by ``key`` of that list; any
    other (``os``, not bound; ``random``, a draw per run) is an experiment of its own.
    """
    rank = {strategy: k for k, strategy in enumerate(order)}
    plans: dict[str, set[str]] = {}
    stood_for: dict[str, list[str]] = {}  # measured once for these too (the runs say so)
    for record in sorted(records, key=lambda r: rank.get(r.strategy, len(rank))):
        plans.setdefault(record.strategy, set()).add(record.pus)
        stood_for.setdefault(record.strategy, record.stands_for.split())
    groups: dict[Hashable, Experiment] = {}
    for strategy, pus in plans.items():
        fixed = len(pus) == 1 and next(iter(pus)) != ""
        ident = key(records[0].machine, tuple(map(int, next(iter(pus)).split()))) \
            if fixed else ("own", strategy)
        groups.setdefault(ident, Experiment([], fixed)).strategies += [strategy,
                                                                        *stood_for[strategy]]
    for group in groups.values():
        group.strategies.sort(key=lambda s: rank.get(s, len(rank)))
    by_strategy = {s: group for group in groups.values() for s in group.strategies}
    for record in records:
        if record.counts:
            by_strategy[record.strategy].times.append(record.time_s)
    return list(groups.values())


def _coincide(groups: list[Experiment], base: Experiment | None) -> bool:
    """Whether every strategy with a fixed placement ran one experiment (two or more of them)."""
    fixed = [g for g in groups if g.fixed]
    return len(fixed) == 1 and len(fixed[0].strategies) - (fixed[0] is base) >= 2


def _median(times: list[float]) -> float:
    return float(np.median(times))


def cell_verdict(records: list[RunRecord], baseline: str, alpha: float,
                 key: PlacementKey = lambda machine, pus: pus, order: Sequence[str] = ()) -> dict:
    """The verdict of one (machine, benchmark, threads) from its runs; see the module's rules.

    ``order``: the campaign's strategies, so the first of identical ones names the experiment.

    Returns the verdict row (:data:`VERDICT_COLUMNS` without the cell's names) and, under
    ``"comparisons"``, one row per strategy (:data:`COMPARISON_COLUMNS`, same).
    """
    groups = experiments(records, key, order)
    base = next((g for g in groups if baseline in g.strategies), None)
    tested = [g for g in groups if g is not base and len(g.times) >= 3]
    usable = base is not None and len(base.times) >= 3
    raw = [wilcoxon_test(np.array(base.times), np.array(g.times))[0] for g in tested] \
        if usable else []
    adjusted = holm(raw) if raw else []
    speedup = {g.name: _median(base.times) / _median(g.times) for g in tested} if usable else {}
    faster = [(g, p, q) for g, p, q in zip(tested, raw, adjusted) if q <= alpha]
    row = {"baseline": baseline, "tests": len(raw), "best": "", "stands_for": "",
           "speedup_median": None, "p_raw": None, "p_adjusted": None, "runner_up": "",
           "p_best_vs_runner_up": None, "clear_winner": False,
           "identical": "; ".join(" = ".join(g.strategies) for g in groups
                                  if len(g.strategies) > 1),
           "coincide": _coincide(groups, base)}
    if faster:
        best, p, q = max(faster, key=lambda item: (speedup[item[0].name], -item[2]))
        row.update(best=best.name, stands_for=" ".join(best.strategies[1:]),
                   speedup_median=speedup[best.name], p_raw=p, p_adjusted=q)
        others = sorted((g for g in tested if g is not best), key=lambda g: -speedup[g.name])
        if others:
            second = others[0]
            versus = wilcoxon_test(np.array(second.times), np.array(best.times))[0]
            row.update(runner_up=second.name, p_best_vs_runner_up=versus,
                       clear_winner=versus <= alpha)
        else:
            row["clear_winner"] = True
    raw_of = {g.name: (p, q) for g, p, q in zip(tested, raw, adjusted)}
    row["comparisons"] = [
        {"strategy": strategy, "experiment": group.name,
         "same_as_baseline": group is base and strategy != baseline,
         "p_raw": raw_of.get(group.name, (None, None))[0],
         "p_adjusted": raw_of.get(group.name, (None, None))[1],
         "faster": any(group is g for g, _, _ in faster)}
        for group in groups for strategy in group.strategies]
    return row
