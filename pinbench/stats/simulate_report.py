"""Error rates and power of the report-wide decisions, by simulated campaigns (issue 37).

``python -m pinbench.stats.simulate_report [--grid small|full] [--campaigns N]
[--part all|decisions|isolate|warning] [--conditions K ...] [--families N]``.

The campaigns are :mod:`pinbench.stats.simulate`'s (measurement jobs in the job's order, the
records through :func:`pinbench.stats.analyse.verdict_tables`); each campaign's comparisons are
decided report-wide under every decision of :data:`pinbench.stats.decisions.DECISIONS`. Per
condition of :func:`grid`, for each decision and for each cell's own verdict:

- ``false``: the share of campaigns in which a strategy equal to the baseline is named
  faster; ``false_any``: named faster or slower (the family-wise error over the true nulls);
- ``wrong_way``: the share of campaigns in which a planted faster strategy is named slower or
  a planted slower one faster (the directional error);
- ``fdp``: the mean share of wrong outcomes among the named ones (0 when none is named: the
  false discovery rate);
- ``found``: the share of planted strategies named in their direction (power).

Each with its Wilson interval (:func:`pinbench.stats.proportion.wilson_interval`; the false
discovery rate with its mean's normal interval). The isolation of issue 37's excess
(:func:`isolate`) compares, on the true nulls of the first condition, the share of tests
at or below Holm's last level alpha / m0 with that level, by the reference distribution and
by per-test draws, with and without the correction for unequal spreads, and the share of
families of m0 such tests (shared baselines, as in a campaign, or independent ones) with
one there: Holm's family-wise error over the true nulls is at most that share, whatever
the other tests do. The warning's repetitions (:func:`warned_runs`) are checked by
campaigns with every strategy 1.5 times faster at the runs it names.
"""
from __future__ import annotations

import argparse
import copy
import math
import time
from dataclasses import dataclass, replace

import numpy as np

from pinbench.stats.analyse import verdict_tables
from pinbench.stats.attainable import too_few
from pinbench.stats.decisions import DECISIONS
from pinbench.stats.location import brunner_munzel
from pinbench.stats.proportion import wilson_interval
from pinbench.stats.simulate import BASELINE, Condition, _provenance, campaign_runs
from pinbench.stats.verdicts import report_wide

#: The decisions measured: each cell's own verdict, then every report-wide one.
LEVELS = ("cell", *DECISIONS)


@dataclass
class Tally:
    """Counts of one decision over the campaigns of a condition."""

    campaigns: int = 0
    false: int = 0
    false_any: int = 0
    wrong_way: int = 0
    fdp: float = 0.0
    fdp_squares: float = 0.0
    found: int = 0
    planted: int = 0

    def add(self, rows: list[dict], key: str, planted: dict[str, float]) -> None:
        """One campaign's comparison rows (one per experiment), ``key`` their outcome column."""
        self.campaigns += 1
        named = [r for r in rows if r[key] != "none"]
        wrong = [r for r in named if _truth(r, planted) != r[key]]
        self.false += any(r[key] == "faster" and _truth(r, planted) == "none" for r in rows)
        self.false_any += any(_truth(r, planted) == "none" for r in named)
        self.wrong_way += any(_truth(r, planted) not in ("none", r[key]) for r in named)
        share = len(wrong) / len(named) if named else 0.0
        self.fdp += share
        self.fdp_squares += share * share
        planted_rows = [r for r in rows if _truth(r, planted) != "none"]
        self.planted += len(planted_rows)
        self.found += sum(r[key] == _truth(r, planted) for r in planted_rows)

    def rates(self) -> dict[str, tuple[float, float, float]]:
        """Each rate with its 95% interval: (rate, low, high)."""
        out = {name: _wilson(getattr(self, name), self.campaigns)
               for name in ("false", "false_any", "wrong_way")}
        mean = self.fdp / self.campaigns
        spread = math.sqrt(max(self.fdp_squares / self.campaigns - mean * mean, 0.0)
                           / self.campaigns)
        out["fdp"] = (mean, max(mean - 1.96 * spread, 0.0), mean + 1.96 * spread)
        out["found"] = _wilson(self.found, self.planted) if self.planted else (0.0, 0.0, 0.0)
        return out


def _truth(row: dict, planted: dict[str, float]) -> str:
    factor = planted.get(row["experiment"], 1.0)
    return "faster" if factor < 1 else "slower" if factor > 1 else "none"


def _wilson(count: int, total: int) -> tuple[float, float, float]:
    low, high = wilson_interval(count, total)
    return count / total, low, high


def measure(condition: Condition, campaigns: int, alpha: float = 0.05, seed: int = 1
            ) -> dict[str, Tally]:
    """The tallies of each decision of :data:`LEVELS` over ``campaigns`` simulated campaigns."""
    rng = np.random.default_rng(seed)
    tallies = {name: Tally() for name in LEVELS}
    for _ in range(campaigns):
        records = campaign_runs(condition, rng)
        verdicts, comparisons = verdict_tables(records, BASELINE, alpha,
                                               order=[BASELINE, *condition.names])
        tested = list({(c["benchmark"], c["experiment"]): c for c in comparisons
                       if c["p_raw"] is not None}.values())
        tallies["cell"].add(tested, "outcome", condition.planted)
        for decision in DECISIONS:
            rows = copy.deepcopy(tested)
            report_wide(copy.deepcopy(verdicts), rows, alpha, decision)
            tallies[decision].add(rows, "outcome_report", condition.planted)
    return tallies


def isolate(condition: Condition, families: int, alpha: float = 0.05, seed: int = 7
            ) -> dict[str, tuple[float, float, float]]:
    """The true nulls of ``condition`` alone (see the module's text): per test, the share at
    or below alpha / m0 (m0 true nulls in a campaign) and that level; per family of m0,
    the share with one there. The variants: the reference distribution (as the verdicts),
    one-sided (the former test), per-test draws (``reference=False``), without the
    correction for unequal spreads, independent baselines."""
    rng = np.random.default_rng(seed)
    equal = [s for s in condition.names if s not in condition.planted
             and s != condition.twin]
    m0 = condition.cells * len(equal)
    at = alpha / m0
    variants = {
        "two-sided, reference (the verdicts')": {"two_sided": True},
        "one-sided, reference": {},
        "one-sided, per-test draws (the former test)": {"reference": False},
        "one-sided, per-test draws, no unequal-spread correction": {"reference": False,
                                                                     "welch": False},
    }
    tests = {name: 0 for name in variants}
    shared = {name: 0 for name in variants}
    apart = 0
    for _ in range(families):
        hit = dict.fromkeys(variants, False)
        hit_apart = False
        for _ in range(condition.cells):
            base = np.exp(condition.spread * rng.standard_normal(condition.n))
            for _ in equal:
                other = np.exp(condition.spread * rng.standard_normal(condition.n))
                for name, options in variants.items():
                    p = brunner_munzel(base, other, **options)[0]
                    tests[name] += p <= at
                    hit[name] |= p <= at
                own = np.exp(condition.spread * rng.standard_normal(condition.n))
                hit_apart |= brunner_munzel(own, other, two_sided=True)[0] <= at
        for name in variants:
            shared[name] += hit[name]
        apart += hit_apart
    out = {"level alpha / m0": (at, at, at)}
    for name in variants:
        out[f"{name}: tests at or below it (per test)"] = _wilson(tests[name], families * m0)
        out[f"{name}: families with one (shared baselines)"] = _wilson(shared[name], families)
    out["two-sided, reference: families with one (independent baselines)"] = \
        _wilson(apart, families)
    return out


def warned_runs(cells: int, strategies: int, alpha: float) -> tuple[str, int]:
    """The warning at 3 runs of a campaign of ``cells`` cells and ``strategies`` tested ones,
    and the runs per strategy it names."""
    said = too_few(3, 3, strategies, strategies * cells, alpha)
    return said, int(said.split("; ")[-1].split()[0])


def grid(size: str, campaigns: int | None = None) -> list[tuple[Condition, int]]:
    """The conditions and how many campaigns each (``small``: the test's; ``full``)."""
    full = size == "full"
    count = campaigns or (1000 if full else 12)
    partial = Condition("issue 37: os + 4 placements, two 5% faster, two equal", strategies=4,
                        twins=False, n=35 if full else 12,
                        planted={"s1": 1 / 1.05, "s3": 1 / 1.05}, cells=18 if full else 6)
    return [
        (partial, count),
        (replace(partial, name="one 5% faster, one 5% slower, one 3% slower, one equal",
                 planted={"s1": 1 / 1.05, "s2": 1.05, "s3": 1.03}), max(count // 3, 6)),
        (replace(partial, name="one 3% faster", planted={"s1": 1 / 1.03}), max(count // 3, 6)),
        (replace(partial, name="one 5% faster", planted={"s1": 1 / 1.05}), max(count // 3, 6)),
    ]


def _interval(value: tuple[float, float, float]) -> str:
    return f"{value[0]:.2%} [{value[1]:.2%}, {value[2]:.2%}]"


def main(argv: list[str] | None = None) -> int:
    """Print the report-wide decisions' error rates and power over simulated campaigns."""
    parser = argparse.ArgumentParser(prog="python -m pinbench.stats.simulate_report",
                                     description=main.__doc__)
    parser.add_argument("--grid", choices=("small", "full"), default="full")
    parser.add_argument("--campaigns", type=int, default=None,
                        help="campaigns of the first condition (the others a third)")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--part", choices=("all", "decisions", "isolate", "warning"),
                        default="all")
    parser.add_argument("--conditions", type=int, nargs="+", default=None, metavar="K",
                        help="only these conditions of the grid (0: issue 37's), for runs "
                             "side by side")
    parser.add_argument("--families", type=int, default=None,
                        help="families of the isolation (default: 3 x the campaigns)")
    args = parser.parse_args(argv)
    alpha, part = args.alpha, args.part
    print(f"# {args.grid} grid, alpha = {alpha}: {_provenance()}")
    conditions = grid(args.grid, args.campaigns)
    if part in ("all", "decisions"):
        decisions(conditions, alpha, args.seed, args.conditions)
    if part in ("all", "isolate"):
        families = args.families or 3 * (args.campaigns or (1000 if args.grid == "full" else 12))
        started = time.process_time()
        print(f"\nthe true nulls of the first condition alone, {families} families "
              "(Holm's family-wise error over them is at most the share of families with one):")
        for name, value in isolate(conditions[0][0], families, alpha, args.seed).items():
            print(f"  {name}: {value[0]:.3g}" if value[1] == value[2] else
                  f"  {name}: {_interval(value)}", flush=True)
        print(f"  [{time.process_time() - started:.0f} CPU s]")
    if part in ("all", "warning"):
        warning(args.grid, alpha, args.seed)
    return 0


def decisions(conditions: list[tuple[Condition, int]], alpha: float, seed: int,
              only: list[int] | None = None) -> None:
    """Print every decision's rates of every condition (:func:`measure`; ``only``: of
    these conditions, by their index)."""
    print("condition | decision | equal named faster | equal named faster or slower | "
          "wrong direction | false discovery rate | planted found (power) [campaigns, CPU s]")
    for k, (condition, campaigns) in enumerate(conditions):
        if only is not None and k not in only:
            continue
        started = time.process_time()
        tallies = measure(condition, campaigns, alpha, seed + k)
        spent = time.process_time() - started
        for name, tally in tallies.items():
            r = tally.rates()
            print(f"{condition.name} ({condition.n} runs, {condition.cells} cells) | {name} | "
                  f"{_interval(r['false'])} | {_interval(r['false_any'])} | "
                  f"{_interval(r['wrong_way'])} | {_interval(r['fdp'])} | "
                  f"{_interval(r['found'])} [{campaigns}, {spent:.0f}]", flush=True)


def warning(size: str, alpha: float, seed: int) -> None:
    """Print the warning at 3 runs and how often the runs it names find a 1.5x speedup."""
    cells, strategies = (18, 5) if size == "full" else (4, 3)
    said, runs = warned_runs(cells, strategies, alpha)
    print(f"\nthe warning at 3 runs, {cells} cells x {strategies} strategies: {said}")
    check = Condition(f"every strategy 1.5 times faster, {runs} runs", strategies=strategies,
                      twins=False, n=runs, cells=cells,
                      planted={f"s{k}": 1 / 1.5 for k in range(1, strategies + 1)})
    tallies = measure(check, 20 if size == "full" else 3, alpha, seed)
    for name in LEVELS:
        print(f"  {check.name}: found by {name}: {_interval(tallies[name].rates()['found'])}",
              flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
