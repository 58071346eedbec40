"""The report's "Why a placement wins" section, from ``stats/explain.csv`` (pinbench.stats.explain).

Per benchmark: which OpenMP runtime the explained runs used, the span every quantity covers
(the whole run; with a printed ``time``, how much of it the printed time is), where T_1 and T_s
came from (T_1 on the program's own runtime beside it, when measured), per thread count a
stacked bar per strategy (work T_1, idle I_P, inflation F_P − L_P, lock waits L_P) with a
table of the runtime's waits per construct (and the workers' idle time between regions) and one
sentence of reading (or why the cell has no breakdown, and a line per figure refused out of its
range), and the factored speedup plot over thread counts.

The sentences are :mod:`pinbench.stats.explain_readings`' (the terminal's, in
``stats/explain.txt``): each explains the timing verdict (``stats/verdicts.csv``) only by
what the analysis found measurable, or says why it cannot.
"""
from __future__ import annotations

from collections import defaultdict

from pinbench.report import figures
from pinbench.stats.analyse import Verdict
from pinbench.stats.explain import Explanation
from pinbench.stats.explain_readings import (best_by_cell, cells, missing, reading, refusals,
                                             span, unreproduced)


def one_thread(row: Explanation) -> str:
    """Where T_1 came from, with the program's own runtime's one-thread time beside it."""
    if row.T_1 is None:
        return f"T_1: {row.T_1_source}"
    text = f"T_1 = {row.T_1:.3g} s from {row.T_1_source}"
    plain = row.T_1_uninstrumented
    if row.T_1_same_runtime and plain:
        text += (f"; uninstrumented, on the program's own runtime: {plain:.3g} s (T_1 "
                 f"{row.T_1 / plain - 1:+.0%})")
    return text


def explain_sections(table: list[Explanation], baseline: str,
                     verdicts: list[Verdict]) -> list[dict]:
    """One entry per (machine, benchmark) with explained runs (``table``: the rows of
    ``explain.csv``). ``verdicts``: the analysis', whose named strategies the readings explain
    (:mod:`pinbench.stats.explain_readings`, the terminal's sentences too)."""
    best_of = best_by_cell(verdicts)
    sections = []
    for (machine, bench), by_threads in cells(table).items():
        rows = [r for cell in by_threads.values() for r in cell]
        shown = []
        for threads, cell in by_threads.items():
            parts = {}
            for r in cell:
                if r.n and r.T_1 is not None and r.F_P is not None:
                    inflation = (r.F_P or 0.0) - (r.L_P or 0.0)
                    parts[r.strategy] = {"T_1": r.T_1, "idle": r.I_P, "inflation": inflation,
                                         "waits": r.L_P}
            said = reading(cell, baseline, best_of.get((machine, bench, threads)))
            shown.append({"threads": threads, "rows": cell,
                          "figure": figures.breakdown(parts) if parts else None,
                          "reading": said, "unreproduced": unreproduced(cell, said),
                          "refused": refusals(cell),
                          "missing": missing(cell)})
        series = defaultdict(dict)
        for r in rows:
            if r.n:
                series[r.strategy][int(r.threads)] = {key: getattr(r, key)
                                                      for key, *_ in figures.SPEEDUPS}
        runtimes = sorted({r.runtime for r in rows if r.runtime})
        failures = sorted({r.failure for r in rows if r.failure})
        sections.append({
            "machine": machine, "benchmark": bench, "cells": shown,
            "runtime": "; ".join(runtimes) or "none (no explained run succeeded)",
            "failures": failures, "T_1": one_thread(rows[0]),
            "T_s_source": rows[0].T_s_source, "span": span(rows),
            "printed": any(r.time_source == "regex" for r in rows),
            "speedups": figures.factored_speedups(series) if series else None,
        })
    return sections
