"""Error rates, power and runs of the sequential design against the fixed one, by simulation.

``python -m pinbench.stats.simulate_sequential [--grid small|full] [--spread S]
[--power P] [--processes P]``; ``--normal``: the spending functions compared in the normal
model instead (:func:`normal_model`).

The same shape as :mod:`pinbench.stats.simulate`: a simulated campaign is ``cells``
measurement jobs of a baseline and ``strategies`` others, run times
``factor x exp(spread x z)`` with z standard normal; a planted strategy is faster (factor
< 1) or slower (> 1) in every cell, the others equal the baseline. Each campaign is measured
twice from the same stream of noise:

- **fixed**: every strategy ``n`` times; analysed as campaigns are today (one-sided
  Brunner-Munzel by permutation, Holm over the report: ``fixed, one-sided``), and with the
  sequential design's test at one look (two-sided with a sign, each side at alpha / 2:
  ``fixed, two-sided``), the like-for-like comparison;
- **sequential**: the job's rule (:func:`pinbench.stats.sequential.stopping_rounds`: looks every
  maximum / 5 rounds, power-family spending (alpha t^1.5) at alpha / m_report per
  comparison, drops, stops for futility below the beta-spending boundary of ``--power``),
  then the analysis' replay of its looks (:func:`pinbench.stats.sequential.analysis_test`) with Holm over the
  report. Its maximum is the least with the power of ``n`` fixed runs
  (:func:`pinbench.stats.sequential.maximum_for`), its first ``n`` rounds the fixed design's
  runs (the same noise).

Printed per condition and design: the share of campaigns whose report-wide decision names
a strategy faster that is not (the family-wise error over the report, a planted slower one
included), the share of planted faster strategies found report-wide (power), each with its
Wilson interval (:func:`pinbench.stats.proportion.wilson_interval`), the runs per cell and
the fixed design's runs over the design's (the factor), and, for the sequential design, how
many planted faster strategies the fixed design found and it did not (and the reverse: the
two designs see the same noise, so these are the power it lost and gained).
``--spread`` sets the noise (the spread of the log run times; a real campaign's:
:func:`spread_of`). docs/statistics.md records the figures.
"""
from __future__ import annotations

import argparse
import math
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from pinbench.results.runs import RunRecord
from pinbench.stats.analyse import verdict_tables
from pinbench.stats.proportion import wilson_interval
from pinbench.stats.sequential import (MARGIN, POWER, SPENDING, boundaries, fractions_of,
                                       futility_design, look_rounds, maximum_for,
                                       stopping_rounds)
from pinbench.stats.simulate import BASELINE, _record

DESIGNS = ("fixed, one-sided", "fixed, two-sided", "sequential")


@dataclass(frozen=True)
class Condition:
    """One simulated campaign design (as :class:`pinbench.stats.simulate.Condition`)."""

    name: str
    cells: int = 6  #: measurement jobs
    strategies: int = 4  #: besides the baseline
    n: int = 35  #: repetitions of the fixed design (the sequential one: :meth:`maximum`)
    spread: float = 0.05  #: spread of the log run times
    #: planted strategy -> its run time over the baseline's (< 1: faster), in every cell
    planted: dict[str, float] = field(default_factory=dict)
    #: per cell, its own planted strategies (a real campaign's effects); () : ``planted``
    by_cell: tuple[dict[str, float], ...] = ()
    #: per cell, its strategies' own run times (a real campaign's, the baseline's included),
    #: drawn with replacement instead of the lognormal noise (a strategy not named there has
    #: the baseline's); () : the lognormal model
    samples: tuple[dict[str, tuple[float, ...]], ...] = ()

    def maximum(self, alpha: float, power: float = POWER) -> int:
        """The sequential design's maximum rounds, with the power of ``n`` fixed runs at the
        report's ``alpha``."""
        return maximum_for(self.n, alpha / (self.cells * self.strategies) / 2, power)

    @property
    def names(self) -> list[str]:
        return [f"s{k}" for k in range(1, self.strategies + 1)]

    def effects(self, cell: int) -> dict[str, float]:
        """The planted strategies of ``cell``."""
        return self.by_cell[cell] if self.by_cell else self.planted

    def faster(self, cell: int) -> set[str]:
        """The strategies planted faster in ``cell``."""
        return {s for s, f in self.effects(cell).items() if f < 1}


def _times(condition: Condition, rng: np.random.Generator, cell: int, rounds: int
           ) -> dict[str, list[float]]:
    """Every strategy's run times of ``rounds`` rounds of one cell, in round order: its
    planted factor times lognormal noise, or drawn from its :attr:`Condition.samples`."""
    if condition.samples:
        observed = condition.samples[cell]
        return {s: list(rng.choice(observed.get(s, observed[BASELINE]), rounds))
                for s in [BASELINE, *condition.names]}
    return {s: list(condition.effects(cell).get(s, 1.0)
                    * np.exp(condition.spread * rng.standard_normal(rounds)))
            for s in [BASELINE, *condition.names]}


def _records(bench: str, times: dict[str, list[float]], rounds: dict[str, int]
             ) -> list[RunRecord]:
    """The runs of the first ``rounds[s]`` rounds of each strategy, as a job records them."""
    pus = {s: "" if s == BASELINE else f"{k} {k + 1}" for k, s in enumerate(times)}
    return [_record(bench, s, r, r * len(times) + k, times[s][r], pus[s], "")
            for k, s in enumerate(times) for r in range(rounds[s])]


def one_campaign(condition: Condition, alpha: float, seed: int, power: float = POWER
                 ) -> dict[str, tuple]:
    """(false claims, planted faster strategies found, runs per strategy and cell, the
    planted ones found by name) of each design on one simulated campaign."""
    rng = np.random.default_rng(seed)
    level = alpha / (condition.cells * condition.strategies)
    maximum = condition.maximum(alpha, power)
    fixed, sequential = [], []
    for cell in range(condition.cells):
        times = _times(condition, rng, cell, max(condition.n, maximum))
        fixed += _records(f"b{cell}", {s: t[:condition.n] for s, t in times.items()},
                          dict.fromkeys(times, condition.n))
        sequential += _records(f"b{cell}", times, stopping_rounds(BASELINE, times, maximum,
                                                                     level, power))
    design = {"baseline": BASELINE, "alpha": level, "maximum": maximum, "power": power}
    order = [BASELINE, *condition.names]
    faster = {f"b{cell}": condition.faster(cell) for cell in range(condition.cells)}
    out = {}
    for name, records, settings in (("fixed, one-sided", fixed, None),
                                    ("fixed, two-sided", fixed, design | {"looks": 1, "maximum": condition.n}),
                                    ("sequential", sequential, design)):
        _, comparisons = verdict_tables(records, BASELINE, alpha, order=order,
                                        sequential=settings)
        false = any(c["faster_report"] and c["experiment"] not in faster[c["benchmark"]]
                    for c in comparisons)
        found = {(c["benchmark"], c["experiment"]) for c in comparisons
                 if c["faster_report"] and c["experiment"] in faster[c["benchmark"]]}
        out[name] = (false, len(found),
                     len(records) / (condition.cells * (condition.strategies + 1)), found)
    return out


def measure(condition: Condition, campaigns: int, alpha: float = 0.05, seed: int = 1,
            processes: int = 1, power: float = POWER) -> dict[str, dict]:
    """Per design: ``false`` (share of campaigns with a false claim report-wide), ``power``
    (share of planted faster strategies found report-wide; None when none is planted),
    ``runs`` (mean runs per strategy and cell), ``lost`` and ``gained`` (planted faster
    strategies the fixed design, two-sided, found and this one did not, and the reverse),
    with the counts behind them; ``processes``: campaigns simulated side by side."""
    seeds = [seed * 100_003 + k for k in range(campaigns)]
    with ProcessPoolExecutor(processes) if processes > 1 else _Serial() as pool:
        results = list(pool.map(one_campaign, [condition] * campaigns, [alpha] * campaigns,
                                seeds, [power] * campaigns))
    planted = sum(len(condition.faster(cell)) for cell in range(condition.cells)) * campaigns
    rates = {}
    for design in DESIGNS:
        false = sum(r[design][0] for r in results)
        found = sum(r[design][1] for r in results)
        rates[design] = {"false": false / campaigns, "false_count": false,
                         "power": found / planted if planted else None, "found": found,
                         "planted": planted, "campaigns": campaigns,
                         "runs": float(np.mean([r[design][2] for r in results])),
                         "lost": sum(len(r["fixed, two-sided"][3] - r[design][3])
                                     for r in results),
                         "gained": sum(len(r[design][3] - r["fixed, two-sided"][3])
                                       for r in results)}
    return rates


class _Serial:
    """A pool of one: this process."""

    def __enter__(self) -> "_Serial":
        return self

    def __exit__(self, *exc) -> None:
        pass

    @staticmethod
    def map(function, *arguments):
        return map(function, *arguments)


def grid(name: str, spread: float = Condition.spread) -> list[tuple[Condition, int]]:
    """The conditions and how many campaigns each: ``small`` (a few minutes with two
    processes), ``full`` (about half an hour with two, on the loaded 2-core VM)."""
    campaigns = 40 if name == "full" else 8

    def condition(label: str, **planted: float) -> Condition:
        return Condition(label, spread=spread, planted=planted)
    return [(condition("H0: nothing differs"), 4 * campaigns),
            (condition("s1 2% faster", s1=0.98), campaigns),
            (condition("s1 5% faster", s1=0.95), campaigns),
            (condition("s1 10% faster", s1=0.90), campaigns),
            (condition("partial: s1 10% faster, s2 5% slower", s1=0.90, s2=1.05), campaigns),
            (condition("partial: s1 5% faster, s2 2% faster", s1=0.95, s2=0.98), campaigns)]


#: The spending functions the normal model compares (``--normal``).
SPENDINGS = ("obf", "t^3", "t^2", "t^1.5", "t^1", "pocock")
#: The effects it gives the expected runs at, in units of the effect the fixed design finds
#: with the design's power (at spread 5% and 35 runs about 5%: 0.4 about 2%, 2 about 10%).
EFFECTS = (0.0, 0.4, 1.0, 2.0)


def normal_model(spending: str, runs: int = 35, alpha: float = 0.05 / 48,
                 power: float = POWER, paths: int = 40_000, seed: int = 1) -> dict:
    """One comparison of the sequential design of ``spending`` with the power of ``runs``
    fixed runs (:func:`maximum_for`, each side at ``alpha``) in the normal model: its z at
    each look the Brownian motion's (independent increments, drift ``effect`` x the drift
    at which the fixed design of ``runs`` has ``power``, scaled to the maximum), stopped as
    the job does (either side across its efficacy boundary; both inside the futility
    wedge). Its ``maximum`` and, per effect of :data:`EFFECTS`, the mean runs over ``runs``
    and the share that crossed on the faster side (``power``), ``paths`` seeded paths."""
    maximum = maximum_for(runs, alpha, power, spending)
    rounds = look_rounds(maximum)
    fractions = np.array(fractions_of(rounds, maximum))
    upper = np.array(boundaries(tuple(fractions), alpha, spending))
    lower = np.array(futility_design(tuple(fractions), alpha, power, spending)[0])
    fixed = float(stats.norm.isf(alpha) + stats.norm.isf(1 - power))  # the fixed design's drift
    steps = np.random.default_rng(seed).standard_normal((paths, len(rounds)))
    steps *= np.sqrt(np.diff(fractions, prepend=0.0))
    out = {"spending": spending, "maximum": maximum, "rounds": rounds}
    for effect in EFFECTS:
        drift = effect * fixed * math.sqrt(maximum / runs)
        z = (np.cumsum(steps, axis=1) + drift * fractions) / np.sqrt(fractions)
        stop, found = np.full(paths, maximum), np.zeros(paths, bool)
        alive = np.ones(paths, bool)
        for k, n in enumerate(rounds):
            crossed = alive & (np.abs(z[:, k]) >= upper[k])
            found |= crossed & (z[:, k] > 0)
            futile = alive & ~crossed & (np.abs(z[:, k]) < lower[k]) if k < len(rounds) - 1 \
                else np.zeros(paths, bool)
            stop[crossed | futile] = n
            alive &= ~(crossed | futile)
        out[effect] = {"runs": float(stop.mean() / runs), "power": float(found.mean())}
    return out


def spread_of(records: list[RunRecord]) -> float:
    """The noise of a campaign's runs as :class:`Condition` has it: the median, over its
    cells' experiments, of the standard deviation of the log run times (successful runs)."""
    groups: dict[tuple, list[float]] = {}
    for r in records:
        if r.counts:
            groups.setdefault((r.machine, r.benchmark, r.threads, r.strategy), []).append(
                math.log(r.time_s))
    return float(np.median([np.std(v, ddof=1) for v in groups.values() if len(v) >= 3]))


def _share(count: int, total: int) -> str:
    low, high = wilson_interval(count, total)
    return f"{count / total:.1%} [{low:.1%}, {high:.1%}]"


def main(argv: list[str] | None = None) -> int:
    """Print both designs' error rates, power and runs over simulated campaigns."""
    parser = argparse.ArgumentParser(prog="python -m pinbench.stats.simulate_sequential",
                                     description=main.__doc__)
    parser.add_argument("--grid", choices=("small", "full"), default="full")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--spread", type=float, default=Condition.spread,
                        help="the spread of the log run times (default %(default)s)")
    parser.add_argument("--power", type=float, default=POWER,
                        help="the sequential design's power at the effect it is made for "
                             "(default %(default)s)")
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--normal", action="store_true",
                        help="the spending functions compared in the normal model instead")
    args = parser.parse_args(argv)
    if args.normal:
        return normal_table(args.alpha, args.power)
    conditions = grid(args.grid, args.spread)
    first = conditions[0][0]
    maximum = first.maximum(args.alpha, args.power)
    print(f"# {args.grid} grid, alpha = {args.alpha}: {first.cells} cells x {first.strategies} "
          f"strategies and a baseline, spread {first.spread:.1%}, fixed n = {first.n}, "
          f"sequential at most {maximum} (looks after rounds {look_rounds(maximum)}, power "
          f"{args.power})")
    print("condition | design | campaigns with a false claim report-wide | planted found "
          "report-wide | runs per cell | factor vs fixed | found by fixed (two-sided) only / "
          "by this one only")
    for k, (condition, campaigns) in enumerate(conditions):
        rates = measure(condition, campaigns, args.alpha, args.seed + k, args.processes,
                        args.power)
        fixed = rates["fixed, two-sided"]["runs"]
        for design, r in rates.items():
            power = _share(r["found"], r["planted"]) if r["planted"] else "-"
            print(f"{condition.name} | {design} | {_share(r['false_count'], campaigns)} | "
                  f"{power} | {r['runs'] * (first.strategies + 1):.1f} | "
                  f"{fixed / r['runs']:.2f} | {r['lost']} / {r['gained']}", flush=True)
    return 0


def normal_table(alpha: float, power: float) -> int:
    """Print :func:`normal_model` for each of :data:`SPENDINGS` (``--normal``)."""
    level = alpha / (Condition.cells * Condition.strategies) / 2
    print(f"# normal model, each side at {level:.3g}, power {power}, the power of "
          f"{Condition.n} fixed runs (x {MARGIN} margin); runs over {Condition.n} and the share "
          f"found at effects {', '.join(map(str, EFFECTS))} x the fixed design's")
    print("spending | maximum | looks after | " + " | ".join(
        f"effect {e}" for e in EFFECTS))
    for spending in SPENDINGS:
        model = normal_model(spending, Condition.n, level, power)
        cells = [f"{model[e]['runs']:.3f}" + (f" ({model[e]['power']:.1%})" if e else "")
                 for e in EFFECTS]
        mark = " (the design's)" if spending == SPENDING else ""
        print(f"{spending}{mark} | {model['maximum']} | {model['rounds']} | " + " | ".join(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
