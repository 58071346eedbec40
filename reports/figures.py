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


#: the parts of P·T_P in the stacked bar of the explained runs (stats/explain.py)
BREAKDOWN = (("T_1", "work T_1"), ("idle", "idle I_P"), ("inflation", "inflation F_P − L_P"),
             ("waits", "lock waits L_P"))


def breakdown(parts: dict[str, dict[str, float]]) -> str:
    """One stacked bar per strategy: P·T_P split into T_1, idle, inflation and lock waits
    (thread-seconds; inflation may be negative, drawn below zero)."""
    names = list(parts)
    fig, ax = plt.subplots(figsize=(1.6 + 1.0 * len(names), 3.2))
    for index, name in enumerate(names):
        low = high = 0.0
        for k, (key, label) in enumerate(BREAKDOWN):
            value = parts[name].get(key) or 0.0
            bottom = high if value >= 0 else low
            ax.bar(index, value, 0.6, bottom=bottom, color=PALETTE[k],
                   label=label if index == 0 else None)
            if value >= 0:
                high += value
            else:
                low += value
    ax.set_xticks(range(len(names)), names)
    ax.set_ylabel("thread-seconds (P·T_P)")
    ax.axhline(0, color="black", lw=0.6)
    ax.legend(frameon=False, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _svg(fig)


SPEEDUPS = (("speedup_max", "maximal", ":"), ("speedup_idle", "idle-time-specific", "--"),
            ("speedup_inflation", "inflation-specific", "-."), ("speedup_actual", "actual", "-"))


def factored_speedups(series: dict[str, dict[int, dict[str, float]]]) -> str:
    """The factored speedup plot (Acar et al.): per strategy (colour) the maximal,
    idle-time-specific, inflation-specific and actual speedups (line style) over threads."""
    fig, ax = plt.subplots(figsize=(6.4, 3.2))
    for index, (name, by_threads) in enumerate(series.items()):
        threads = sorted(by_threads)
        for key, label, style in SPEEDUPS:
            values = [by_threads[n].get(key) for n in threads]
            if all(v is None for v in values):
                continue
            ax.plot(threads, [np.nan if v is None else v for v in values], style, marker="o",
                    ms=3, color=PALETTE[index % 10], label=f"{name}: {label}")
    ax.set_xlabel("threads P")
    ax.set_ylabel("speedup over T_s")
    ax.legend(frameon=False, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _svg(fig)


def scaling(points: dict[str, list[tuple[int, float]]], curves: dict[str, list[float]],
            measured_max: int, pus: int | None) -> str:
    """Median run time against threads per strategy: measured medians as points, the
    model's T(p) as a line (solid where measured, dashed beyond: an extrapolation); thread
    counts above the machine's PUs (oversubscribed) shaded."""
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    names = list(dict.fromkeys([*points, *curves]))
    for index, name in enumerate(names):
        colour = PALETTE[index % 10]
        if points.get(name):
            threads, medians = zip(*sorted(points[name]))
            ax.plot(threads, medians, "o", ms=4, color=colour, label=f"{name} (measured median)")
        curve = curves.get(name)
        if curve:
            xs = np.arange(1, len(curve) + 1)
            inside = xs <= measured_max
            ax.plot(xs[inside], np.asarray(curve)[inside], "-", color=colour, lw=1.2,
                    label=f"{name} (model)")
            if (~inside).any():
                ax.plot(xs[measured_max - 1:], np.asarray(curve)[measured_max - 1:], "--",
                        color=colour, lw=1.2, label=f"{name} (extrapolated)")
    top = max([measured_max, *(len(c) for c in curves.values() if c)])
    if pus is not None and pus < top:
        ax.axvspan(pus + 0.5, top + 0.5, color="#eeeeee", zorder=0, label="oversubscribed")
    ax.set_xlabel("threads")
    ax.set_ylabel("run time (s)")
    ax.legend(frameon=False, fontsize=7, ncols=2)
    return _svg(fig)
