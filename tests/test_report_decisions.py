"""The report-wide decisions and the three-way outcome over simulated campaigns
(pinbench.stats.simulate_report, on tiny grids: the full one, with the figures of
docs/statistics-error-rates.md, is `python -m pinbench.stats.simulate_report`)."""
from dataclasses import replace

import numpy as np
import pytest

from pinbench.cli import main as pinbench
from pinbench.results.runs import write_runs
from pinbench.stats.analyse import read_verdicts
from pinbench.stats.decisions import benjamini_hochberg, holm, outcome
from pinbench.stats.simulate import Condition, campaign_runs
from pinbench.stats.simulate_report import Tally, grid, measure, warned_runs


def test_the_warnings_runs_reach_significance_at_every_level_it_names():
    """At 3 runs the warning names the cell and the report and the runs both need; at those
    runs every planted 1.5x speedup is found by the cell's verdict and report-wide."""
    said, runs = warned_runs(cells=2, strategies=2, alpha=0.05)
    assert "in a cell (2 tests" in said and "over the whole report (4 tests" in said
    assert runs == 6  # reachable: 0.0094 <= 0.05/4 < 0.0246 (5 runs)
    planted = Condition("1.5x", strategies=2, n=runs, cells=2,
                        planted={"s1": 1 / 1.5, "s2": 1 / 1.5})
    tallies = measure(planted, campaigns=3, seed=3)
    for level in ("cell", "fwer", "fdr"):
        assert tallies[level].found == tallies[level].planted == 12
    fewer = measure(replace(planted, n=runs - 1), 2, seed=3)
    assert fewer["fwer"].found < fewer["fwer"].planted  # one run fewer: not always


def test_the_tally_counts_each_kind_of_error():
    planted = {"f": 0.9, "s": 1.1}
    rows = [{"experiment": "f", "o": "slower"},  # wrong way
            {"experiment": "s", "o": "slower"},  # found
            {"experiment": "e", "o": "slower"},  # an equal one named (not faster)
            {"experiment": "e2", "o": "none"}]
    tally = Tally()
    tally.add(rows, "o", planted)
    tally.add([{**row, "o": "none"} for row in rows], "o", planted)
    assert (tally.false, tally.false_any, tally.wrong_way) == (0, 1, 1)
    assert tally.found == 1 and tally.planted == 4
    assert tally.rates()["fdp"][0] == pytest.approx((2 / 3) / 2)


def test_benjamini_hochberg_rejects_what_holm_does_and_more():
    p = [0.001, 0.02, 0.021, 0.022, 0.6]
    by_holm = [q <= 0.05 for q in holm(p)]
    by_bh = [q <= 0.05 for q in benjamini_hochberg(p)]
    assert by_holm == [True, False, False, False, False]
    assert by_bh == [True, True, True, True, False]
    assert [outcome(q, e, 0.05) for q, e in zip(benjamini_hochberg(p), (0.9, 0.1, 0.5, 0.7, 0.9))] \
        == ["faster", "slower", "none", "faster", "none"]


def test_pinbench_analyse_says_which_decision_too_few_runs_cannot_make(tmp_path, capsys):
    """3 runs: the printed tables begin with what the verdicts cannot do and why, beside
    the study's tables that test each strategy alone; the verdicts say it per cell."""
    condition = Condition("3 runs", strategies=2, n=3, cells=2, planted={"s1": 1 / 1.5})
    write_runs(campaign_runs(condition, np.random.default_rng(1)), tmp_path / "runs.csv")
    assert pinbench(["analyse", str(tmp_path / "runs.csv"), str(tmp_path / "stats"),
                         "--report-decision", "fdr"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("too few runs for the verdicts (the tables below test each strategy "
                          "alone at 0.05): with 3 runs against 3 the smallest p-value is 0.1: "
                          "no strategy can be found faster or slower than the baseline in a "
                          "cell (2 tests, Holm at 0.05: at most 0.05/2) nor over the whole "
                          "report (4 tests, Benjamini-Hochberg at 0.05: at most 0.05); ")
    verdicts = read_verdicts(tmp_path / "stats" / "verdicts.csv")
    assert all(v.too_few and v.decision_report == "fdr" for v in verdicts)


def test_the_small_grid_keeps_directions_and_fdr_finds_what_fwer_does():
    """Planted 5% faster, 5% and 3% slower and one equal (6 cells, 12 runs): no decision
    names a planted strategy the wrong way; Benjamini-Hochberg finds at least what Holm does."""
    condition, campaigns = grid("small")[1]
    assert set(condition.planted.values()) == {1 / 1.05, 1.05, 1.03}
    tallies = measure(condition, campaigns, seed=5)
    assert all(t.wrong_way == 0 for t in tallies.values())
    assert tallies["fdr"].found >= tallies["fwer"].found > 0
