"""The headline verdicts: identical placements merged, Holm's family-wise error in a cell and
over the report, a clear winner or not, drift along the run order; the analysis command on a
runs table. Their error rates over simulated campaigns: tests/test_error_rates.py."""
import csv

import numpy as np
import pytest
from scipy import stats
from conftest import run_record

from pinbench.place.symmetry import canonical_form
from pinbench.results.runs import write_runs
from pinbench.topology import load
from pinbench.cli import main as pinbench
from pinbench.stats.analyse import read_verdicts
from pinbench.stats.drift import across_jobs, drift, trend_test
from pinbench.stats.simulate import noise, standard_error
from pinbench.stats.verdicts import cell_verdict, holm, report_wide


def cell(plan: dict[str, tuple[str, float]], n: int = 35, seed: int = 0, sigma: float = 0.03,
         order: str = "interleaved") -> list:
    """Runs of one cell: strategy -> (planned PUs, factor on the baseline's time)."""
    rng = np.random.default_rng(seed)
    pairs = [(s, rep) for s in plan for rep in range(n)]
    if order == "interleaved":
        rng.shuffle(pairs)
    runs = []
    for index, (strategy, rep) in enumerate(pairs):
        pus, factor = plan[strategy]
        time_s = float(factor * rng.lognormal(0, sigma))
        runs.append(run_record(strategy=strategy, repetition=rep, order_index=index,
                               time_s=time_s, pus=pus, verification="ok" if pus else "n/a"))
    return runs


def test_holm_against_hand_computed_values():
    assert holm([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, 0.09, 0.09, 0.5])
    assert holm([0.2]) == [0.2]


def test_identical_placements_are_one_experiment_tested_once():
    runs = cell({"os": ("", 1.0), "compact": ("0 1", 0.8), "scatter": ("0 1", 0.8),
                 "lp-compact": ("0 1", 0.8), "gp": ("1 0", 1.0)})
    verdict = cell_verdict(runs, "os", 0.05, order=["os", "compact", "scatter", "lp-compact", "gp"])
    assert verdict["tests"] == 2 and verdict["best"] == "compact"
    assert verdict["stands_for"] == "scatter lp-compact" and verdict["identical"] == \
        "compact = scatter = lp-compact"
    assert verdict["clear_winner"] and verdict["runner_up"] == "gp"
    by = {c["strategy"]: c for c in verdict["comparisons"]}
    assert by["scatter"]["experiment"] == "compact" and by["scatter"]["p_raw"] == by["compact"]["p_raw"]
    assert by["gp"]["p_adjusted"] >= by["gp"]["p_raw"]


def test_placements_equal_up_to_a_symmetry_are_one_experiment():
    topo = load("Package:1 Core:2 PU:1")  # two identical cores: [0, 1] and [1, 0] are alike
    runs = cell({"os": ("", 1.0), "compact": ("0 1", 1.0), "gp": ("1 0", 1.0),
                 "random": ("", 1.0)})
    for run in runs:  # random draws a placement per repetition
        if run.strategy == "random":
            run.pus = "0 1" if run.repetition % 2 else "1 0"
    verdict = cell_verdict(runs, "os", 0.05, lambda m, pus: canonical_form(topo, list(pus)))
    assert verdict["identical"] == "compact = gp" and verdict["tests"] == 2  # random stays apart
    assert verdict["coincide"]
    plain = cell_verdict(runs, "os", 0.05)  # without the tree: only equal lists merge
    assert plain["identical"] == "" and plain["tests"] == 3 and not plain["coincide"]


def test_a_winner_is_clear_only_when_it_beats_every_other_strategy():
    clear = cell_verdict(cell({"os": ("", 1), "a": ("0", 0.7), "b": ("1", 0.95), "c": ("2", 1)}),
                         "os", 0.05)
    assert clear["best"] == "a" and clear["clear_winner"] and clear["runner_up"] == "b"
    assert clear["p_best_vs_others"] <= 0.05
    tied = cell_verdict(cell({"os": ("", 1), "a": ("0", 0.8), "b": ("1", 0.8)}, seed=3), "os", 0.05)
    assert tied["best"] in ("a", "b") and not tied["clear_winner"] and tied["p_adjusted"] <= 0.05
    slower = cell_verdict(cell({"os": ("", 1), "a": ("0", 1.3)}), "os", 0.05)
    assert slower["best"] == "" and slower["p_raw"] is None  # a slowdown is never a winner
    alone = cell_verdict(cell({"os": ("", 1), "a": ("0", 0.8)}), "os", 0.05)
    assert alone["clear_winner"] and alone["p_best_vs_others"] is None  # the only one tested


def test_a_cell_without_a_winner_says_what_it_could_have_found():
    """The detectable speedup grows with the noise, and is None when the runs cannot reach
    significance at all (3 runs, two tests: 1/20 > 0.05 / 2)."""
    quiet = cell_verdict(cell({"os": ("", 1), "a": ("0", 1), "b": ("1", 1)}, sigma=0.01), "os",
                         0.05)
    noisy = cell_verdict(cell({"os": ("", 1), "a": ("0", 1), "b": ("1", 1)}, sigma=0.05), "os",
                         0.05)
    assert quiet["best"] == noisy["best"] == ""
    assert 1 < quiet["detectable"] < 1.02 < noisy["detectable"] < 1.08
    few = cell_verdict(cell({"os": ("", 1), "a": ("0", 0.5), "b": ("1", 0.5)}, n=3), "os", 0.05)
    assert few["best"] == "" and few["detectable"] is None  # even halving the time
    by = {c["strategy"]: c for c in noisy["comparisons"]}
    assert noisy["detectable"] == max(by["a"]["detectable"], by["b"]["detectable"])


def _two_cells(effect_y_a: float = 0.8) -> tuple[list[dict], list[dict]]:
    """Two cells of two tests each (p-values 0.001, 0.02 and 0.015, 0.5); c stands for a."""
    comparisons, verdicts = [], []
    for bench, p_values in (("x", (0.001, 0.02)), ("y", (0.015, 0.5))):
        names = {"machine": "m", "benchmark": bench, "threads": 2}
        verdicts.append(names | {"best": "a", "tests": 2})
        for strategy, experiment, p in (("a", "a", p_values[0]), ("b", "b", p_values[1]),
                                        ("c", "a", p_values[0])):
            effect = effect_y_a if (bench, experiment) == ("y", "a") else 0.8
            comparisons.append(names | {"strategy": strategy, "experiment": experiment,
                                        "p_raw": p, "runs": 20, "baseline_runs": 20,
                                        "noise": 0.05, "effect": effect,
                                        "speedup_median": 1.1 if effect > 0.5 else 0.9})
    return verdicts, comparisons


def test_the_report_wide_decision_is_holm_over_every_cell():
    """Holm over the four p-values, not per cell; an experiment that stands for two
    strategies is one test."""
    verdicts, comparisons = _two_cells()
    report_wide(verdicts, comparisons, 0.05)
    by = {(c["benchmark"], c["strategy"]): c for c in comparisons}
    # Holm over (0.001, 0.02, 0.015, 0.5): 4 x 0.001, max(3 x 0.015, 2 x 0.02), 0.5
    assert [by[k]["p_report"] for k in (("x", "a"), ("x", "b"), ("y", "a"), ("y", "b"))] == \
        pytest.approx([0.004, 0.045, 0.045, 0.5])
    assert by[("x", "c")]["p_report"] == by[("x", "a")]["p_report"]  # one experiment, one test
    assert [v["best_report"] for v in verdicts] == ["a", "a"]  # x: a and b, a more surely
    assert all(v["tests_report"] == 4 and v["decision_report"] == "fwer" for v in verdicts)
    assert verdicts[0]["detectable_report"] > 1.0 and not verdicts[0]["too_few"]


def test_the_report_wide_outcome_is_slower_where_the_best_is_and_fdr_finds_more():
    verdicts, comparisons = _two_cells(effect_y_a=0.2)  # y: a slower, b not shown to differ
    report_wide(verdicts, comparisons, 0.05)
    by = {(c["benchmark"], c["strategy"]): c for c in comparisons}
    assert by[("y", "a")]["outcome_report"] == "slower" and not by[("y", "a")]["faster_report"]
    # the best placement of y (by median speedup) is b, not shown to differ: not "slower"
    assert [v["outcome_report"] for v in verdicts] == ["faster", "none"]
    verdicts, comparisons = _two_cells(effect_y_a=0.2)
    for row in comparisons:
        if (row["benchmark"], row["experiment"]) == ("y", "b"):
            row["speedup_median"] = 0.8  # now a is the best of y, and slower
    report_wide(verdicts, comparisons, 0.01, "fdr")
    by = {(c["benchmark"], c["strategy"]): c for c in comparisons}
    # Benjamini-Hochberg over (0.001, 0.02, 0.015, 0.5): 0.004, 0.0267, 0.0267, 0.5
    assert [by[k]["p_report"] for k in (("x", "a"), ("x", "b"), ("y", "a"), ("y", "b"))] == \
        pytest.approx([0.004, 0.08 / 3, 0.08 / 3, 0.5])
    assert [v["outcome_report"] for v in verdicts] == ["faster", "none"]  # at 0.01: x a only
    for decision, said in (("fwer", ["faster", "none"]), ("fdr", ["faster", "slower"])):
        verdicts, comparisons = _two_cells(effect_y_a=0.2)
        for row in comparisons:
            if (row["benchmark"], row["experiment"]) == ("y", "b"):
                row["speedup_median"] = 0.8
        report_wide(verdicts, comparisons, 0.03, decision)  # Holm stops at 0.045 > 0.03
        assert [v["outcome_report"] for v in verdicts] == said
        assert all(v["decision_report"] == decision for v in verdicts)


def test_a_cell_of_slower_placements_says_pinning_is_slower():
    runs = cell({"os": ("", 1.0), "compact": ("0 1", 1.12), "scatter": ("0 2", 1.1)}, n=12,
                seed=4)
    verdict = cell_verdict(runs, "os", 0.05)
    assert verdict["outcome"] == "slower" and verdict["slower"] == 2 and not verdict["best"]
    assert {c["outcome"] for c in verdict["comparisons"] if c["strategy"] != "os"} == {"slower"}
    assert not any(c["faster"] for c in verdict["comparisons"])


def test_too_few_runs_say_which_decision_cannot_reject():
    runs = cell({"os": ("", 1.0), "compact": ("0 1", 1 / 1.5), "scatter": ("0 2", 1.0)}, n=4,
                seed=2)
    verdict = cell_verdict(runs, "os", 0.05)
    comparisons = [{"machine": "m", "benchmark": "b", "threads": 2} | c
                   for c in verdict.pop("comparisons")]
    verdicts = [{"machine": "m", "benchmark": "b", "threads": 2} | verdict]
    report_wide(verdicts, comparisons, 0.05)
    assert verdicts[0]["detectable"] is None  # 2/70 > 0.05/2
    assert verdicts[0]["too_few"].startswith("with 4 runs against 4 the smallest p-value is "
                                             "0.029: no strategy can be found faster or slower "
                                             "than the baseline in a cell (2 tests")
    assert "5 runs per strategy can in a cell and over the whole report" in verdicts[0]["too_few"]


def test_planted_drift_is_flagged_and_no_drift_is_not():
    runs = cell({"os": ("", 1.0), "compact": ("0 1", 0.9)}, n=50, seed=1)
    quiet = drift(runs)
    assert quiet["drift_p"] > 0.05 and quiet["run_order"] == "interleaved"
    for run in runs:
        if run.order_index < 50:  # the first 50 runs 3x slower
            run.time_s *= 3
    found = drift(runs)
    assert found["drift_p"] < 1e-4 and found["drift_tau"] < 0
    rows = [found, quiet]
    across_jobs(rows, 0.05)
    assert found["drift"] and found["drift_p_adjusted"] == pytest.approx(2 * found["drift_p"])
    assert not quiet["drift"]
    back_to_back = cell({"os": ("", 1.0), "compact": ("0 1", 0.9)}, n=50, order="back-to-back")
    assert drift(back_to_back)["run_order"] == "back-to-back"


def test_the_trend_test_holds_alpha_with_autocorrelated_runs():
    """Without a trend, with AR(1) noise of lag-1 correlation 0.5 along the order, the corrected
    test flags at most alpha of 300 jobs of 40 runs; Mann-Kendall's test as if the runs were
    independent (the former drift flag) flags several times more."""
    rng = np.random.default_rng(4)
    corrected, independent = [], []
    for _ in range(300):
        ratios = np.exp(0.05 * noise(rng, 40, "normal", 0.5))
        corrected.append(trend_test(list(ratios))[1] <= 0.05)
        independent.append(stats.kendalltau(np.arange(40), ratios).pvalue <= 0.05)
    assert np.mean(corrected) <= 0.05 + 3 * standard_error(0.05, 300)
    assert np.mean(independent) > 3 * 0.05
    warming = [trend_test(list(np.exp(0.05 * noise(rng, 100, "normal", 0.5))
                                   * np.linspace(1.3, 1.0, 100)))[1] for _ in range(20)]
    assert np.mean(np.array(warming) <= 0.01) >= 0.8  # a 30% warm-up over 100 runs is found


def test_the_analysis_command_writes_every_file(tmp_path, capsys):
    runs = cell({"os": ("", 1.0), "compact": ("0 1", 0.8), "scatter": ("1 0", 0.8)})
    write_runs(runs, tmp_path / "runs.csv")
    assert pinbench(["analyse", str(tmp_path / "runs.csv"), str(tmp_path / "out"),
                     "--topology", "m=Package:1 Core:2 PU:1",
                     "--strategies", "os", "compact", "scatter"]) == 0
    assert "Overall speedups" in capsys.readouterr().out
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "cells.csv", "comparisons.csv", "stats.json", "summary.csv", "summary.txt",
        "verdicts.csv"]
    [verdict] = read_verdicts(tmp_path / "out" / "verdicts.csv")
    assert verdict.best == "compact" and verdict.stands_for == "scatter"
    assert verdict.clear_winner and verdict.drift is False and verdict.tests == 1
    assert verdict.best_report == "compact" and verdict.tests_report == 1
    with (tmp_path / "out" / "comparisons.csv").open() as handle:
        assert [r["experiment"] for r in csv.DictReader(handle)] == ["os", "compact", "compact"]


@pytest.mark.parametrize("args, message", [
    (["missing.csv", "out"], "No such file"),
    (["runs.csv", "out", "--baseline", "compact2"], "no run of the baseline 'compact2'"),
    (["bad.csv", "out"], "not a runs table (no column 'machine')"),
])
def test_the_analysis_command_refuses_bad_input_in_one_line(tmp_path, capsys, monkeypatch,
                                                              args, message):
    monkeypatch.chdir(tmp_path)
    write_runs(cell({"os": ("", 1.0), "compact": ("0", 0.9)}, n=5), tmp_path / "runs.csv")
    (tmp_path / "bad.csv").write_text("a,b\n1,2\n")
    assert pinbench(["analyse", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("pinbench analyse: error: ") and message in err


def test_the_closing_line_counts_the_report_wide_winners(tmp_path):
    """Three cells, one strategy 20% faster in one of them: the campaign's closing line counts
    the report-wide winners, says over how many tests, and counts the cells' own verdicts
    apart."""
    from pinbench.results.layout import Layout
    from pinbench.workflow.outcome import campaign_line

    runs = []
    for k, bench in enumerate(("fast", "same", "slow")):
        factor = {"fast": 0.8, "same": 1.0, "slow": 1.15}[bench]
        other = 1.15 if bench == "slow" else 1.0
        for run in cell({"os": ("", 1.0), "a": ("0", factor), "b": ("1", other)}, n=20,
                        seed=10 + k):
            run.benchmark = bench
            runs.append(run)
    layout = Layout(str(tmp_path / "c"))
    write_runs(runs, tmp_path / "c" / "runs.csv")
    assert pinbench(["analyse", layout.all_runs, str(tmp_path / "c" / "stats")]) == 0
    line = campaign_line(layout, 0.05)
    assert line.startswith("180 runs in 3 measurement job(s), 0 failed, 0 misplaced; a strategy "
                           "faster than the baseline in 1 of 3 cells, report-wide (family-wise "
                           "error 0.05 over all 6 tests): fast t2: a; slower than the baseline "
                           "in 1 of 3 cells (the best placement slower, report-wide); in ")
    assert line.endswith("by each cell's own verdict; drift in 0")
    # a verdicts table of an older analysis (a partial call, e.g. --until placement, before
    # the analysis runs again) is said in the line, not raised
    verdicts = tmp_path / "c" / "stats" / "verdicts.csv"
    verdicts.write_text(verdicts.read_text().replace("p_best_vs_others", "p_best_vs_runner_up"))
    line = campaign_line(layout, 0.05)
    assert line.startswith("180 runs in 3 measurement job(s)") and "another version" in line
