"""Two campaigns compared cell by cell: is campaign B slower or faster than campaign A?

A cell is one (machine, benchmark, threads, strategy) that both campaigns measured. For each,
with A's run times as a and B's as b (the runs that count,
:func:`pinbench.stats.cells.describe_cells`):

- the **ratio** median(b) / median(a) (above 1: B is slower) and its BCa bootstrap interval at
  the confidence 1 - alpha (:func:`pinbench.stats.speeduptest.bootstrap_intervals`, a and b
  resampled independently; per cell, not adjusted over the cells);
- two one-sided tests of the verdicts' test (Brunner and Munzel's, by permutation:
  :func:`pinbench.stats.location.brunner_munzel`), with a ``threshold`` t (0 by default):
  ``p_slower`` of "a run of B tends to be slower than a run of A made (1 + t) times slower",
  ``p_faster`` of "a run of B made (1 + t) times slower still tends to be faster than one of
  A". For lognormal times of one shape these are "the ratio is above 1 + t" and "below
  1 / (1 + t)"; the cell's p-value is twice the smaller one (two-sided, at most 1);
- **Holm's step-down over every tested cell of the comparison at once**
  (:func:`pinbench.stats.decisions.holm`): a cell whose adjusted p-value is at most alpha is
  ``slower`` or ``faster``, by the direction of its smaller one-sided p-value, else ``no
  measurable difference``, with the ratio the comparison could have detected (with
  probability 80% at the first Holm level, alpha / 2 / cells, from the cell's own noise:
  :func:`pinbench.stats.detectable.detectable_speedup`, times 1 + t). A cell with fewer
  than :data:`pinbench.stats.sample_size.MIN_N` runs on a side is ``not tested``.

The probability that any cell is called slower (or faster) when none is beyond the
threshold is at most alpha, whatever the dependence between cells (Holm's guarantee; naming
the direction by the smaller one-sided p-value is Shaffer's directional step-down, "Control
of directional errors with stagewise multiple test procedures", Ann. Statist. 8, 1980). So
:func:`gate` (some cell slower) fails a regression gate falsely in at most alpha of the
comparisons: ``python -m pinbench.stats.simulate`` measures it (docs/compare.md).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from pinbench.stats.cells import Key
from pinbench.stats.detectable import comparison_noise, detectable_speedup
from pinbench.stats.location import brunner_munzel
from pinbench.stats.sample_size import MIN_N
from pinbench.stats.speeduptest import bootstrap_intervals
from pinbench.stats.decisions import holm

SLOWER, FASTER, SAME, UNTESTED = "slower", "faster", "no measurable difference", "not tested"
#: The columns of a comparison's table (one row per cell both campaigns measured).
COLUMNS = ["machine", "benchmark", "threads", "strategy", "runs_a", "runs_b", "median_a_s",
           "median_b_s", "ratio", "ratio_low", "ratio_high", "p_slower", "p_faster", "p_cell",
           "p_report", "verdict", "detectable_ratio", "same_as"]
#: Bootstrap resamples of a ratio's interval.
RESAMPLES = 2000


def compare_cell(a: Sequence[float], b: Sequence[float], threshold: float,
                 alpha: float, resamples: int = RESAMPLES) -> dict:
    """One cell's ratio, interval and one-sided p-values (None where fewer than MIN_N runs
    on a side; see the module's text). ``threshold``: t as a fraction (0.05: 5%)."""
    a_, b_ = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    row = {"runs_a": len(a_), "runs_b": len(b_),
           "median_a_s": float(np.median(a_)) if len(a_) else None,
           "median_b_s": float(np.median(b_)) if len(b_) else None,
           "ratio": None, "ratio_low": None, "ratio_high": None, "p_slower": None,
           "p_faster": None, "p_cell": None, "noise": None}
    if len(a_) and len(b_):
        row["ratio"] = row["median_b_s"] / row["median_a_s"]
    if min(len(a_), len(b_)) < MIN_N:
        return row
    interval = bootstrap_intervals(b_, a_, 1 - alpha, resamples, 0)["speedup_median"] \
        if resamples else None
    row["ratio_low"], row["ratio_high"] = interval or (None, None)
    scale = 1 + threshold
    row["p_slower"] = brunner_munzel(b_, a_ * scale)[0]
    row["p_faster"] = brunner_munzel(a_, b_ * scale)[0]
    row["p_cell"] = min(1.0, 2 * min(row["p_slower"], row["p_faster"]))
    row["noise"] = comparison_noise(list(a_), list(b_))
    return row


def compare(a: Mapping[Key, Sequence[float]], b: Mapping[Key, Sequence[float]],
            threshold: float = 0.0, alpha: float = 0.05, resamples: int = RESAMPLES
            ) -> tuple[list[dict], list[Key], list[Key]]:
    """Every cell both campaigns have, compared (rows of :data:`COLUMNS`, in A's order), and
    the cells only A has, and only B has.

    ``a``, ``b``: cell -> run times that count; ``threshold``: t as a fraction (see the
    module's text). Cells with the same runs in both campaigns (strategies measured once
    with one placement, :func:`pinbench.stats.cells.describe_cells`) are one test:
    ``same_as`` names the first such strategy of the cell's (machine, benchmark, threads).
    """
    common = [key for key in a if key in b]
    tests: dict[tuple, dict] = {}  # (machine, benchmark, threads, runs of A, of B) -> test
    rows = []
    for key in common:
        data = (*key[:3], tuple(a[key]), tuple(b[key]))
        if data not in tests:
            tests[data] = compare_cell(a[key], b[key], threshold, alpha, resamples) | {
                "first": key[3]}
        rows.append((key, data))
    tested = [test for test in tests.values() if test["p_cell"] is not None]
    level = alpha / 2 / max(len(tested), 1)
    for test in tests.values():
        test.update(p_report=None, verdict=UNTESTED, detectable_ratio=None)
    for test, p in zip(tested, holm([test["p_cell"] for test in tested]) if tested else []):
        if p <= alpha:
            verdict = SLOWER if test["p_slower"] < test["p_faster"] else FASTER
        else:
            verdict = SAME
        found = detectable_speedup(test["noise"], test["runs_a"], test["runs_b"], level)
        test.update(p_report=p, verdict=verdict,
                    detectable_ratio=None if found is None else found * (1 + threshold))
    compared = []
    for key, data in rows:
        test = tests[data]
        compared.append(dict(zip(COLUMNS[:4], key)) | {name: test[name] for name in COLUMNS[4:-1]}
                        | {"same_as": test["first"] if test["first"] != key[3] else ""})
    return compared, [key for key in a if key not in b], [key for key in b if key not in a]


def gate(rows: list[dict]) -> bool:
    """Whether the comparison fails a regression gate: some cell is slower."""
    return any(row["verdict"] == SLOWER for row in rows)
