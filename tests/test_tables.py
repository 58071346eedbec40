"""Campaign tables on planted data: per-cell verdicts and the study's summary."""
import csv
import dataclasses
import json
import random

import pytest

from conftest import run_record

from pinbench.results.runs import write_runs
from pinbench.results.layout import STATS_FILES
from pinbench.stats.analyse import analyse
from pinbench.stats.tables import cell_table, summary_table

BENCHMARKS = ["b1", "b2", "b3", "b4"]
#: strategy -> factor on the baseline's run time
PLANTED = {"os": 1.0, "fast": 0.8, "same": 1.0, "slow": 1.25}


def planted_runs(reps: int = 35, seed: int = 3) -> list:
    rng = random.Random(seed)
    rows = []
    for bench_index, bench in enumerate(BENCHMARKS):
        base = 1.0 + bench_index  # benchmarks of different lengths
        for strategy, factor in PLANTED.items():
            for rep in range(reps):
                rows.append(run_record(
                    benchmark=bench, strategy=strategy, repetition=rep, order_index=rep,
                    time_s=base * factor * rng.gauss(1.0, 0.02),
                    verification="n/a" if strategy == "os" else "ok"))
    return rows


@pytest.fixture(scope="module")
def cells():
    return cell_table(planted_runs(), "os", 0.95)


def test_every_cell_is_tested_against_the_baseline(cells):
    assert len(cells) == len(BENCHMARKS) * len(PLANTED)
    for cell in cells:
        if cell["strategy"] == "os":
            assert cell["mean_test"] is None and cell["speedup_mean"] is None
            continue
        factor = PLANTED[cell["strategy"]]
        assert cell["speedup_mean"] == pytest.approx(1 / factor, rel=0.03)
        if cell["strategy"] != "same":  # "same" is significant at rate alpha, by chance
            assert cell["mean_significant"] == cell["median_significant"] == (cell["strategy"] == "fast")
        assert cell["speedup_mean_low"] <= cell["speedup_mean"] <= cell["speedup_mean_high"]


def test_summary_has_the_study_columns(cells):
    summary = {row["strategy"]: row for row in summary_table(cells, "os", 0.95)}
    assert summary["os"]["overall_speedup_mean"] == 1.0 and summary["os"]["significant_mean"] is None
    fast = summary["fast"]
    assert fast["benchmarks"] == 4 and fast["significant_mean"] == fast["significant_median"] == 4
    assert fast["overall_speedup_mean"] == pytest.approx(1.25, rel=0.02)
    assert fast["geomean_speedup_median"] == pytest.approx(1.25, rel=0.02)
    assert fast["significant_mean_low"] == pytest.approx(0.3958, abs=1e-4)  # prop.test(4, 4)
    assert fast["significant_mean_high"] == 1.0
    assert summary["slow"]["significant_mean"] == 0 and summary["same"]["significant_median"] <= 1
    # 4 of 4: c(1-c) = 0 would say no benchmark is needed; the interval [0.396, 1] leaves
    # 1/2 possible, the hardest share to estimate: ceil(1.96^2 * 0.25 / 0.01)
    assert fast["benchmarks_for_precision"] == 97
    assert summary["os"]["benchmarks_for_precision"] is None
    assert fast["variance_min"] < fast["variance_max"]


def test_weights_change_the_overall_speedup_but_not_the_geometric_mean(cells):
    equal = {r["strategy"]: r for r in summary_table(cells, "os", 0.95)}
    heavy = {r["strategy"]: r for r in summary_table(cells, "os", 0.95, {"b4": 100.0})}
    b4 = next(c for c in cells if c["benchmark"] == "b4" and c["strategy"] == "fast")
    base_b4 = next(c for c in cells if c["benchmark"] == "b4" and c["strategy"] == "os")
    assert heavy["fast"]["overall_speedup_mean"] != equal["fast"]["overall_speedup_mean"]
    assert heavy["fast"]["overall_speedup_mean"] == pytest.approx(
        base_b4["mean_s"] / b4["mean_s"], rel=0.01)
    assert heavy["fast"]["geomean_speedup_mean"] == equal["fast"]["geomean_speedup_mean"]


def test_strategies_with_the_same_runs_share_one_speedup_test(monkeypatch):
    """A strategy measured once for another (the same placement) holds the same runs: one
    Speedup-Test serves both, with the numbers of a test of its own."""
    import pinbench.stats.tables

    runs = planted_runs(reps=10)
    twin = [dataclasses.replace(r, strategy="twin") for r in runs if r.strategy == "fast"]
    alone = {(c["benchmark"], c["strategy"]): c for c in cell_table(runs, "os", 0.95)}
    tested = []
    real = pinbench.stats.tables.speedup_test
    monkeypatch.setattr(pinbench.stats.tables, "speedup_test",
                        lambda *args, **kwargs: tested.append(args) or real(*args, **kwargs))
    both = {(c["benchmark"], c["strategy"]): c for c in cell_table(runs + twin, "os", 0.95)}
    assert len(tested) == len(BENCHMARKS) * (len(PLANTED) - 1)  # not one more for the twins
    for bench in BENCHMARKS:
        assert both[(bench, "twin")] | {"strategy": "fast"} == alone[(bench, "fast")]
        assert both[(bench, "fast")] == alone[(bench, "fast")]


def test_cells_without_enough_runs_are_not_tested():
    rows = [r for r in planted_runs(reps=2)]
    cells = cell_table(rows, "os", 0.95)
    tested = [c for c in cells if c["strategy"] != "os"]
    assert all(c["mean_test"] == "not applied" and not c["mean_significant"] for c in tested)
    assert all(row["benchmarks"] == 0 for row in summary_table(cells, "os", 0.95))


def test_analyse_writes_csv_json_and_text(tmp_path):
    write_runs(planted_runs(reps=10), tmp_path / "runs.csv")
    out = tmp_path / "stats"
    out.mkdir()
    text = analyse(tmp_path / "runs.csv", {kind: out / name for kind, name in STATS_FILES.items()},
                   campaign="c", baseline="os", confidence=0.95)
    with (tmp_path / "stats" / "cells.csv").open() as handle:
        assert len(list(csv.DictReader(handle))) == 16
    data = json.loads((tmp_path / "stats" / "stats.json").read_text())
    assert data["meta"]["baseline"] == "os" and len(data["summary"]) == 4
    assert "fast" in text and "4/4" in text


def test_printed_tables_carry_the_precision_count_and_each_warning_once():
    from pinbench.stats.tables import SUMMARY_COLUMNS, tables_text

    row = dict.fromkeys(SUMMARY_COLUMNS) | {
        "machine": "m", "threads": 2, "strategy": "compact", "benchmarks": 6,
        "significant_mean": 2, "significant_mean_low": 0.06, "significant_mean_high": 0.76,
        "significant_median": 5, "significant_median_low": 0.36,
        "significant_median_high": 0.99, "benchmarks_for_precision": 86,
        "warnings": "2 of 6: too few; 5 of 6: too few"}
    text = tables_text([row, row | {"strategy": "scatter"}], "os", 0.95)
    assert "±0.1" in text.splitlines()[1]
    assert text.count(" 86  [1] [2]") == 2
    assert text.count("prop.test: 2 of 6: too few") == 1
