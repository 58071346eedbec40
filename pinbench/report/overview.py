"""The report's first screen: every cell of the campaign in one matrix.

Rows are (benchmark, threads), columns the campaign's strategies, machines side
by side. A cell shows the median speedup over the baseline (colour on a
diverging scale, :func:`speedup_colour`), ★ when the report-wide decision
(:func:`pinbench.stats.verdicts.report_wide`, ``comparisons.csv``) finds it faster, ☆ when
only its cell's verdict does, ▼ and ▽ alike when they find it slower, a frame on the cell verdict's best, and the marks of
:data:`pinbench.stats.cells.WARNINGS`; :func:`star_legend` says which error each holds.
Strategies that ran one experiment (identical placements, ``comparisons.csv``'s ``experiment``)
are one cell: neighbours in the campaign's order are merged into one cell
spanning them, others say which experiment they are (``= compact``).

Everything here is data (dicts of strings and numbers); the template draws it
and :mod:`pinbench.report.export` writes it as CSV and Markdown.
"""
from __future__ import annotations

import math

from pinbench.stats.analyse import Comparison, Verdict
from pinbench.stats.cells import WARNINGS, CellStats

#: The speedups at the ends of the colour scale (symmetric in log: 1/1.25 = 0.8).
SCALE = (0.8, 1.25)
#: Diverging colours, slower (orange) -> 1 (white) -> faster (blue): ColorBrewer PuOr-like,
#: with lightness falling away from 1, so the scale reads in greyscale too.
SLOWER, NEUTRAL, FASTER = (179, 88, 6), (247, 247, 247), (33, 102, 172)


def speedup_colour(speedup: float | None) -> tuple[str, str]:
    """(background, text colour) of a cell with this median speedup; grey without one.

    >>> speedup_colour(1.0), speedup_colour(2.0)[0], speedup_colour(None)
    (('#f7f7f7', '#111'), '#2166ac', ('#e0e0e0', '#111'))
    """
    if speedup is None or speedup <= 0:
        return "#e0e0e0", "#111"
    low, high = (math.log(v) for v in SCALE)
    share = max(-1.0, min(1.0, math.log(speedup) / (high if speedup >= 1 else -low)))
    end = FASTER if share >= 0 else SLOWER
    rgb = [round(n + (e - n) * abs(share)) for n, e in zip(NEUTRAL, end)]
    text = "#fff" if abs(share) > 0.6 else "#111"
    return "#" + "".join(f"{c:02x}" for c in rgb), text


def scale_legend() -> list[dict]:
    """The legend of the colour scale: a few speedups with their colours."""
    return [{"speedup": s, "colour": speedup_colour(s)}
            for s in (SCALE[0], 0.9, 0.95, 1.0, 1.05, 1.1, SCALE[1])]


def star_legend(alpha: float, tests: int, decision: str = "fwer",
                found: float | None = None) -> str:
    """What ★ and ☆ (▼ and ▽) claim, and over what: the report's ``tests`` tests at
    ``alpha`` by its ``decision`` (:data:`pinbench.stats.decisions.DECISIONS`); ``found``:
    the speedup it finds with probability 80% at the campaign's noise and runs (the median
    over the cells of ``detectable_report``).

    >>> "held at 0.05 over the whole report (Holm over all 36 tests" in star_legend(0.05, 36)
    True
    >>> "finds a speedup of 1.045 with probability 80%" in star_legend(0.05, 36, "fdr", 1.0451)
    True
    """
    held = (f"the false discovery rate held at {alpha:.2g} over the whole report "
            f"(Benjamini-Hochberg over all {tests} tests of its cells: of the ★ and ▼ on the "
            f"page, a share of at most {alpha:.2g} is expected false)" if decision == "fdr" else
            f"the family-wise error held at {alpha:.2g} over the whole report (Holm over all "
            f"{tests} tests of its cells: a ★ or ▼ anywhere on the page is a false one with "
            f"probability at most {alpha:.2g})")
    return (f"★ faster than the baseline, ▼ slower, with {held}; ☆ faster, ▽ slower by its "
            f"cell's verdict only (the error held at {alpha:.2g} within the cell, so over "
            f"many cells some appear by chance). Test: Brunner-Munzel's, two-sided, by "
            f"permutation."
            + (f" At this campaign's noise and runs the report-wide decision finds a speedup of "
               f"{found:.3f} with probability 80% (the median over its cells)." if found else ""))


def warning_legend() -> list[dict]:
    """Every warning mark and what it means (:data:`pinbench.stats.cells.WARNINGS`)."""
    return [{"code": code, "mark": mark, "text": text} for code, (mark, text) in WARNINGS.items()]


def overview(cells: list[dict], verdicts: list[Verdict], comparisons: list[Comparison],
             described: dict[tuple, CellStats], strategies: list[str], baseline: str,
             quiet_threshold: float, alpha: float) -> dict:
    """The matrix: ``machines``, ``strategies``, ``rows`` and the ``legend`` of its stars.

    ``cells``: the rows of ``stats.json``'s cell table; ``verdicts``, ``comparisons``: the
    analysis' verdicts and comparisons; ``described``:
    :func:`pinbench.stats.cells.describe_cells` of the campaign's runs. Each row holds, per machine,
    its job-wide marks (drift, printed times) and its ``groups``: one per run of neighbouring strategies
    that ran one experiment, with ``span`` (columns), ``strategies``, ``experiment``,
    ``speedup`` (median), ``faster`` (the cell's verdict), ``faster_report`` (the
    report-wide decision), ``slower`` and ``slower_report`` (the same, slower), ``best``, ``clear``, ``marks``,
    ``colour``, ``baseline``, ``median_s`` and ``same_as`` (the experiment's first
    strategy when it is not a neighbour).
    """
    cell_of = {(c["machine"], c["benchmark"], int(c["threads"]), c["strategy"]): c for c in cells}
    comparison_of = {c.key: c for c in comparisons}
    verdict_of = {v.key: v for v in verdicts}
    machines = list(dict.fromkeys(c["machine"] for c in cells))
    rows: dict[tuple, dict] = {}
    for machine, bench, threads, _ in sorted(cell_of, key=lambda k: (k[1], k[2])):
        rows.setdefault((bench, threads), {"benchmark": bench, "threads": threads,
                                           "machines": {}})
    for (bench, threads), row in rows.items():
        for machine in machines:
            job = (machine, bench, threads)
            if not any((*job, s) in cell_of for s in strategies):
                continue
            verdict = verdict_of.get(job)
            groups: list[dict] = []
            for strategy in strategies:
                group = _group(job, strategy, cell_of, comparison_of, verdict, described,
                               baseline, quiet_threshold)
                previous = groups[-1] if groups else None
                if previous and group["experiment"] == previous["experiment"] \
                        and not group["baseline"]:
                    previous["span"] += 1
                    previous["strategies"].append(strategy)
                    continue
                if any(g["experiment"] == group["experiment"] for g in groups) \
                        and not group["baseline"]:
                    group["same_as"] = group["experiment"]
                groups.append(group)
            row["machines"][machine] = {
                "groups": groups,
                "marks": [WARNINGS[code][0] for code, found in
                          (("drift", verdict and verdict.drift),
                           ("printed", verdict and verdict.printed_time)) if found],
                "drift_p": verdict.drift_p if verdict else None,
            }
    tests = verdicts[0].tests_report if verdicts else 0
    decision = verdicts[0].decision_report if verdicts else "fwer"
    found = sorted(v.detectable_report for v in verdicts if v.detectable_report)
    median = found[len(found) // 2] if found else None
    return {"machines": machines, "strategies": strategies, "rows": list(rows.values()),
            "baseline": baseline, "legend": star_legend(alpha, tests, decision, median)}


def _group(job: tuple, strategy: str, cell_of: dict, comparison_of: dict[tuple, Comparison],
           verdict: Verdict | None, described: dict, baseline: str,
           quiet_threshold: float) -> dict:
    """One strategy's cell of the matrix, before neighbours are merged."""
    key = (*job, strategy)
    cell = cell_of.get(key)
    comparison = comparison_of.get(key)
    experiment = (comparison and comparison.experiment) or strategy
    if comparison and comparison.same_as_baseline:
        experiment = baseline
    speedup = cell.get("speedup_median") if cell else None
    stats = described.get(key)
    best = verdict is not None and bool(verdict.best) and verdict.best == experiment
    return {
        "strategies": [strategy], "span": 1, "experiment": experiment, "same_as": None,
        "baseline": strategy == baseline, "missing": cell is None,
        "median_s": cell.get("median_s") if cell else None,
        "speedup": speedup, "colour": speedup_colour(speedup if strategy != baseline else 1.0),
        "faster": bool(comparison and comparison.faster),
        "faster_report": bool(comparison and comparison.faster_report),
        "slower": bool(comparison) and comparison.outcome == "slower",
        "slower_report": bool(comparison) and comparison.outcome_report == "slower",
        "best": best, "clear": best and bool(verdict.clear_winner),
        "marks": [WARNINGS[code][0] for code in stats.warnings(quiet_threshold)]
        if stats is not None else [WARNINGS["few"][0]],
    }


def flat_rows(matrix: dict) -> list[dict]:
    """The matrix as one row per (benchmark, threads, machine, strategy), for CSV."""
    out = []
    for row in matrix["rows"]:
        for machine, entry in row["machines"].items():
            for group in entry["groups"]:
                for strategy in group["strategies"]:
                    out.append({
                        "benchmark": row["benchmark"], "threads": row["threads"],
                        "machine": machine, "strategy": strategy,
                        "experiment": group["experiment"], "median_s": group["median_s"],
                        "speedup_median": None if group["baseline"] else group["speedup"],
                        "faster": group["faster"], "faster_report": group["faster_report"],
                        "best": group["best"],
                        "clear_winner": group["clear"],
                        "warnings": " ".join(group["marks"] + entry["marks"]),
                    })
    return out


FLAT_COLUMNS = ["benchmark", "threads", "machine", "strategy", "experiment", "median_s",
                "speedup_median", "faster", "faster_report", "best", "clear_winner", "warnings"]
