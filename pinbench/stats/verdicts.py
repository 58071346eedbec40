"""The headline verdict of each cell: which strategy, if any, is faster than the baseline.

A cell here is one (machine, benchmark, threads): the family of comparisons of every
strategy with the baseline. Each comparison alone is the study's Speedup-Test
(:mod:`pinbench.stats.tables`, unchanged); naming the best of k strategies from k tests at level
alpha each would call a winner far more often than alpha when no strategy differs (26% of
cells for 9 strategies, n = 35). So the headline follows three rules.

1. **One experiment, one test.** Strategies whose runs all used the same placement, or
   placements equal up to a symmetry of the machine's tree, ran one experiment
   (:func:`pinbench.place.symmetry.same_as`, which also decides which strategies a job
   measures once): their runs are pooled and tested once, and the verdict names the
   strategies it stands for. A strategy that drew a fresh placement per run (``random``)
   ran different placements and is never merged; one identical to the baseline is not
   tested at all.
2. **One pre-declared test per comparison**, of the Speedup-Test's question "does a run of
   the strategy tend to be faster (or slower) than one of the baseline?": Brunner and
   Munzel's test, two-sided, by permutation (:func:`pinbench.stats.location.brunner_munzel`),
   its direction that of the estimated relative effect, so that each comparison's outcome
   is faster, slower or none (:mod:`pinbench.stats.decisions`). It needs no
   normality, is exact when both samples come from one distribution, stays valid when the
   spreads differ (the Wilcoxon-Mann-Whitney test does not), and exists for every cell with
   runs on both sides, where the mean test may be "not applied".
3. **Family-wise error by Holm's step-down** (Holm, "A simple sequentially rejective
   multiple test procedure", Scand. J. Statist. 6, 1979) over the family's tests: the
   probability of naming any winner when no strategy differs from the baseline is at most
   alpha, whatever the dependence between the tests (they share the baseline's runs).

Among the strategies Holm declares faster, the **best** is the one with the largest median
speedup (ties: the smaller adjusted p-value). It is called a **clear** winner only when it is
also faster than every other tested experiment, each by the same test at alpha / 2 (the
direction of each was chosen after seeing which is faster, so both directions count): with
two strategies equally faster, one is called clear in at most alpha of the cells. The
reported ``p_best_vs_others`` is twice the largest of these one-sided p-values (clear: at
most alpha); ``runner_up`` names the experiment with the next largest median speedup.

The cell's ``outcome`` is ``faster`` when Holm names a strategy faster, ``slower`` when none
is and the experiment with the largest median speedup is named slower (the best placement
is slower than the baseline: pinning hurts here), else ``none``.

These hold per cell. Over a report of many cells, :func:`report_wide` decides over every
cell's tests at once, by the campaign's ``report_decision`` (Holm's family-wise error or
Benjamini-Hochberg's false discovery rate): its decisions are what "the report names a
winner in k of n cells" may say.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from pinbench.place.policies import NAMES as POLICY_NAMES
from pinbench.place.symmetry import same_as
from pinbench.results.runs import RunRecord
from pinbench.stats.attainable import smallest_p, too_few
from pinbench.stats.decisions import ADJUST, holm, level, outcome
from pinbench.stats.detectable import comparison_noise, detectable_speedup
from pinbench.stats.location import brunner_munzel, relative_effect
from pinbench.stats.sample_size import MIN_N

#: Random relabellings of a clear-winner test: only "at most alpha / 2?" is asked of it.
CLEAR_DRAWS = 2000
#: key(machine, planned PU list) -> what identifies the experiment (default: the list itself)
PlacementKey = Callable[[str, tuple[int, ...]], Hashable]


@dataclass
class Experiment:
    """One distinct experiment of a cell: the strategies that ran it and their pooled times."""

    strategies: list[str]
    fixed: bool  #: one planned placement in every run (not ``os``, not a draw per run)
    times: list[float] = field(default_factory=list)
    rounds: list[int] = field(default_factory=list)  #: each time's repetition

    @property
    def name(self) -> str:
        return self.strategies[0]


def experiments(records: list[RunRecord], key: PlacementKey,
                order: Sequence[str] = ()) -> list[Experiment]:
    """The cell's strategies grouped by what they ran, in ``order`` (the campaign's), then
    in the order they first appear in ``records``.

    A strategy whose runs all planned one PU list is identified by ``key`` of that list, and
    is one experiment with the strategies of the same key
    (:func:`pinbench.place.symmetry.same_as`); any other (``os``, not bound; ``random``, a
    draw per run; a runtime's policy, bound by the runtime; a placement per region, whose runs
    name ``regions``) is an experiment of its own.
    """
    rank = {strategy: k for k, strategy in enumerate(order)}
    plans: dict[str, set[tuple[str, str]]] = {}  # strategy -> its runs' (pus, regions)
    stood_for: dict[str, list[str]] = {}  # measured once for these too (the runs say so)
    for record in sorted(records, key=lambda r: rank.get(r.strategy, len(rank))):
        plans.setdefault(record.strategy, set()).add((record.pus, record.regions))
        stood_for.setdefault(record.strategy, record.stands_for.split())
    keys: dict[str, Hashable | None] = {}
    for strategy, planned in plans.items():
        pus, regions = next(iter(planned))
        # a runtime's policy (its places' PUs, or threads bound by the runtime) stands alone,
        # and so does a placement per region
        fixed = len(planned) == 1 and pus != "" and not regions and strategy not in POLICY_NAMES
        keys[strategy] = key(records[0].machine, tuple(map(int, pus.split()))) if fixed else None
    first = same_as(keys)
    groups: dict[str, Experiment] = {}
    for strategy, ident in keys.items():
        group = groups.setdefault(first.get(strategy, strategy), Experiment([], ident is not None))
        group.strategies += [strategy, *stood_for[strategy]]
    for group in groups.values():
        group.strategies.sort(key=lambda s: rank.get(s, len(rank)))
    by_strategy = {s: group for group in groups.values() for s in group.strategies}
    for record in records:
        if record.counts:
            by_strategy[record.strategy].times.append(record.time_s)
            by_strategy[record.strategy].rounds.append(record.repetition)
    return list(groups.values())


def cell_tests(same_as: Mapping[str, str], baseline: str) -> int:
    """The tests one cell adds to the report-wide decision (:func:`report_wide`): its
    experiments but the baseline's, from ``same_as``, each of the cell's strategies -> the
    experiment it ran (the first strategy of its group). The sequential design's jobs count
    the report's tests so before measuring (from the cells' placements:
    :func:`pinbench.workflow.jobsettings.report_tests`), the analysis from the runs.

    >>> cell_tests({"os": "os", "compact": "compact", "scatter": "compact",
    ...             "random": "random"}, "os")
    2
    """
    return len(set(same_as.values()) - {same_as.get(baseline, baseline)}) \
        if baseline in same_as else 0


def _coincide(groups: list[Experiment], base: Experiment | None) -> bool:
    """Whether every strategy with a fixed placement ran one experiment (two or more of them)."""
    fixed = [g for g in groups if g.fixed]
    return len(fixed) == 1 and len(fixed[0].strategies) - (fixed[0] is base) >= 2


def _median(times: list[float]) -> float:
    return float(np.median(times))


def _faster_than_every_other(best: Experiment, others: list[Experiment], alpha: float
                             ) -> float:
    """Twice the largest one-sided p-value of ``best`` against each of ``others``: the best
    is a clear winner when this is at most alpha (see the module's text)."""
    worst = max(brunner_munzel(np.array(g.times), np.array(best.times), CLEAR_DRAWS)[0]
                for g in others)
    return min(1.0, 2 * worst)


def cell_verdict(records: list[RunRecord], baseline: str, alpha: float,
                 key: PlacementKey = lambda machine, pus: pus, order: Sequence[str] = (),
                 test: bool = True,
                 compare: Callable[[Experiment, Experiment], float] | None = None) -> dict:
    """The verdict of one (machine, benchmark, threads) from its runs; see the module's rules.

    ``order``: the campaign's strategies, so the first of identical ones names the experiment;
    ``test``: False gives the cell no verdict (no test, no winner, nothing in the report-wide
    family: its printed times are not its runs', :mod:`pinbench.results.printed_share`);
    ``compare``: the p-value of (baseline, experiment), default the test above (the
    sequential design's: :func:`pinbench.stats.sequential.analysis_test`).

    Returns the verdict row (:data:`VERDICT_COLUMNS` without the cell's names and the
    report-wide columns of :func:`report_wide`) and, under ``"comparisons"``, one row per
    strategy (:data:`COMPARISON_COLUMNS`, same).
    """
    groups = experiments(records, key, order)
    base = next((g for g in groups if baseline in g.strategies), None)
    usable = test and base is not None and len(base.times) >= MIN_N
    tested = [g for g in groups if g is not base and len(g.times) >= MIN_N] if usable else []
    raw = [compare(base, g) if compare else brunner_munzel(np.array(base.times),
                                                           np.array(g.times), two_sided=True)[0]
           for g in tested]
    adjusted = holm(raw) if raw else []
    speedup = {g.name: _median(base.times) / _median(g.times) for g in tested}
    effect = {g.name: relative_effect(base.times, g.times) for g in tested}
    said = {g.name: outcome(q, effect[g.name], alpha) for g, q in zip(tested, adjusted)}
    noise = {g.name: comparison_noise(base.times, g.times) for g in tested}
    detectable = {g.name: detectable_speedup(noise[g.name], len(base.times), len(g.times),
                                             alpha / len(tested), sides=2) for g in tested}
    faster = [(g, p, q) for g, p, q in zip(tested, raw, adjusted) if said[g.name] == "faster"]
    row = {"baseline": baseline, "tests": len(raw), "outcome": _cell_outcome(said, speedup),
           "slower": sum(o == "slower" for o in said.values()), "best": "", "stands_for": "",
           "speedup_median": None, "p_raw": None, "p_adjusted": None, "runner_up": "",
           "p_best_vs_others": None, "clear_winner": False,
           "identical": "; ".join(" = ".join(g.strategies) for g in groups
                                  if len(g.strategies) > 1),
           "coincide": _coincide(groups, base), "detectable": _largest(detectable.values())}
    if faster:
        best, p, q = max(faster, key=lambda item: (speedup[item[0].name], -item[2]))
        row.update(best=best.name, stands_for=" ".join(best.strategies[1:]),
                   speedup_median=speedup[best.name], p_raw=p, p_adjusted=q)
        others = sorted((g for g in tested if g is not best), key=lambda g: -speedup[g.name])
        if others:
            versus = _faster_than_every_other(best, others, alpha)
            row.update(runner_up=others[0].name, p_best_vs_others=versus,
                       clear_winner=versus <= alpha)
        else:
            row["clear_winner"] = True
    raw_of = {g.name: (p, q) for g, p, q in zip(tested, raw, adjusted)}
    row["comparisons"] = [
        {"strategy": strategy, "experiment": group.name,
         "same_as_baseline": group is base and strategy != baseline,
         "runs": len(group.times), "baseline_runs": len(base.times) if base else 0,
         "speedup_median": speedup.get(group.name), "noise": noise.get(group.name),
         "p_raw": raw_of.get(group.name, (None, None))[0],
         "p_adjusted": raw_of.get(group.name, (None, None))[1],
         "effect": effect.get(group.name), "outcome": said.get(group.name, "none"),
         "faster": any(group is g for g, _, _ in faster),
         "detectable": detectable.get(group.name)}
        for group in groups for strategy in group.strategies]
    return row


def _cell_outcome(said: dict[str, str], speedup: dict[str, float]) -> str:
    """A cell's outcome from its experiments' (see the module's text)."""
    if "faster" in said.values():
        return "faster"
    best = max(speedup, key=speedup.get, default=None)
    return "slower" if best is not None and said[best] == "slower" else "none"


def _largest(values) -> float | None:
    """The largest of detectable speedups; None when one of them is None (nothing
    detectable) or there are none."""
    values = list(values)
    return None if not values or None in values else max(values)


def report_wide(verdicts: list[dict], comparisons: list[dict], alpha: float,
                decision: str = "fwer") -> None:
    """Add the report-wide decision to every verdict and comparison row (in place).

    ``decision`` (:data:`pinbench.stats.decisions.DECISIONS`): ``fwer``, Holm's step-down over
    every tested experiment of every cell at once (an experiment is one test, however many
    strategies it stands for), holds the probability of naming any strategy faster or slower
    anywhere in the report, when it is not, at ``alpha``; ``fdr``, Benjamini-Hochberg's
    step-up, the expected share of wrong ones among those named. Comparison rows get
    ``p_report`` (adjusted over the report), ``outcome_report``, ``faster_report`` and
    ``detectable_report`` (the speedup detectable at the report's level,
    :func:`pinbench.stats.decisions.level`); verdict rows get ``tests_report``,
    ``decision_report``, ``outcome_report``, ``best_report`` (the largest median speedup
    among the cell's experiments faster report-wide), its ``p_report``, the cell's
    ``detectable_report`` and ``too_few``: which decisions its runs are too few for, and why.
    """
    cell = ("machine", "benchmark", "threads")
    tests = {(*(c[k] for k in cell), c["experiment"]): c for c in comparisons
             if c["p_raw"] is not None}
    adjusted = ADJUST[decision]([c["p_raw"] for c in tests.values()])
    said = [outcome(p, c["effect"], alpha) for c, p in zip(tests.values(), adjusted)]
    at = level(decision, alpha, len(tests), sum(o != "none" for o in said))
    decided = {test: {"p_report": p, "outcome_report": o, "faster_report": o == "faster",
                      "detectable_report": detectable_speedup(c["noise"], c["baseline_runs"],
                                                              c["runs"], at, sides=2)}
               for (test, c), p, o in zip(tests.items(), adjusted, said)}
    for row in comparisons:
        row.update(decided.get((*(row[k] for k in cell), row["experiment"]),
                               {"p_report": None, "outcome_report": "none",
                                "faster_report": False, "detectable_report": None}))
    by_cell: dict[tuple, list[dict]] = defaultdict(list)
    for test, c in tests.items():
        by_cell[test[:3]].append(c | decided[test])
    for verdict in verdicts:
        mine = by_cell.get(tuple(verdict[k] for k in cell), [])
        best = max((c for c in mine if c["faster_report"]), default=None,
                   key=lambda c: (c["speedup_median"], -c["p_report"]))
        verdict.update(tests_report=len(tests), decision_report=decision,
                       outcome_report=_cell_outcome(
                           {c["experiment"]: c["outcome_report"] for c in mine},
                           {c["experiment"]: c["speedup_median"] for c in mine}),
                       best_report=best["experiment"] if best else "",
                       p_report=best["p_report"] if best else None,
                       detectable_report=_largest(c["detectable_report"] for c in mine),
                       too_few=_too_few(mine, verdict["tests"], len(tests), alpha, decision))


def _too_few(mine: list[dict], tests: int, report_tests: int, alpha: float,
             decision: str) -> str:
    """What the cell's runs are too few for (:func:`pinbench.stats.attainable.too_few`), by
    its comparison with the most runs ("" when it has none)."""
    most = min(mine, default=None,
               key=lambda c: smallest_p(c["baseline_runs"], c["runs"], sides=2))
    return too_few(most["baseline_runs"], most["runs"], tests, report_tests, alpha,
                   decision) if most else ""
