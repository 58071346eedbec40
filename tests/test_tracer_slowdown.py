"""perf/tracer_slowdown.py: the ratios it reports and the verdict it draws (no runs)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "perf" / "tracer_slowdown.py"


@pytest.fixture(scope="module")
def ts():
    spec = importlib.util.spec_from_file_location("tracer_slowdown", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_summary_gives_medians_and_the_fastest_run(ts):
    # bimodal native runs: a fast mode near 0.1 s and a slow one near 0.3 s
    assert ts.summary([(0.3, 0.29), (0.1, 0.09), (0.31, None), (0.11, 0.1), (0.3, 0.28)]) == (
        0.3, pytest.approx(0.19), 0.1)


def test_report_prints_both_ratios(ts, capsys):
    med = {"native": (0.3, 0.2, 0.1), "tsan": (1.2, 0.8, 1.1), "valgrind": (6.0, None, 5.0)}
    assert ts.report("quads active", med) == (pytest.approx(4.0), pytest.approx(11.0))
    line = capsys.readouterr().out
    assert "tsan    1.20 s    4.0x (kernel    4.0x, fastest 11.0x)" in line
    assert "fastest 0.100" in line and "valgrind    6.00 s   20.0x (kernel    -  )" in line


def test_verdict_compares_the_chosen_ratio_with_the_target(ts):
    worst = {("active", False, "median"): (9.3, "quads"),
             ("active", False, "fastest"): (10.8, "quads"),
             ("active", True, "median"): (7.2, "spmv"),
             ("active", True, "fastest"): (5.4, "spmv")}
    fastest = ts.verdicts(worst, ["active"])
    assert fastest[0].endswith("target 10x on the fastest-run ratio: NOT met")
    assert "medians at most 9.3x native (quads), fastest runs at most 10.8x (quads)" in fastest[0]
    assert fastest[1].endswith("target 10x on the fastest-run ratio: met")
    median = ts.verdicts(worst, ["active"], "median")
    assert median[0].endswith("target 10x on the median ratio: met")
    assert ts.verdicts(worst, ["passive"]) == []
