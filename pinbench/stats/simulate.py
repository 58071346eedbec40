"""Error rates and power of the verdicts, by simulated campaigns.

``python -m pinbench.stats.simulate [--grid small|full] [--part compare]``.

A simulated campaign is what the measuring process writes and the analysis reads: per
(benchmark, threads), one measurement job whose runs go in the job's order
(:func:`pinbench.measure.job.run_order`, or rounds with the early-stopping rule of
:mod:`pinbench.measure.stopping`), the baseline ``os`` not bound, every other strategy with a
placement of its own except a twin that has another's placement and is measured once with
it (its runs carry ``stands_for``, as the job writes them). The records go through the
analysis's :func:`pinbench.stats.analyse.verdict_tables`, so every cell's verdict, the
report-wide decision and the drift flags are the ones a campaign gets.

Run times are ``factor x exp(spread x z)``, z a noise along the run order: independent
normal, an AR(1) series of lag-1 correlation ``ar`` (a machine with slow spells), Student's
t with 3 degrees of freedom (heavy tails), or a mixture with 20% of the runs 3 standard
deviations slower (bimodal). A planted strategy is faster by its factor; the others equal
the baseline's median.

Printed for each condition of :data:`GRID` (``--grid small`` is what tests/test_error_rates.py
runs): the share of cells in which the cell's verdict names an unplanted strategy faster or
slower (its family-wise error), of campaigns in which some cell's verdict does (what reading every
cell's verdict at once would claim) and in which the report-wide decision does (its
family-wise error over the report); the share of planted strategies found, per cell and
report-wide; the share of cells with a clear winner; the share of jobs whose drift test
rejects, and of campaigns with a drift mark after the adjustment across jobs, beside the
former trend test (Mann-Kendall without the autocorrelation correction). Then the per-test
comparison of location tests that chose Brunner-Munzel's by permutation
(:func:`candidate_rates`), the study's own Speedup-Test checks (:func:`study_rates`), and
the regression gate of ``pinbench compare`` on pairs of campaigns (:func:`pair_rates`;
``--part compare``: only these).
docs/statistics-error-rates.md records the figures.
"""
from __future__ import annotations

import argparse
import datetime
import math
import platform
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
from scipy import stats

from pinbench.measure.job import run_order
from pinbench.measure.stopping import precise_enough, rounds_order
from pinbench.provenance import identity
from pinbench.results.runs import RunRecord
from pinbench.stats.analyse import verdict_tables
from pinbench.stats.attainable import least_repetitions
from pinbench.stats.detectable import detectable_speedup
from pinbench.stats.location import brunner_munzel
from pinbench.stats.regression import FASTER, SLOWER, compare, gate
from pinbench.stats.speeduptest import bootstrap_intervals, mean_test, median_test
from pinbench.stats.decisions import holm

BASELINE = "os"
NOISES = ("normal", "heavy", "bimodal")


@dataclass(frozen=True)
class Condition:
    """One simulated campaign design."""

    name: str
    cells: int = 18  #: measurement jobs: benchmarks x thread counts (6 x 3)
    strategies: int = 8  #: besides the baseline; the last is a twin of ``s2`` (``twins``)
    twins: bool = True  #: False: every strategy has a placement of its own
    n: int = 35  #: repetitions
    spread: float = 0.05  #: the baseline's spread of log run times
    #: the other strategies' spread (None: the baseline's)
    strategy_spread: float | None = None
    #: planted strategy -> its run time over the baseline's (< 1: faster)
    planted: dict[str, float] = field(default_factory=dict)
    ar: float = 0.0  #: lag-1 correlation of the noise along the run order
    noise: str = "normal"
    order: str = "interleaved"
    stopping: dict | None = None  #: {"min", "precision", "confidence"}: rounds, stop early

    @property
    def names(self) -> list[str]:
        return [f"s{k}" for k in range(1, self.strategies + 1)]

    @property
    def twin(self) -> str | None:
        """The strategy measured once with ``s2`` (same placement), if there are 3 or more
        and ``twins``."""
        return self.names[-1] if self.twins and self.strategies >= 3 else None


def noise(rng: np.random.Generator, size: int, kind: str, ar: float) -> np.ndarray:
    """Standardised noise along the run order (see the module's text)."""
    if kind == "heavy":
        return rng.standard_t(3, size) / math.sqrt(3)
    z = rng.standard_normal(size)
    if kind == "bimodal":
        return z + 3 * (rng.random(size) < 0.2)
    if ar:
        for k in range(1, size):
            z[k] = ar * z[k - 1] + math.sqrt(1 - ar * ar) * z[k]
    return z


def _record(bench: str, strategy: str, rep: int, index: int, time_s: float, pus: str,
            stands_for: str) -> RunRecord:
    return RunRecord("m", bench, 4, strategy, rep, index, True, "", time_s, "wall", time_s,
                     time_s, 0.0, 0, False, True, "ok" if pus else "n/a", pus, "", 0.0, "",
                     "", stands_for=stands_for)


def job_runs(condition: Condition, rng: np.random.Generator, bench: str) -> list[RunRecord]:
    """The runs of one measurement job, as the measuring process records them."""
    twin = condition.twin
    measured = [BASELINE, *(s for s in condition.names if s != twin)]
    seed = int(rng.integers(2 ** 63))
    stopping = condition.stopping
    order = rounds_order(measured, condition.n, seed) if stopping else \
        run_order(measured, condition.n, condition.order, seed)
    z = noise(rng, len(order), condition.noise, condition.ar)
    pus = {s: f"{k} {k + 1}" for k, s in enumerate(condition.names)} | {BASELINE: ""}
    runs, times = [], {s: [] for s in measured}
    for index, ((strategy, rep), zt) in enumerate(zip(order, z)):
        spread = condition.spread if strategy == BASELINE else \
            (condition.strategy_spread or condition.spread)
        time_s = condition.planted.get(strategy, 1.0) * math.exp(spread * zt)
        times[strategy].append(time_s)
        runs.append(_record(bench, strategy, rep, index, time_s, pus[strategy],
                            twin if twin and strategy == "s2" else ""))
        if stopping and (index + 1) % len(measured) == 0 \
                and (index + 1) // len(measured) >= stopping["min"] \
                and precise_enough(list(times.values()), stopping["precision"],
                                   stopping["confidence"]):
            break
    return runs


def campaign_runs(condition: Condition, rng: np.random.Generator) -> list[RunRecord]:
    """Every job of one simulated campaign."""
    return [run for cell in range(condition.cells)
            for run in job_runs(condition, rng, f"b{cell}")]


def _mann_kendall_p(runs: list[RunRecord]) -> float:
    """The former drift test: Kendall's tau of the ratios to each strategy's median against
    the order, as if the runs were independent."""
    ordered = sorted(runs, key=lambda r: r.order_index)
    median = {s: float(np.median([r.time_s for r in ordered if r.strategy == s]))
              for s in {r.strategy for r in ordered}}
    return float(stats.kendalltau(np.arange(len(ordered)),
                                  [r.time_s / median[r.strategy] for r in ordered]).pvalue)


def measure(condition: Condition, campaigns: int, alpha: float = 0.05, seed: int = 1) -> dict:
    """The rates of one condition over ``campaigns`` simulated campaigns (see the module's
    text): ``cell_false``, ``campaign_false_cell``, ``campaign_false_report``, ``cell_found``,
    ``report_found``, ``clear``, ``drift_job``, ``drift_campaign``, ``drift_job_former``,
    ``runs`` (per strategy and cell), with ``cells``, ``jobs`` and ``campaigns`` counted."""
    rng = np.random.default_rng(seed)
    planted = set(condition.planted)
    counts = dict.fromkeys(("cell_false", "campaign_false_cell", "campaign_false_report",
                            "cell_found", "report_found", "clear", "drift_job",
                            "drift_campaign", "drift_job_former", "runs"), 0)
    for _ in range(campaigns):
        records = campaign_runs(condition, rng)
        verdicts, comparisons = verdict_tables(records, BASELINE, alpha,
                                               order=[BASELINE, *condition.names])
        by_cell: dict[str, list[dict]] = {}
        for row in comparisons:
            by_cell.setdefault(row["benchmark"], []).append(row)
        false_cells = [any(c["outcome"] != "none" and c["experiment"] not in planted
                           for c in rows)
                       for rows in by_cell.values()]
        counts["cell_false"] += sum(false_cells)
        counts["campaign_false_cell"] += any(false_cells)
        counts["campaign_false_report"] += any(c["outcome_report"] != "none"
                                               and c["experiment"] not in planted
                                               for c in comparisons)
        counts["cell_found"] += sum(c["faster"] for c in comparisons if c["strategy"] in planted)
        counts["report_found"] += sum(c["faster_report"] for c in comparisons
                                      if c["strategy"] in planted)
        counts["clear"] += sum(v["clear_winner"] for v in verdicts)
        counts["drift_job"] += sum(v["drift_p"] is not None and v["drift_p"] <= alpha
                                   for v in verdicts)
        counts["drift_campaign"] += any(v["drift"] for v in verdicts)
        counts["runs"] += sum(r.strategy == BASELINE for r in records)
        jobs: dict[str, list[RunRecord]] = {}
        for record in records:
            jobs.setdefault(record.benchmark, []).append(record)
        counts["drift_job_former"] += sum(_mann_kendall_p(runs) <= alpha for runs in jobs.values())
    cells = campaigns * condition.cells
    per = {"cell_false": cells, "campaign_false_cell": campaigns,
           "campaign_false_report": campaigns, "cell_found": cells * max(len(planted), 1),
           "report_found": cells * max(len(planted), 1), "clear": cells, "drift_job": cells,
           "drift_campaign": campaigns, "drift_job_former": cells, "runs": cells}
    return {key: value / per[key] for key, value in counts.items()} | {
        "cells": cells, "campaigns": campaigns, "jobs": cells}


def standard_error(rate: float, count: int) -> float:
    """The Monte-Carlo standard error of a rate estimated from ``count`` trials."""
    return math.sqrt(max(rate * (1 - rate), 1e-12) / count)


# --- the location tests compared ---------------------------------------------------------------

def _wmw(x: np.ndarray, y: np.ndarray) -> float:
    """The former test: one-sided Wilcoxon-Mann-Whitney, exact below 50 runs, as R does."""
    method = "exact" if max(len(x), len(y)) < 50 else "asymptotic"
    return float(stats.mannwhitneyu(x, y, alternative="greater", method=method).pvalue)


def _brunner_munzel_t(x: np.ndarray, y: np.ndarray) -> float:
    """Brunner-Munzel's test with its t approximation (scipy), one-sided."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # samples apart: its df is 0/0
        p = stats.brunnermunzel(x, y, alternative="greater").pvalue
    return float(p) if np.isfinite(p) else (0.0 if np.median(x) > np.median(y) else 1.0)


CANDIDATES: dict[str, Callable[[np.ndarray, np.ndarray], float]] = {
    "wilcoxon-mann-whitney": _wmw,
    "brunner-munzel (t)": _brunner_munzel_t,
    "brunner-munzel (permutation)": lambda x, y: brunner_munzel(x, y, welch=False)[0],
    "brunner-munzel (permutation, Welch df)": lambda x, y: brunner_munzel(x, y)[0],
}


def candidate_rates(n: int, spreads: tuple[float, float], tests: int, cells: int,
                    families: int, alpha: float = 0.05, seed: int = 2, noise_kind="normal"
                    ) -> dict[str, tuple[float, float]]:
    """Per location test: (the share of cells of ``tests`` strategies, all with the
    baseline's median and spread ``spreads[1]`` against its ``spreads[0]``, where Holm
    names any faster; the share of families of ``cells`` such cells where Holm over all
    of them does), over ``families`` families."""
    rng = np.random.default_rng(seed)
    found = {name: [0, 0] for name in CANDIDATES}
    for _ in range(families):
        raw = {name: [] for name in CANDIDATES}
        for _ in range(cells):
            base = np.exp(spreads[0] * noise(rng, n, noise_kind, 0.0))
            others = [np.exp(spreads[1] * noise(rng, n, noise_kind, 0.0)) for _ in range(tests)]
            for name, test in CANDIDATES.items():
                p = [test(base, other) for other in others]
                raw[name].append(p)
                found[name][0] += min(holm(p)) <= alpha
        for name in CANDIDATES:
            found[name][1] += min(holm([p for cell in raw[name] for p in cell])) <= alpha
    return {name: (cell / (families * cells), family / families)
            for name, (cell, family) in found.items()}


# --- the study's Speedup-Test ------------------------------------------------------------------

def study_rates(n: int, noise_kind: str, pairs: int, alpha: float = 0.05, seed: int = 3,
                resamples: int = 1000) -> dict[str, float]:
    """The study's per-strategy Speedup-Test on pairs of samples from one distribution:
    how often its shape check (Kolmogorov-Smirnov on median-centred samples) rejects, how
    often the mean test is "not applied", how often either test calls the variant faster,
    and how often the BCa interval of the mean speedup (``resamples`` resamples; 0: not
    computed) covers 1."""
    rng = np.random.default_rng(seed)
    counts = {"shape_rejected": 0, "mean_not_applied": 0, "significant": 0, "mean_ci_covers": 0}
    for k in range(pairs):
        x = np.exp(0.05 * noise(rng, n, noise_kind, 0.0))
        y = np.exp(0.05 * noise(rng, n, noise_kind, 0.0))
        mean, median = mean_test(x, y, alpha), median_test(x, y, alpha)
        counts["shape_rejected"] += median["ks_p"] <= alpha
        counts["mean_not_applied"] += mean["test"] == "not applied"
        counts["significant"] += mean["significant"] or median["significant"]
        if resamples:
            low, high = bootstrap_intervals(x, y, 1 - alpha, resamples, k)["speedup_mean"]
            counts["mean_ci_covers"] += low <= 1 <= high
    return {key: value / pairs for key, value in counts.items()}


# --- two campaigns compared (pinbench compare) -----------------------------------------------

@dataclass(frozen=True)
class Pair:
    """Two simulated campaigns of the same cells, B's first ``slowed`` cells ``slowdown``
    times slower than A's (the others equal), compared with a ``threshold`` (a fraction)."""

    name: str
    cells: int = 18
    n: int = 20
    spread: float = 0.05  #: A's spread of log run times
    spread_b: float | None = None  #: B's (None: A's)
    noise: str = "normal"
    slowdown: float = 1.0
    slowed: int = 0
    threshold: float = 0.0


def pair_rates(pair: Pair, comparisons: int, alpha: float = 0.05, seed: int = 4) -> dict:
    """Over ``comparisons`` simulated pairs: the share in which the gate fails (``gate``),
    in which a cell not slower beyond the threshold is called slower (``false_slower``: the
    gate's false alarms) or any cell not slowed is called slower or faster (``false_any``),
    and the share of slowed cells found slower (``found``)."""
    rng = np.random.default_rng(seed)
    counts = dict.fromkeys(("gate", "false_slower", "false_any", "found"), 0)
    beyond = pair.slowdown > 1 + pair.threshold + 1e-12
    for _ in range(comparisons):
        a, b = {}, {}
        for cell in range(pair.cells):
            key = ("m", f"b{cell}", 4, "os")
            a[key] = list(np.exp(pair.spread * noise(rng, pair.n, pair.noise, 0.0)))
            factor = pair.slowdown if cell < pair.slowed else 1.0
            b[key] = list(factor * np.exp((pair.spread_b or pair.spread)
                                          * noise(rng, pair.n, pair.noise, 0.0)))
        rows = compare(a, b, pair.threshold, alpha, resamples=0)[0]
        slowed = rows[:pair.slowed]
        unslowed = rows[pair.slowed:]
        counts["gate"] += gate(rows)
        counts["false_slower"] += any(r["verdict"] == SLOWER for r in
                                      (unslowed if beyond else rows))
        counts["false_any"] += any(r["verdict"] in (SLOWER, FASTER) for r in unslowed)
        counts["found"] += sum(r["verdict"] == SLOWER for r in slowed)
    return {key: value / (comparisons * max(pair.slowed, 1) if key == "found" else comparisons)
            for key, value in counts.items()} | {"comparisons": comparisons}


def pairs(size: str, alpha: float = 0.05) -> list[tuple[Pair, int]]:
    """The compared pairs and how many comparisons each (``small``: the test's; ``full``)."""
    full = size == "full"
    base = Pair("H0: nothing differs", n=35 if full else 20)
    count = 1000 if full else 150
    found = detectable_speedup(math.sqrt(2) * base.spread, base.n, base.n, alpha / 2 / base.cells)
    conditions = [
        (base, count),
        (replace(base, name="H0, B spread 10%, A 2%", spread=0.02, spread_b=0.10), count),
        (replace(base, name="every cell 5% slower, threshold 5%", slowdown=1.05,
                 slowed=base.cells, threshold=0.05), count),
        (replace(base, name=f"one cell slower by its detectable ratio, {found:.4f} "
                            f"({base.n} runs)", slowdown=found, slowed=1), count // 2),
    ]
    if full:
        conditions += [
            (replace(base, name="H0, 10 runs", n=10), count),
            (replace(base, name="H0, heavy tails (t3)", noise="heavy"), count // 2),
            (replace(base, name="H0, bimodal", noise="bimodal"), count // 2),
            (replace(base, name="H0, B spread 10%, A 2%, 10 runs", n=10, spread=0.02,
                     spread_b=0.10), count),
            (replace(base, name="one cell 3% slower", slowdown=1.03, slowed=1), count // 2),
            (replace(base, name="one cell 5% slower", slowdown=1.05, slowed=1), count // 2),
            (replace(base, name="one cell 5% slower, threshold 5%", slowdown=1.05, slowed=1,
                     threshold=0.05), count // 2),
            (replace(base, name="one cell 10% slower, threshold 5%", slowdown=1.10,
                     slowed=1, threshold=0.05), count // 2),
            (replace(base, name="every cell 3% slower", slowdown=1.03, slowed=base.cells),
             count // 4),
            (replace(base, name="one cell 10% slower, 10 runs", n=10, slowdown=1.10,
                     slowed=1), count // 2),
        ]
    return conditions


def compare_report(size: str, alpha: float, seed: int) -> None:
    """Print :func:`pair_rates` of every pair of :func:`pairs`."""
    print("\ncampaigns compared (pinbench compare): comparisons | gate fails | a cell not "
          "slower beyond the threshold called slower | an unchanged cell called slower or "
          "faster | slowed cells found")
    for k, (pair, count) in enumerate(pairs(size, alpha)):
        started = time.process_time()
        r = pair_rates(pair, count, alpha, seed + k)
        beyond = pair.slowdown > 1 + pair.threshold + 1e-12
        found = _pct(r["found"], count * pair.slowed) if beyond else "-"
        print(f"{pair.name} | {count} | {_pct(r['gate'], count)} | "
              f"{_pct(r['false_slower'], count)} | {_pct(r['false_any'], count)} | {found} "
              f"[{time.process_time() - started:.0f} s]", flush=True)


# --- the grid ------------------------------------------------------------------------------------

def _mde_condition(base: Condition, alpha: float) -> Condition:
    """``base`` with s1 faster by the speedup its cells could detect (per cell, 80%)."""
    tests = base.strategies - (base.twin is not None)
    speedup = detectable_speedup(math.sqrt(2) * base.spread, base.n, base.n, alpha / tests,
                                 sides=2)
    return replace(base, name=f"s1 faster by its detectable speedup, {speedup:.4f} "
                              f"({base.n} runs)", planted={"s1": 1 / speedup})


def grid(size: str, alpha: float = 0.05) -> list[tuple[Condition, int]]:
    """The conditions and how many campaigns each (``small``: the test's; ``full``)."""
    full = size == "full"
    k, n = (8, 35) if full else (4, 20)
    base = Condition("H0: nothing differs", strategies=k, n=n)

    def campaigns(count: int) -> int:  # the full grid's count, or the small grid's
        return count if full else max(10, count // 10)

    conditions = [
        (base, campaigns(1000)),
        (replace(base, name="two strategies equally 5% faster",
                 planted={"s1": 1 / 1.05, "s3": 1 / 1.05}), campaigns(300)),
        (replace(base, name="equal medians, strategies spread 10%, baseline 2%", spread=0.02,
                 strategy_spread=0.10), campaigns(1000)),
        (replace(base, name="no drift, AR(1) noise of lag-1 correlation 0.5", ar=0.5),
         campaigns(700)),
        (_mde_condition(base, alpha), campaigns(200)),
        (replace(base, name="3 runs, 2 strategies, s1 50% faster", strategies=2, n=3,
                 planted={"s1": 1 / 1.5}), campaigns(100)),
    ]
    if full:
        conditions += [
            (replace(base, name="H0, 10 runs", n=10), 600),
            (replace(base, name="equal medians, spread 10% vs 2%, 10 runs", n=10, spread=0.02,
                     strategy_spread=0.10), 600),
            (replace(base, name="two strategies equally 5% faster, 10 runs", n=10,
                     planted={"s1": 1 / 1.05, "s3": 1 / 1.05}), 300),
            (replace(base, name="three strategies equally 5% faster",
                     planted={"s1": 1 / 1.05, "s3": 1 / 1.05, "s4": 1 / 1.05}), 100),
            (replace(base, name="H0, heavy tails (t3)", noise="heavy"), 300),
            (replace(base, name="H0, bimodal", noise="bimodal"), 300),
            (replace(base, name="no drift, AR(1) 0.5, 10 runs", n=10, ar=0.5), 600),
            (replace(base, name="no drift, AR(1) 0.8", ar=0.8), 300),
            (replace(base, name="H0, stopping at 2% from round 10", spread=0.02,
                     stopping={"min": 10, "precision": 0.02, "confidence": 1 - alpha}), 300),
            (replace(base, name="s1 3% faster", planted={"s1": 1 / 1.03}), 150),
            (replace(base, name="s1 5% faster", planted={"s1": 1 / 1.05}), 150),
            (replace(base, name="s1 10% faster, 10 runs", n=10, planted={"s1": 1 / 1.1}), 200),
            (_mde_condition(replace(base, n=10), alpha), 200),
        ]
    return conditions


def _provenance() -> str:
    commit = identity()["commit"]
    return (f"{datetime.date.today()}, {platform.node()} ({platform.machine()}, "
            f"{platform.python_implementation()} {platform.python_version()}), "
            f"commit {commit[:12] if commit else 'unknown'}")


def _pct(rate: float, count: int) -> str:
    return f"{rate:6.2%} ± {standard_error(rate, count):.2%}"


def main(argv: list[str] | None = None) -> int:
    """Print the verdicts' error rates and power over simulated campaigns."""
    parser = argparse.ArgumentParser(prog="python -m pinbench.stats.simulate",
                                     description=main.__doc__)
    parser.add_argument("--grid", choices=("small", "full"), default="full")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--part", choices=("all", "compare"), default="all",
                        help="compare: only the campaigns compared (pinbench compare)")
    args = parser.parse_args(argv)
    full, alpha = args.grid == "full", args.alpha
    print(f"# {args.grid} grid, alpha = {alpha}: {_provenance()}")
    if args.part == "compare":
        compare_report(args.grid, alpha, args.seed)
        return 0
    print("condition | cells, jobs | per-cell false winner | campaigns with a false winner: "
          "read per cell / report-wide | planted found: per cell / report-wide | clear "
          "winners | drift: jobs flagged (former test) / campaigns marked | runs per strategy")
    for k, (condition, campaigns) in enumerate(grid(args.grid, alpha)):
        started = time.process_time()
        r = measure(condition, campaigns, alpha, args.seed + k)
        cells = r["cells"]
        found = (f"{_pct(r['cell_found'], cells)} / {_pct(r['report_found'], cells)}"
                 if condition.planted else "-")
        print(f"{condition.name} | {cells} | {_pct(r['cell_false'], cells)} | "
              f"{_pct(r['campaign_false_cell'], campaigns)} / "
              f"{_pct(r['campaign_false_report'], campaigns)} | {found} | "
              f"{_pct(r['clear'], cells)} | {_pct(r['drift_job'], cells)} "
              f"({r['drift_job_former']:.2%}) / {_pct(r['drift_campaign'], campaigns)} | "
              f"{r['runs']:.1f} [{time.process_time() - started:.0f} s]", flush=True)
    print("\nlocation tests, Holm per cell of 8 tests / over 18 such cells (share naming any):")
    families = 150 if full else 10
    for n, spreads in ((10, (0.05, 0.05)), (10, (0.02, 0.10)), (35, (0.02, 0.10)),
                       (35, (0.10, 0.02))):
        for name, (cell, family) in candidate_rates(n, spreads, 8, 18, families, alpha).items():
            print(f"  n = {n}, spreads {spreads[0]:.0%} (baseline) {spreads[1]:.0%}: {name:<40} "
                  f"{_pct(cell, families * 18)} / {_pct(family, families)}", flush=True)
    print("\nthe study's Speedup-Test, pairs from one distribution (spread 5%):")
    pairs = 1000 if full else 100
    for n in (10, 25, 35):
        for kind in NOISES:
            r = study_rates(n, kind, pairs, alpha, resamples=1000 if full else 0)
            print(f"  n = {n:>2}, {kind:<7}: shape check rejects {r['shape_rejected']:.2%}, mean "
                  f"test not applied {r['mean_not_applied']:.2%}, mean or median significant "
                  f"{r['significant']:.2%}"
                  + (f", mean speedup BCa interval covers 1 in {r['mean_ci_covers']:.1%}"
                     if full else ""), flush=True)
    print("\nleast repetitions for a significance to be reachable (Holm at alpha):",
          ", ".join(f"{m} tests: {least_repetitions(m, alpha, sides=2)}"
                    for m in (1, 2, 8, 18, 144, 500)))
    compare_report(args.grid, alpha, args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
