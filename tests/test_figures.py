"""The report's matplotlib figures (the cells' figures, drawn by the pages' script, are
tested in tests/test_report.py): drawn once each (fixed geometry, no tight bounding box), with
everything they draw (tick labels, axis labels, legends outside the axes) inside the figure."""
import numpy as np
import pytest
from matplotlib.figure import Figure

from pinbench.report import figures

NAMES = ["os", "random", "compact (+1)", "scatter", "lp-compact", "lp-scatter (+1)", "gp",
         "lpgp", "gplp", "hierarchical"]


def cases():
    rng = np.random.default_rng(3)
    parts = {n: {"T_1": 0.1, "idle": 0.01, "inflation": -0.003, "waits": 0.002} for n in NAMES}
    series = {n: {p: {"speedup_max": p, "speedup_idle": 0.9 * p, "speedup_inflation": 0.8 * p,
                      "speedup_actual": 0.7 * p} for p in (1, 2, 4)} for n in NAMES}
    return {
        "heatmap": lambda: figures.heatmap(rng.random((8, 8)) * 123456.0),
        "heatmap, 64 threads": lambda: figures.heatmap(rng.random((64, 64))),
        "breakdown": lambda: figures.breakdown(parts),
        "factored_speedups": lambda: figures.factored_speedups(series),
        "scaling": lambda: figures.scaling({"os": [(1, 4.0), (2, 2.1)]},
                                           {"os": [4.0, 2.0, 1.4, 1.1]}, 2, 2),
    }


@pytest.mark.parametrize("name", list(cases()))
def test_each_figure_is_drawn_once_and_nothing_falls_outside_it(name, monkeypatch):
    draws, outside = [], []
    draw = Figure.draw

    def counted(fig, renderer):
        draws.append(fig)
        result = draw(fig, renderer)
        # what the figure drew, in inches, against its own box (a tight bounding box
        # wider than the figure: a label or a legend was cut off)
        tight = fig.get_tightbbox(renderer)
        width, height = fig.get_size_inches()
        if tight.x0 < -0.01 or tight.y0 < -0.01 or tight.x1 > width + 0.01 \
                or tight.y1 > height + 0.01:
            outside.append((tight.bounds, (width, height)))
        return result

    monkeypatch.setattr(Figure, "draw", counted)
    svg = cases()[name]()
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    assert len(draws) == 1  # bbox_inches="tight" would draw it twice
    assert outside == []


def test_factored_speedups_legend_names_each_strategy_and_speedup_once(monkeypatch):
    seen = []
    draw = Figure.draw

    def legend_texts(fig, renderer):
        seen.extend(t.get_text() for t in fig.axes[0].get_legend().get_texts())
        return draw(fig, renderer)

    monkeypatch.setattr(Figure, "draw", legend_texts)
    series = {s: {p: {"speedup_max": p, "speedup_actual": 0.7 * p} for p in (1, 2)}
              for s in ("os", "compact")}
    svg = figures.factored_speedups(series)
    assert seen == ["os", "compact", "maximal", "actual"]
    assert svg.count("<text") >= 4  # svg.fonttype none: labels stay text


def test_figures_do_without_pyplot():
    import subprocess
    import sys

    code = "import sys, pinbench.report.figures; print('matplotlib.pyplot' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"  # pyplot's import and figure managers cost time


def test_factored_speedups_ticks_are_the_thread_counts(monkeypatch):
    ticks = []
    draw = Figure.draw

    def record(fig, renderer):
        ticks.extend(fig.axes[0].get_xticks())
        return draw(fig, renderer)

    monkeypatch.setattr(Figure, "draw", record)
    figures.factored_speedups({"os": {2: {"speedup_actual": 1.8}, 8: {"speedup_actual": 5.0}}})
    assert list(ticks) == [2, 8]
