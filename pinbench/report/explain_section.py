"""The report's "Why a placement wins" section, from ``stats/explain.csv`` (pinbench.stats.explain).

Per benchmark: which OpenMP runtime the explained runs used, where T_1 and T_s came from,
per thread count a stacked bar per strategy (work T_1, idle I_P, inflation F_P − L_P, lock
waits L_P) with a table of the runtime's waits per construct and one sentence of reading
(or why the cell has no breakdown), and the factored speedup plot over thread counts.
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from pinbench.report import figures
from pinbench.stats.explain import read_explain


def reading(rows: list[dict], baseline: str) -> str:
    """One sentence: why the fastest strategy beats the baseline (or the slowest), by the
    term of P·T_P it lowers most, e.g. "compact beats os here through lower work inflation
    (0.08 thread-s, 18% less)"."""
    usable = [r for r in rows if r["n"] and r["T_P"] is not None]
    if len(usable) < 2:
        return ""
    best = min(usable, key=lambda r: r["T_P"])
    other = next((r for r in usable if r["strategy"] == baseline and r is not best), None) \
        or max(usable, key=lambda r: r["T_P"])
    if other is best:
        return ""
    terms = [("idle time", "I_P"), ("work inflation", "W_P"), ("lock waits", "L_P")]
    gains = [(other[key] - best[key], word, key) for word, key in terms
             if other[key] is not None and best[key] is not None]
    gain, word, key = max(gains)
    if gain <= 0:
        return (f"{best['strategy']} is faster than {other['strategy']} here, with no lower "
                "idle time, work or lock waits in the explained runs: the difference is within "
                "their noise.")
    share = gain / other[key] if other[key] else 0.0
    return (f"{best['strategy']} beats {other['strategy']} here through lower {word} "
            f"({gain:.3g} thread-s, {share:.0%} less).")


def missing(rows: list[dict]) -> str:
    """Why a (benchmark, threads) cell has no breakdown, in words ("" when it has one)."""
    if not any(r["n"] for r in rows):
        failures = sorted({r["failure"] for r in rows if r["failure"]})
        return "no explained run succeeded" + (f": {'; '.join(failures)}" if failures else "")
    if all(r["T_1"] is None for r in rows):
        return f"no T_1 ({rows[0]['T_1_source']}): its one-thread runs failed or were not made"
    return ""


def explain_sections(path: Path, baseline: str) -> list[dict]:
    """One entry per (machine, benchmark) with explained runs; [] when the file is absent."""
    if not path.is_file():
        return []
    groups = defaultdict(list)
    for row in read_explain(path):
        groups[(row["machine"], row["benchmark"])].append(row)
    sections = []
    for (machine, bench), rows in sorted(groups.items()):
        by_threads = defaultdict(list)
        for row in rows:
            by_threads[int(row["threads"])].append(row)
        cells = []
        for threads, cell in sorted(by_threads.items()):
            parts = {}
            for r in cell:
                if r["n"] and r["T_1"] is not None:
                    inflation = (r["F_P"] or 0.0) - (r["L_P"] or 0.0)
                    parts[r["strategy"]] = {"T_1": r["T_1"], "idle": r["I_P"],
                                            "inflation": inflation, "waits": r["L_P"]}
            cells.append({"threads": threads, "rows": cell,
                          "figure": figures.breakdown(parts) if parts else None,
                          "reading": reading(cell, baseline), "missing": missing(cell)})
        series = defaultdict(dict)
        for r in rows:
            if r["n"]:
                series[r["strategy"]][int(r["threads"])] = r
        runtimes = sorted({r["runtime"] for r in rows if r["runtime"]})
        failures = sorted({r["failure"] for r in rows if r["failure"]})
        sections.append({
            "machine": machine, "benchmark": bench, "cells": cells,
            "runtime": "; ".join(runtimes) or "none (no explained run succeeded)",
            "failures": failures, "T_1_source": rows[0]["T_1_source"],
            "T_s_source": rows[0]["T_s_source"],
            "speedups": figures.factored_speedups(series) if series else None,
        })
    return sections
