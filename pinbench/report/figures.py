"""Figures of the report drawn with matplotlib, returned as inline SVG text: affinity
matrices, the explained runs' breakdowns and speedups, the scalability models. (The two
figures of every cell are drawn in the browser from the page's data: ``report.js``.)

No text that comes from a campaign file or a benchmark's output is drawn into
a figure: labels are strategy names (a fixed vocabulary), numbers and fixed
words, so the SVG can be inlined without escaping concerns. Titles and
captions live in the HTML, where the template escapes them.
"""
from __future__ import annotations

import io

import matplotlib
import numpy as np
from matplotlib.figure import Figure  # not pyplot: no figure manager, nothing to close
from matplotlib.lines import Line2D

matplotlib.use("Agg")  # should anything in the process import pyplot
matplotlib.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "pinbench", "font.size": 9,
                            "axes.spines.top": False, "axes.spines.right": False})
PALETTE = ["#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3",
           "#8C8C8C", "#CCB974", "#64B5CD"]


#: The margins around the axes, in inches (fixed geometry: see :func:`_axes`).
LEFT, BOTTOM, TOP, RIGHT = 0.85, 0.5, 0.25, 0.15


def text_width(labels, fontsize: float) -> float:
    """The widest label's width in inches, estimated generously: 0.6 em a character (DejaVu
    Sans averages less over words; a digit is 0.64 em). tests/test_figures.py checks that
    nothing a figure draws falls outside it."""
    return max((len(str(label)) for label in labels), default=0) * fontsize * 0.6 / 72


def legend_width(labels, fontsize: float) -> float:
    """The room a legend right of the axes takes, in inches: handle, padding and text."""
    return 0.55 + text_width(labels, fontsize) if labels else 0.0


def _axes(width: float, height: float, right: float = RIGHT):
    """A figure of ``width`` x ``height`` inches with one axes placed in fixed margins
    (``right``: inches right of the axes, room for a legend outside them).

    Fixed geometry instead of ``bbox_inches="tight"``: a tight bounding box costs a second
    draw of the figure (about half of its time), and the margins here hold what the figures
    put outside their axes (tick labels, axis labels, a legend sized by
    :func:`legend_width`)."""
    width += right
    fig = Figure(figsize=(width, height))
    ax = fig.add_axes((LEFT / width, BOTTOM / height, 1 - (LEFT + right) / width,
                       1 - (BOTTOM + TOP) / height))
    return fig, ax


def _svg(fig, metadata: dict | None = None) -> str:
    """The figure as SVG text, drawn once (no tight bounding box: the figure's geometry is
    fixed, :func:`_axes`); ``metadata``: Dublin Core fields (``Title``, ``Description``,
    ``Date``...) that the file carries, as an exported figure should."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg",
                metadata={"Date": None, "Creator": "pinbench", "Format": None, "Type": None}
                | (metadata or {}))
    text = buffer.getvalue()
    return text[text.index("<svg"):]  # drop the XML prolog and DOCTYPE for inlining


def heatmap(matrix: np.ndarray, metadata: dict | None = None) -> str:
    """The affinity matrix W[i][j] as a heatmap, threads on both axes; the colour bar in
    its own axes right of it (room for its tick labels and label)."""
    size = len(matrix)
    side, bar_pad, bar, bar_room = 2.35, 0.12, 0.12, 0.95
    fig, ax = _axes(side + LEFT, side + BOTTOM + TOP, bar_pad + bar + bar_room)
    width, height = fig.get_size_inches()
    image = ax.imshow(matrix, cmap="viridis", interpolation="nearest")
    ax.set_xlabel("thread")
    ax.set_ylabel("thread")
    if size <= 16:
        ax.set_xticks(range(size))
        ax.set_yticks(range(size))
    cax = fig.add_axes(((LEFT + side + bar_pad) / width, BOTTOM / height, bar / width,
                        side / height))
    fig.colorbar(image, cax=cax, label="shared accesses")
    return _svg(fig, metadata)


#: the parts of P·T_P in the stacked bar of the explained runs (stats/explain.py)
BREAKDOWN = (("T_1", "work T_1"), ("idle", "idle I_P"), ("inflation", "inflation F_P − L_P"),
             ("waits", "lock waits L_P"))


def breakdown(parts: dict[str, dict[str, float]]) -> str:
    """One stacked bar per strategy: P·T_P split into T_1, idle, inflation and lock waits
    (thread-seconds; inflation may be negative, drawn below zero). One bar container per
    part, all strategies' bars in it."""
    names = list(parts)
    fig, ax = _axes(0.9 + 1.0 * len(names), 3.2,
                    legend_width([label for _, label in BREAKDOWN], 7))
    high, low = np.zeros(len(names)), np.zeros(len(names))
    for k, (key, label) in enumerate(BREAKDOWN):
        values = np.array([parts[name].get(key) or 0.0 for name in names])
        bottom = np.where(values >= 0, high, low)
        ax.bar(range(len(names)), values, 0.6, bottom=bottom, color=PALETTE[k], label=label)
        high += np.where(values >= 0, values, 0.0)
        low += np.where(values < 0, values, 0.0)
    ax.set_xticks(range(len(names)), names)
    ax.set_ylabel("thread-seconds (P·T_P)")
    ax.axhline(0, color="black", lw=0.6)
    ax.legend(frameon=False, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _svg(fig)


SPEEDUPS = (("speedup_max", "maximal", ":"), ("speedup_idle", "idle-time-specific", "--"),
            ("speedup_inflation", "inflation-specific", "-."), ("speedup_actual", "actual", "-"))


def factored_speedups(series: dict[str, dict[int, dict[str, float]]]) -> str:
    """The factored speedup plot (Acar et al.): per strategy (colour) the maximal,
    idle-time-specific, inflation-specific and actual speedups (line style) over threads.

    The legend says each colour (strategy) once and each line style (speedup) once: one
    entry per strategy and per speedup instead of one per line."""
    lines, styles = {}, {}
    for index, (name, by_threads) in enumerate(series.items()):
        threads = sorted(by_threads)
        for key, label, style in SPEEDUPS:
            values = [by_threads[n].get(key) for n in threads]
            if all(v is None for v in values):
                continue
            lines[(name, key)] = (threads, [np.nan if v is None else v for v in values],
                                  style, PALETTE[index % 10])
            styles[key] = (label, style)
    colours = {name: colour for (name, _), (*_, colour) in lines.items()}
    labels = [*colours, *(label for label, _ in styles.values())]
    fig, ax = _axes(5.7, 3.2, legend_width(labels, 7))
    for threads, values, style, colour in lines.values():
        ax.plot(threads, values, style, marker="o", ms=3, color=colour)
    handles = [Line2D([], [], color=colour, marker="o", ms=3, lw=1.5, label=name)
               for name, colour in colours.items()]
    handles += [Line2D([], [], color="black", ls=style, lw=1.2, label=label)
                for key, (label, style) in sorted(styles.items(),
                                                  key=lambda s: [k for k, *_ in SPEEDUPS].index(s[0]))]
    ax.set_xticks(sorted({n for threads, *_ in lines.values() for n in threads}))
    ax.set_xlabel("threads P")
    ax.set_ylabel("speedup over T_s")
    if handles:
        ax.legend(handles=handles, frameon=False, fontsize=7, loc="upper left",
                  bbox_to_anchor=(1.0, 1.0))
    return _svg(fig)


def scaling(points: dict[str, list[tuple[int, float]]], curves: dict[str, list[float]],
            measured_max: int, pus: int | None) -> str:
    """Median run time against threads per strategy: measured medians as points, the
    model's T(p) as a line (solid where measured, dashed beyond: an extrapolation); thread
    counts above the machine's PUs (oversubscribed) shaded."""
    fig, ax = _axes(5.7, 3.4)
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
