"""Why a placement wins: idle time, work inflation and runtime waits per strategy.

Implements the decomposition of Acar, Charguéraud and Rainey ("Parallel work inflation,
memory effects, and their empirical analysis"): with P threads, a run time T_P, the
total idle time I_P and T_1 the parallel program's time on one thread,

    P·T_P = W_P + I_P,      F_P = W_P − T_1 = P·T_P − I_P − T_1   (work inflation),

and the factored speedups: maximal P·T_s/T_1, idle-time-specific P·T_s/(T_1 + I_P),
inflation-specific P·T_s/(P·T_P − I_P), actual T_s/T_P (T_s: the sequential baseline).

From one explained run's OMPT record (:mod:`pinbench.measure.explain`), per thread i:
``sync_i`` (waits at barriers, taskwait, taskgroup, reductions) and ``lock_i`` (waits for
locks, critical sections, ordered); the initial thread works ``T_P − sync_i − lock_i``
(serial phases are work), a worker ``team_i − sync_i − lock_i`` (outside its team it
waits for work). The lock waits L_P (the runtime's waits of Bhattacharjee et al.) are kept
apart from the idle time: I_P = P·T_P − Σ work − L_P, everything that is neither, so
W_P = Σ work + L_P, and the stacked bar reads T_1 + I_P + (F_P − L_P) + L_P = P·T_P.

Per (machine, benchmark, threads, strategy) every quantity is the median over the
explained runs, with a distribution-free interval of the median (order statistics at the
binomial quantiles, Conover 1999; :func:`pinbench.measure.stopping.median_interval`).
T_P here is the explained runs' own time (their idle time was measured in them);
``T_P_timing_s`` beside it is the uninstrumented timing runs' median.
"""
from __future__ import annotations

import csv
import statistics
from collections import defaultdict
from pathlib import Path

from pinbench.measure.stopping import median_interval
from pinbench.results.runs import RunRecord, write_table

SYNC = ("barrier_implicit", "barrier_explicit", "taskwait", "taskgroup", "reduction",
        "other_sync")
LOCKS = ("lock", "critical", "ordered", "other_mutex")
#: per run quantities, each with a median and an interval in the table
QUANTITIES = ("T_P", "I_P", "W_P", "F_P", "L_P", "barrier_wait", "taskwait_wait",
              "speedup_idle", "speedup_inflation", "speedup_actual")
COUNTS = ("parallel_regions", "barriers", "tasks_created", "tasks_executed")
COLUMNS = (["machine", "benchmark", "threads", "strategy", "n", "failed", "runtime",
            "T_s", "T_s_source", "T_1", "T_1_source", "T_P_timing_s", "speedup_max"]
           + [f"{q}{suffix}" for q in QUANTITIES for suffix in ("", "_low", "_high")]
           + list(COUNTS) + ["failure"])


def decompose(record: dict, time_s: float, threads: int) -> dict[str, float]:
    """P·T_P, I_P, W_P, L_P and the waits of one explained run (seconds), from the tool's
    ``record`` and the run's time ``time_s`` at ``threads`` threads.

    >>> initial = {"type": "initial", "team_s": 0.9, "barrier_implicit_wait_s": 0.1}
    >>> worker = {"type": "worker", "team_s": 0.9, "barrier_explicit_wait_s": 0.6,
    ...           "critical_wait_s": 0.1}
    >>> d = decompose({"threads": [initial, worker]}, 1.0, 2)
    >>> round(d["I_P"], 6), round(d["W_P"], 6), round(d["L_P"], 6)
    (0.8, 1.2, 0.1)
    """
    work = lock = barrier = taskwait = 0.0
    counts = dict.fromkeys(COUNTS, 0)
    for thread in record["threads"]:
        sync_i = sum(thread.get(f"{k}_wait_s", 0.0) for k in SYNC)
        lock_i = sum(thread.get(f"{k}_wait_s", 0.0) for k in LOCKS)
        span = time_s if thread.get("type") == "initial" else thread.get("team_s", 0.0)
        work += max(0.0, span - sync_i - lock_i)
        lock += lock_i
        barrier += thread.get("barrier_implicit_wait_s", 0.0) + \
            thread.get("barrier_explicit_wait_s", 0.0)
        taskwait += thread.get("taskwait_wait_s", 0.0) + thread.get("taskgroup_wait_s", 0.0)
        counts["parallel_regions"] += thread.get("parallel_regions", 0)
        counts["barriers"] += thread.get("barrier_implicit_waits", 0) + \
            thread.get("barrier_explicit_waits", 0)
        counts["tasks_created"] += thread.get("tasks_created", 0)
        counts["tasks_executed"] += thread.get("tasks_executed", 0)
    total = threads * time_s
    idle = max(0.0, total - work - lock)
    return {"T_P": time_s, "I_P": idle, "W_P": total - idle, "L_P": lock,
            "barrier_wait": barrier, "taskwait_wait": taskwait, **counts}


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def baselines(rows: list[dict], runs: list[RunRecord], baseline: str
              ) -> dict[tuple[str, str], dict]:
    """(machine, benchmark) -> T_1, T_s and where each came from.

    T_1: the explained job's one-thread runs, else the campaign's one-thread cell (the
    baseline strategy's counted runs, else every strategy's). T_s: the ``sequential``
    runs, else T_1 ("T_1 (no sequential command)").
    """
    t1, ts = defaultdict(list), defaultdict(list)
    for row in rows:
        if row["ok"] and row["kind"] in ("t1", "sequential"):
            (t1 if row["kind"] == "t1" else ts)[(row["machine"], row["benchmark"])].append(
                row["time_s"])
    cell1 = defaultdict(lambda: defaultdict(list))
    for run in runs:
        if run.threads == 1 and run.counts:
            cell1[(run.machine, run.benchmark)][run.strategy].append(run.time_s)
    found = {}
    for key in {(r["machine"], r["benchmark"]) for r in rows}:
        if t1[key]:
            t_1, source = _median(t1[key]), f"one-thread runs of the explained job ({len(t1[key])})"
        elif cell1[key]:
            times = cell1[key].get(baseline) or [t for ts_ in cell1[key].values() for t in ts_]
            which = baseline if cell1[key].get(baseline) else "every strategy"
            t_1, source = _median(times), f"the campaign's one-thread cell ({which}, {len(times)})"
        else:
            t_1, source = None, "none measured"
        if ts[key]:
            t_s, s_source = _median(ts[key]), f"sequential command ({len(ts[key])})"
        else:
            t_s, s_source = t_1, "T_1 (no sequential command)"
        found[key] = {"T_1": t_1, "T_1_source": source, "T_s": t_s, "T_s_source": s_source}
    return found


def explain_table(rows: list[dict], runs: list[RunRecord], baseline: str = "os",
                  confidence: float = 0.95) -> list[dict]:
    """One row per (machine, benchmark, threads, strategy) with explained runs (columns
    :data:`COLUMNS`); a cell whose explained runs all failed says why in ``failure``."""
    base = baselines(rows, runs, baseline)
    timing = defaultdict(list)
    for run in runs:
        if run.counts:
            timing[(run.machine, run.benchmark, run.threads, run.strategy)].append(run.time_s)
    cells = defaultdict(list)
    for row in rows:
        if row["kind"] == "explained":
            cells[(row["machine"], row["benchmark"], row["threads"], row["strategy"])].append(row)
    table = []
    for key in sorted(cells):
        machine, bench, threads, strategy = key
        b = base[(machine, bench)]
        good = [r for r in cells[key] if r["ok"] and r.get("ompt")]
        failed = [r for r in cells[key] if not (r["ok"] and r.get("ompt"))]
        out = {"machine": machine, "benchmark": bench, "threads": threads,
               "strategy": strategy, "n": len(good), "failed": len(failed),
               "runtime": next((r["runtime"] for r in good), ""),
               "T_P_timing_s": _median(timing.get(key, [])), **b,
               "failure": failed[0]["failure"] if failed and not good else ""}
        t_1, t_s = b["T_1"], b["T_s"]
        out["speedup_max"] = threads * t_s / t_1 if t_1 and t_s else None
        per_run = defaultdict(list)
        for r in good:
            d = decompose(r["ompt"], r["time_s"], threads)
            if t_1:
                d["F_P"] = d["W_P"] - t_1
            if t_1 and t_s:
                d["speedup_idle"] = threads * t_s / (t_1 + d["I_P"])
                d["speedup_inflation"] = threads * t_s / (threads * d["T_P"] - d["I_P"])
                d["speedup_actual"] = t_s / d["T_P"]
            for name, value in d.items():
                per_run[name].append(value)
        for q in QUANTITIES:
            values = per_run.get(q, [])
            out[q] = _median(values)
            interval = median_interval(values, confidence) if values else None
            out[f"{q}_low"], out[f"{q}_high"] = interval or (None, None)
        for c in COUNTS:
            out[c] = _median(per_run.get(c, []))
        table.append(out)
    return table


def write_explain(table: list[dict], path: Path) -> None:
    """Write the table as CSV (empty cells for what is unknown)."""
    write_table(path, COLUMNS, ({k: ("" if row.get(k) is None else row.get(k)) for k in COLUMNS}
                                for row in table))


def read_explain(path: Path) -> list[dict]:
    """The table back, numbers as floats (None where empty)."""
    with Path(path).open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    text = {"machine", "benchmark", "strategy", "runtime", "T_s_source", "T_1_source", "failure"}
    return [{k: (v if k in text else (float(v) if v else None)) for k, v in row.items()}
            for row in rows]
