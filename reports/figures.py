"""Figures of the report, drawn with matplotlib and returned as inline SVG text.

No text that comes from a campaign file or a benchmark's output is drawn into
a figure: labels are strategy names (a fixed vocabulary), numbers and fixed
words, so the SVG can be inlined without escaping concerns. Titles and
captions live in the HTML, where the template escapes them.
"""
from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "pinbench", "font.size": 9,
                     "axes.spines.top": False, "axes.spines.right": False})
PALETTE = ["#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3",
           "#8C8C8C", "#CCB974", "#64B5CD"]


def _svg(fig, metadata: dict | None = None) -> str:
    """The figure as SVG text; ``metadata``: Dublin Core fields (``Title``, ``Description``,
    ``Date``...) that the file carries, as an exported figure should."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight",
                metadata={"Date": None, "Creator": "pinbench", "Format": None, "Type": None}
                | (metadata or {}))
    plt.close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg"):]  # drop the XML prolog and DOCTYPE for inlining


def distribution(times: dict[str, list[float]], metadata: dict | None = None) -> str:
    """Box plot of run times per strategy with every run as a point (jittered)."""
    names = list(times)
    fig, ax = plt.subplots(figsize=(1.2 + 0.9 * len(names), 2.8))
    data = [times[n] for n in names]
    ax.boxplot(data, tick_labels=names, showfliers=False, widths=0.5,
               medianprops={"color": "black"})
    rng = np.random.default_rng(0)
    for index, values in enumerate(data, start=1):
        jitter = rng.uniform(-0.15, 0.15, len(values))
        ax.scatter(index + jitter, values, s=9, alpha=0.6, color=PALETTE[(index - 1) % 10],
                   zorder=3)
    ax.set_ylabel("run time (s)")
    return _svg(fig, metadata)


def run_order(series: dict[str, list[tuple[int, float, bool]]], busy_label: str = "",
              metadata: dict | None = None) -> str:
    """Run time against order index, one colour per strategy: drift shows as a trend.

    Each point is (order index, time, busy): a busy run (other processes loaded the
    machine during it) is drawn as a ring around its point, ``busy_label`` in the legend.
    The legend sits right of the axes, outside the data.
    """
    fig, ax = plt.subplots(figsize=(5.6, 2.8))
    for index, (name, points) in enumerate(series.items()):
        order, times, _ = zip(*sorted(points)) if points else ((), (), ())
        ax.plot(order, times, "o", ms=3, label=name, color=PALETTE[index % 10], alpha=0.8)
    busy = [(o, t) for points in series.values() for o, t, b in points if b]
    if busy:
        ax.scatter(*zip(*busy), s=60, facecolors="none", edgecolors="black", linewidths=0.8,
                   label=busy_label or "busy machine", zorder=4)
    ax.set_xlabel("order of the run in the measurement job")
    ax.set_ylabel("run time (s)")
    ax.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              borderaxespad=0)
    return _svg(fig, metadata)


def heatmap(matrix: np.ndarray, metadata: dict | None = None) -> str:
    """The affinity matrix W[i][j] as a heatmap, threads on both axes."""
    size = len(matrix)
    fig, ax = plt.subplots(figsize=(3.6, 3.1))
    image = ax.imshow(matrix, cmap="viridis", interpolation="nearest")
    ax.set_xlabel("thread")
    ax.set_ylabel("thread")
    if size <= 16:
        ax.set_xticks(range(size))
        ax.set_yticks(range(size))
    fig.colorbar(image, ax=ax, label="shared accesses")
    return _svg(fig, metadata)
