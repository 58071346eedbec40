"""Error rates of the headline verdict, by simulation (``python -m pinbench.stats.simulate``).

Each simulated cell has a baseline and nine strategies, run ``n`` times each, times drawn
from one lognormal distribution (the spread of a quiet machine's run times, sigma = 5%):

- under **H0** every strategy equals the baseline. One strategy's times are the baseline's
  own runs, and one has the placement of another strategy (so it shares that strategy's runs
  and is tested once with it); the seven others run placements of their own;
- under a **planted effect** the first strategy is faster by a factor (3% by default).

Printed: the family-wise false-positive rate (cells naming any winner) under H0 of
:func:`pinbench.stats.verdicts.cell_verdict`, beside the rule it replaces (the largest median speedup
among strategies whose Speedup-Test mean or median test alone is significant), each with its
Monte-Carlo standard error; and, under the planted effect, how often each names the planted
strategy (power) and how often another one.

With ``--stopping PRECISION``, the cells are measured as a job with the early-stopping rule
of :mod:`pinbench.measure.stopping` does it (rounds, from round ``--min`` on, until every
measured series' median is known to within PRECISION, at most ``--n`` rounds), and the mean
number of rounds used is printed beside the rates.
"""
from __future__ import annotations

import argparse
import math

import numpy as np

from pinbench.measure.stopping import precise_enough
from pinbench.results.runs import RunRecord
from pinbench.stats.speeduptest import mean_test, median_test
from pinbench.stats.verdicts import cell_verdict

STRATEGIES = [f"s{k}" for k in range(1, 10)]
#: The planned PUs of each strategy's runs ("" : not bound); s9 ran s2's placement.
PLACEMENTS = {"os": "", **{s: f"{k} 99" for k, s in enumerate(STRATEGIES)}, "s9": "1 99"}
#: Strategies whose times are another's: s8 the baseline's runs, s9 its twin s2's.
SHARED = {"s8": "os", "s9": "s2"}


def simulated_runs(rng: np.random.Generator, n: int, factor: float, sigma: float = 0.05,
                   stopping: dict | None = None) -> list[RunRecord]:
    """One cell's runs: ``s1`` ``factor`` times the baseline's time, every other one equal.

    ``stopping`` ({"min", "precision", "confidence"}): draw round by round and stop as the
    measuring job would, at most ``n`` rounds.
    """
    measured = ["os", *(s for s in STRATEGIES if s not in SHARED)]
    draws = {s: rng.lognormal(math.log(factor) if s == "s1" else 0, sigma, n) for s in measured}
    rounds = n
    if stopping:
        for rounds in range(stopping["min"], n + 1):
            if precise_enough([list(draws[s][:rounds]) for s in measured],
                              stopping["precision"], stopping["confidence"]):
                break
    times = {s: draws[s][:rounds] for s in measured}
    for strategy in SHARED:
        times[strategy] = times[SHARED[strategy]]
    runs = []
    for strategy, values in times.items():
        runs += [RunRecord("m", "b", 2, strategy, rep, len(runs) + rep, True, "", float(t),
                           "wall", float(t), 0.0, 0.0, 0, False, True, "ok",
                           PLACEMENTS[strategy], "", 0.0, "", "") for rep, t in enumerate(values)]
    return runs


def old_rule(runs: list[RunRecord], alpha: float) -> str:
    """The rule replaced: largest median speedup among strategies whose mean or median test
    alone is significant (and faster)."""
    base = np.array([r.time_s for r in runs if r.strategy == "os"])
    best, best_speedup = "", 1.0
    for strategy in STRATEGIES:
        times = np.array([r.time_s for r in runs if r.strategy == strategy])
        speedup = np.median(base) / np.median(times)
        significant = mean_test(base, times, alpha)["significant"] or \
            median_test(base, times, alpha)["significant"]
        if significant and speedup > best_speedup:
            best, best_speedup = strategy, speedup
    return best


def rates(cells: int, n: int, factor: float, alpha: float, seed: int,
          compare_old: bool = True, sigma: float = 0.05, stopping: dict | None = None) -> dict:
    """How often the verdict (and the old rule) names s1, how often another strategy, and
    the mean number of runs per strategy (``rounds``)."""
    rng = np.random.default_rng(seed)
    counts = {"new_s1": 0, "new_other": 0, "old_s1": 0, "old_other": 0, "rounds": 0}
    for _ in range(cells):
        runs = simulated_runs(rng, n, factor, sigma, stopping)
        counts["rounds"] += sum(r.strategy == "os" for r in runs)
        best = cell_verdict(runs, "os", alpha)["best"]
        counts["new_s1"] += best == "s1"
        counts["new_other"] += best not in ("", "s1")
        if compare_old:
            old = old_rule(runs, alpha)
            counts["old_s1"] += old == "s1"
            counts["old_other"] += old not in ("", "s1")
    return {key: value / cells for key, value in counts.items()}


def standard_error(rate: float, cells: int) -> float:
    """The Monte-Carlo standard error of a rate estimated from ``cells`` cells."""
    return math.sqrt(max(rate * (1 - rate), 1e-12) / cells)


def main(argv: list[str] | None = None) -> int:
    """Print the verdict's family-wise false-positive rate under H0 and its power."""
    parser = argparse.ArgumentParser(prog="python -m pinbench.stats.simulate", description=main.__doc__)
    parser.add_argument("--cells", type=int, default=5000)
    parser.add_argument("--n", type=int, default=35, help="runs per strategy")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--effect", type=float, default=0.03, help="planted speedup of s1")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sigma", type=float, default=0.05, help="spread of the run times")
    parser.add_argument("--stopping", type=float, metavar="PRECISION",
                        help="measure with the early-stopping rule at this precision")
    parser.add_argument("--min", type=int, default=10, help="rounds before stopping may happen")
    args = parser.parse_args(argv)
    stopping = None if args.stopping is None else {
        "min": args.min, "precision": args.stopping, "confidence": 1 - args.alpha}
    keys = (("family-wise verdict (Holm)", "new"),) if stopping else \
        (("family-wise verdict (Holm)", "new"), ("old rule (any test alone)", "old"))
    common = {"compare_old": stopping is None, "sigma": args.sigma, "stopping": stopping}
    h0 = rates(args.cells, args.n, 1.0, args.alpha, args.seed, **common)
    planted = rates(args.cells, args.n, 1 / (1 + args.effect), args.alpha, args.seed + 1,
                    **common)
    how = f"stopping at precision {args.stopping:g} from round {args.min}, at most {args.n}" \
        if stopping else f"n = {args.n}"
    print(f"{args.cells} cells, 9 strategies (one sharing the baseline's runs, one another's), "
          f"sigma = {args.sigma}, {how}, alpha = {args.alpha}")
    for label, key in keys:
        fwer = h0[f"{key}_s1"] + h0[f"{key}_other"]
        print(f"  {label:<28} H0: winner named in {fwer:.2%} of cells "
              f"(+- {standard_error(fwer, args.cells):.2%}); "
              f"{args.effect:.0%} faster s1: s1 named in {planted[f'{key}_s1']:.1%}, "
              f"another in {planted[f'{key}_other']:.1%}")
    if stopping:
        print(f"  runs per strategy: {h0['rounds']:.1f} under H0, {planted['rounds']:.1f} with "
              f"the effect (of at most {args.n})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
