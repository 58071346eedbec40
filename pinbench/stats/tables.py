"""The campaign's statistics: every cell against the baseline, and the study's summary tables.

A cell is one (machine, benchmark, threads, strategy). Its sample is the run
times of its runs that count (:func:`pinbench.stats.cells.describe_cells`). Each cell is compared with the baseline cell of the same (machine,
benchmark, threads) by the Speedup-Test (:mod:`pinbench.stats.speeduptest`). The
summary follows Tables 1-3 of Mazouz, Touati and Barthou: per machine, thread
count and strategy, the overall speedups of mean and median over all
benchmarks (sum of baseline statistics over sum of variant statistics,
weighted), the range of observed variances, and how many benchmarks are
significantly accelerated, a of b, with the continuity-corrected Wilson interval.
"""
from __future__ import annotations

import math
import statistics
from collections import defaultdict

from pinbench.results.runs import RunRecord
from pinbench.stats.cells import describe_cells
from pinbench.stats.proportion import approximation_warning, benchmarks_needed, wilson_interval
from pinbench.stats.sample_size import MIN_N
from pinbench.stats.speeduptest import SampleError, speedup_test

CELL_COLUMNS = [
    "machine", "benchmark", "threads", "strategy", "baseline", "n", "failures", "misplaced",
    "pinned", "verified",
    "mean_s", "median_s", "min_s", "variance", "speedup_mean", "speedup_median", "speedup_min",
    "mean_significant", "mean_p", "mean_test", "median_significant", "median_p", "median_test",
    "p_x_greater_y", "speedup_mean_low", "speedup_mean_high", "speedup_median_low",
    "speedup_median_high", "warnings",
]
SUMMARY_COLUMNS = [
    "machine", "threads", "strategy", "benchmarks", "overall_speedup_mean",
    "overall_speedup_median", "geomean_speedup_mean", "geomean_speedup_median", "variance_min",
    "variance_max", "significant_mean", "significant_mean_low", "significant_mean_high",
    "significant_median", "significant_median_low", "significant_median_high",
    "benchmarks_for_precision", "warnings",
]
#: Half-width of the interval of the share of accelerated benchmarks that
#: ``benchmarks_for_precision`` asks for (the Speedup-Test report's sample-size rule).
PRECISION = 0.1


def compare(baseline: list[float], variant: list[float], confidence: float, seed: int) -> dict:
    """The cell's columns that come from the Speedup-Test against the baseline."""
    try:
        result = speedup_test(baseline, variant, confidence=confidence, seed=seed)
    except SampleError as exc:
        return {"mean_significant": False, "median_significant": False, "mean_test": "not applied",
                "median_test": "not applied", "warnings": str(exc)}
    ci = result["ci"]
    return {
        "speedup_mean": result["speedup_mean"], "speedup_median": result["speedup_median"],
        "speedup_min": result["speedup_min"],
        "mean_significant": result["mean"]["significant"], "mean_p": result["mean"]["p_value"],
        "mean_test": result["mean"]["test"],
        "median_significant": result["median"]["significant"],
        "median_p": result["median"]["p_value"], "median_test": result["median"]["test"],
        "p_x_greater_y": result["p_x_greater_y"],
        "speedup_mean_low": (ci["speedup_mean"] or [None])[0],
        "speedup_mean_high": (ci["speedup_mean"] or [None, None])[1],
        "speedup_median_low": (ci["speedup_median"] or [None])[0],
        "speedup_median_high": (ci["speedup_median"] or [None, None])[1],
        "warnings": "; ".join(result["mean"]["warnings"] + result["median"]["warnings"]),
    }


def cell_table(records: list[RunRecord], baseline: str, confidence: float,
               seed: int = 0) -> list[dict]:
    """One row per cell: its description and, for non-baseline cells, the Speedup-Test.

    The test is a function of the two samples: strategies measured once for several (the
    same placement: their cells hold the same runs) share one computation of it."""
    cells = describe_cells(records)
    table = []
    tested: dict[tuple, dict] = {}
    for key in sorted(cells):
        machine, bench, threads, strategy = key
        row = dict.fromkeys(CELL_COLUMNS)
        row.update(machine=machine, benchmark=bench, threads=threads, strategy=strategy,
                   baseline=baseline, **cells[key].columns())
        base_key = (machine, bench, threads, baseline)
        if strategy != baseline and base_key in cells:
            base, times = cells[base_key].times, cells[key].times
            samples = (tuple(base), tuple(times))
            if samples not in tested:
                tested[samples] = compare(base, times, confidence, seed)
            row.update(tested[samples])
        table.append(row)
    return table


def _ratio_of_sums(pairs: list[tuple[float, float, float]]) -> float:
    return sum(w * x for w, x, _ in pairs) / sum(w * y for w, _, y in pairs)


def _geomean(pairs: list[tuple[float, float, float]]) -> float:
    return math.exp(statistics.fmean(math.log(x / y) for _, x, y in pairs))


def summary_table(cells: list[dict], baseline: str, confidence: float,
                  benchmark_weights: dict[str, float] | None = None) -> list[dict]:
    """The study's Tables 1-3: one row per (machine, threads, strategy), baseline included.

    ``benchmark_weights``: benchmark -> its weight in the overall speedups (1 if not named).
    """
    weights = benchmark_weights or {}
    by_key = {(c["machine"], c["benchmark"], c["threads"], c["strategy"]): c for c in cells}
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for cell in cells:
        groups[(cell["machine"], cell["threads"], cell["strategy"])].append(cell)
    table = []
    baseline_first = sorted(groups.items(), key=lambda item: (
        item[0][0], item[0][1], item[0][2] != baseline, item[0][2]))
    for (machine, threads, strategy), group in baseline_first:
        usable = [c for c in group if c["n"] >= MIN_N and (by_key.get(
            (machine, c["benchmark"], threads, baseline)) or {}).get("n", 0) >= MIN_N]
        variances = [c["variance"] for c in usable if c["variance"] is not None]
        row = dict.fromkeys(SUMMARY_COLUMNS)
        row.update(machine=machine, threads=threads, strategy=strategy, benchmarks=len(usable),
                   variance_min=min(variances, default=None),
                   variance_max=max(variances, default=None))
        if usable:
            base = {c["benchmark"]: by_key[(machine, c["benchmark"], threads, baseline)]
                    for c in usable}
            for stat in ("mean", "median"):
                pairs = [(weights.get(c["benchmark"], 1.0), base[c["benchmark"]][f"{stat}_s"],
                          c[f"{stat}_s"]) for c in usable]
                row[f"overall_speedup_{stat}"] = _ratio_of_sums(pairs)
                row[f"geomean_speedup_{stat}"] = _geomean(pairs)
        if usable and strategy != baseline:
            warnings = []
            for stat in ("mean", "median"):
                hits = sum(bool(c[f"{stat}_significant"]) for c in usable)
                low, high = wilson_interval(hits, len(usable), confidence)
                row.update({f"significant_{stat}": hits, f"significant_{stat}_low": low,
                            f"significant_{stat}_high": high})
                warnings.append(approximation_warning(hits, len(usable)))
                if stat == "mean":
                    row["benchmarks_for_precision"] = benchmarks_needed(
                        hits, len(usable), PRECISION, confidence)
            row["warnings"] = "; ".join(sorted({w for w in warnings if w}))
        table.append(row)
    return table


def split_warnings(text: str | None) -> list[str]:
    """The warnings of a table's ``warnings`` field, one by one (they are joined by "; ").

    >>> split_warnings("a; b"), split_warnings(""), split_warnings(None)
    (['a', 'b'], [], [])
    """
    return [part for part in (text or "").split("; ") if part]


def footnotes(rows: list[list[str]]) -> tuple[list[list[int]], list[str]]:
    """Each distinct text of a table's rows said once: (per row, the 1-based numbers of its
    notes; the notes in order of first appearance).

    >>> footnotes([["a", "b"], ["b"], []])
    ([[1, 2], [2], []], ['a', 'b'])
    """
    notes: dict[str, int] = {}
    marks = [[notes.setdefault(text, len(notes) + 1) for text in dict.fromkeys(row)]
             for row in rows]
    return marks, list(notes)


def _fmt(value, digits: int = 4) -> str:
    if value is None:
        return "-"
    return f"{value:.{digits}g}" if isinstance(value, float) else str(value)


def significant_share(row: dict, stat: str, missing: str = "-", sep: str = "; ") -> str:
    """A summary row's benchmarks significantly faster by ``stat`` (mean, median): ``k/n``
    with the interval of the share, ``missing`` when not tested."""
    if row[f"significant_{stat}"] is None:
        return missing
    return (f"{row[f'significant_{stat}']}/{row['benchmarks']} "
            f"[{row[f'significant_{stat}_low']:.2f}{sep}{row[f'significant_{stat}_high']:.2f}]")


def tables_text(summary: list[dict], baseline: str, confidence: float) -> str:
    """The summary tables as printed at the end of a campaign: every figure of Tables 1-3,
    the number of benchmarks for a share known to ±:data:`PRECISION` included, and each
    distinct warning once, as a numbered note referenced in its rows."""
    lines = [f"Overall speedups against {baseline!r} (sum of baseline statistics over sum of "
             f"strategy statistics; geometric means of per-benchmark speedups beside them); "
             f"benchmarks significantly faster at confidence {confidence:g} with their interval; "
             f"benchmarks needed to know the share of mean speedups to within ±{PRECISION:g}."]
    header = (f"{'machine':<12} {'thr':>4} {'strategy':<13} {'mean':>6} {'(geo)':>6} "
              f"{'median':>6} {'(geo)':>6} {'variance range':>22} {'faster (mean)':>22} "
              f"{'faster (median)':>22} {f'±{PRECISION:g}':>5}  notes")
    lines.append(header)
    marks, notes = footnotes([split_warnings(row["warnings"]) for row in summary])
    for row, mark in zip(summary, marks):
        variance = f"[{_fmt(row['variance_min'], 3)} ; {_fmt(row['variance_max'], 3)}]"
        lines.append(
            f"{row['machine']:<12} {row['threads']:>4} {row['strategy']:<13} "
            f"{_fmt(row['overall_speedup_mean'], 4):>6} {_fmt(row['geomean_speedup_mean'], 4):>6} "
            f"{_fmt(row['overall_speedup_median'], 4):>6} {_fmt(row['geomean_speedup_median'], 4):>6} "
            f"{variance:>22} {significant_share(row, 'mean', '-', ';'):>22} "
            f"{significant_share(row, 'median', '-', ';'):>22} "
            f"{_fmt(row['benchmarks_for_precision']):>5}  "
            f"{' '.join(f'[{n}]' for n in mark)}".rstrip())
    lines += [f"[{n}] prop.test: {note}" for n, note in enumerate(notes, start=1)]
    return "\n".join(lines) + "\n"
