"""The headline verdicts: identical placements merged, Holm's family-wise error, a clear
winner or not, drift along the run order; the analysis command on a runs table."""
import csv
import math

import numpy as np
import pytest
from conftest import run_record

from pinbench.place.symmetry import canonical_form
from pinbench.results.runs import write_runs
from pinbench.topology import load
from pinbench.stats.analyse import main as analyse_main
from pinbench.stats.analyse import read_verdicts
from pinbench.stats.drift import drift
from pinbench.stats.simulate import rates, standard_error
from pinbench.stats.verdicts import cell_verdict, holm


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


def test_a_winner_is_clear_only_when_it_beats_the_runner_up():
    clear = cell_verdict(cell({"os": ("", 1), "a": ("0", 0.7), "b": ("1", 0.95)}), "os", 0.05)
    assert clear["best"] == "a" and clear["clear_winner"] and clear["p_best_vs_runner_up"] < 0.05
    tied = cell_verdict(cell({"os": ("", 1), "a": ("0", 0.8), "b": ("1", 0.8)}, seed=3), "os", 0.05)
    assert tied["best"] in ("a", "b") and not tied["clear_winner"] and tied["p_adjusted"] <= 0.05
    slower = cell_verdict(cell({"os": ("", 1), "a": ("0", 1.3)}), "os", 0.05)
    assert slower["best"] == "" and slower["p_raw"] is None  # a slowdown is never a winner


def test_the_family_wise_rate_under_h0_stays_within_alpha():
    """1,000 simulated cells of 9 strategies equal to the baseline (python -m pinbench.stats.simulate
    runs 5,000 and compares with the old rule)."""
    cells = 1000
    found = rates(cells, 35, 1.0, 0.05, seed=7, compare_old=False)
    fwer = found["new_s1"] + found["new_other"]
    assert fwer <= 0.05 + 3 * standard_error(0.05, cells)
    planted = rates(300, 35, 1 / 1.10, 0.05, seed=8, compare_old=False)
    assert planted["new_s1"] > 0.9 and planted["new_other"] < 0.05  # a 10% speedup is found


def test_planted_drift_is_flagged_and_no_drift_is_not():
    runs = cell({"os": ("", 1.0), "compact": ("0 1", 0.9)}, n=50, seed=1)
    assert not drift(runs, 0.05)["drift"] and drift(runs, 0.05)["order_balanced"]
    for run in runs:
        if run.order_index < 50:  # the first 50 runs 3x slower
            run.time_s *= 3
    found = drift(runs, 0.05)
    assert found["drift"] and found["drift_p"] < 1e-6 and found["drift_tau"] < 0
    back_to_back = cell({"os": ("", 1.0), "compact": ("0 1", 0.9)}, n=50, order="back-to-back")
    assert drift(back_to_back, 0.05)["order_balanced"] is False


def test_the_drift_flag_is_raised_at_rate_alpha_without_drift():
    flags = [drift(cell({"os": ("", 1.0), "a": ("0", 0.9)}, n=20, seed=s), 0.05)["drift"]
             for s in range(400)]
    assert abs(np.mean(flags) - 0.05) <= 3 * math.sqrt(0.05 * 0.95 / 400)


def test_the_analysis_command_writes_every_file(tmp_path, capsys):
    runs = cell({"os": ("", 1.0), "compact": ("0 1", 0.8), "scatter": ("1 0", 0.8)})
    write_runs(runs, tmp_path / "runs.csv")
    assert analyse_main([str(tmp_path / "runs.csv"), str(tmp_path / "out"),
                         "--topology", "m=Package:1 Core:2 PU:1",
                         "--strategies", "os", "compact", "scatter"]) == 0
    assert "Overall speedups" in capsys.readouterr().out
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "cells.csv", "comparisons.csv", "stats.json", "summary.csv", "summary.txt",
        "verdicts.csv"]
    [verdict] = read_verdicts(tmp_path / "out" / "verdicts.csv")
    assert verdict["best"] == "compact" and verdict["stands_for"] == "scatter"
    assert verdict["clear_winner"] and verdict["drift"] is False and verdict["tests"] == 1
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
    assert analyse_main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
