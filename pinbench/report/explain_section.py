"""The report's "Why a placement wins" section, from ``stats/explain.csv`` (pinbench.stats.explain).

Per benchmark: which OpenMP runtime the explained runs used, the span every quantity covers
(the whole run; with a ``time_regex``, how much of it the printed time is), where T_1 and T_s
came from (T_1 on the program's own runtime beside it, when measured), per thread count a
stacked bar per strategy (work T_1, idle I_P, inflation F_P − L_P, lock waits L_P) with a
table of the runtime's waits per construct and one sentence of reading (or why the cell has no
breakdown), and the factored speedup plot over thread counts.

The sentence explains the timing verdict (``stats/verdicts.csv``): the strategy it names
against the baseline, and only by what the analysis found measurable (``lower``, ``higher``:
a term's interval excludes zero and its shift is at least
:data:`pinbench.stats.explain.MIN_SHARE` of P·T_P); explained runs that do not reproduce the
timing runs, or that show no difference or the opposite one, explain nothing and say so.
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from pinbench.report import figures
from pinbench.stats.explain import MIN_SHARE, TERMS, read_explain


def _interval(row: dict, name: str, sign: int = 1) -> str:
    """A shift and its interval in thread-s (``sign`` -1: the other way round)."""
    low, high = sorted((sign * row[f"{name}_low"], sign * row[f"{name}_high"]))
    return f"{sign * row[name]:.3g} thread-s [{low:.3g}; {high:.3g}]"


def span(rows: list[dict]) -> str:
    """The span the explanation covers, in words: the whole run, and how much of it the
    printed time is."""
    shares = [r["printed_share"] for r in rows if r["printed_share"] is not None]
    if not shares:
        return "the whole run"
    share = sorted(shares)[len(shares) // 2]
    return f"the whole run, of which the printed time is {share:.0%}"


def reading(rows: list[dict], baseline: str, verdict: dict | None) -> str:
    """One sentence on the timing verdict's strategy against the baseline, e.g. "compact
    beats os here through lower work inflation (0.08 thread-s [0.05; 0.1], 18% of os's
    P·T_P)", or why the explained runs cannot say it ("" without a verdict)."""
    if verdict is None:
        return ""
    best = verdict["best"]
    if not best:
        return f"The timing runs find no strategy faster than {baseline} here: nothing to explain."
    by_strategy = {r["strategy"]: r for r in rows}
    pair = [by_strategy.get(best), by_strategy.get(baseline)]
    if any(r is None or not r["n"] for r in pair):
        who = best if not (pair[0] and pair[0]["n"]) else baseline
        return f"No explanation of {best} against {baseline}: {who} has no successful explained run."
    for r in pair:
        if r["reproduces"] is False:
            return f"Not applicable to {best} against {baseline}: for {r['strategy']}, " \
                   f"{r['not_applicable']}."
    row, base = pair
    where = span(rows)
    if row["d_total"] is None:
        return (f"No explanation of {best} against {baseline}: too few explained runs for an "
                "interval of their difference.")
    if row["d_total_high"] < 0:
        return (f"Not applicable: over {where}, the explained runs show {baseline} faster than "
                f"{best} ({baseline}'s P·T_P {_interval(row, 'd_total', -1)} lower), against the "
                "timing verdict.")
    if row["d_total_low"] <= 0:
        return (f"No measurable difference between {best} and {baseline} in the explained runs "
                f"over {where} ({best}'s P·T_P {_interval(row, 'd_total')} lower): no "
                "explanation.")
    scale = base["threads"] * base["T_P"]
    gains = [f"{TERMS[t][0]} ({_interval(row, f'd_{t}')}, {row[f'd_{t}'] / scale:.0%} of "
             f"{baseline}'s P·T_P)" for t in row["lower"].split()]
    losses = [TERMS[t][0] for t in row["higher"].split()]
    if not gains:
        return (f"{best} is faster than {baseline} over {where} (its P·T_P "
                f"{_interval(row, 'd_total')} lower), but no term of it differs measurably on "
                f"its own (an interval excluding zero and at least {MIN_SHARE:.0%} of P·T_P).")
    despite = f", despite higher {' and '.join(losses)}" if losses else ""
    return f"{best} beats {baseline} here through lower {'; '.join(gains)}{despite}."


def missing(rows: list[dict]) -> str:
    """Why a (benchmark, threads) cell has no breakdown, in words ("" when it has one)."""
    if not any(r["n"] for r in rows):
        failures = sorted({r["failure"] for r in rows if r["failure"]})
        return "no explained run succeeded" + (f": {'; '.join(failures)}" if failures else "")
    if all(r["T_1"] is None for r in rows):
        return f"no T_1 ({rows[0]['T_1_source']}): its one-thread runs failed or were not made"
    return ""


def one_thread(row: dict) -> str:
    """Where T_1 came from, with the program's own runtime's one-thread time beside it."""
    if row["T_1"] is None:
        return f"T_1: {row['T_1_source']}"
    text = f"T_1 = {row['T_1']:.3g} s from {row['T_1_source']}"
    plain = row["T_1_uninstrumented"]
    if row["T_1_same_runtime"] and plain:
        text += (f"; uninstrumented, on the program's own runtime: {plain:.3g} s (T_1 "
                 f"{row['T_1'] / plain - 1:+.0%})")
    return text


def explain_sections(path: Path, baseline: str, verdicts: list[dict] | None = None) -> list[dict]:
    """One entry per (machine, benchmark) with explained runs; [] when the file is absent.
    ``verdicts``: the rows of ``verdicts.csv``, whose named strategies the readings explain."""
    if not path.is_file():
        return []
    verdict_of = {(v["machine"], v["benchmark"], int(v["threads"])): v for v in verdicts or []}
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
                          "reading": reading(cell, baseline,
                                             verdict_of.get((machine, bench, threads))),
                          "missing": missing(cell)})
        series = defaultdict(dict)
        for r in rows:
            if r["n"]:
                series[r["strategy"]][int(r["threads"])] = r
        runtimes = sorted({r["runtime"] for r in rows if r["runtime"]})
        failures = sorted({r["failure"] for r in rows if r["failure"]})
        sections.append({
            "machine": machine, "benchmark": bench, "cells": cells,
            "runtime": "; ".join(runtimes) or "none (no explained run succeeded)",
            "failures": failures, "T_1": one_thread(rows[0]),
            "T_s_source": rows[0]["T_s_source"], "span": span(rows),
            "printed": any(r["time_source"] == "regex" for r in rows),
            "speedups": figures.factored_speedups(series) if series else None,
        })
    return sections
