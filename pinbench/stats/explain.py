"""Why a placement wins: idle time, work inflation and runtime waits per strategy.

Implements the decomposition of Acar, Charguéraud and Rainey ("Parallel work inflation,
memory effects, and their empirical analysis"): with P threads, a run time T_P, the
total idle time I_P and T_1 the parallel program's time on one thread,

    P·T_P = W_P + I_P,      F_P = W_P − T_1 = P·T_P − I_P − T_1   (work inflation),

and the factored speedups: maximal P·T_s/T_1, idle-time-specific P·T_s/(T_1 + I_P),
inflation-specific P·T_s/(P·T_P − I_P), actual T_s/T_P (T_s: the sequential baseline).

**One time base.** Every quantity covers one span, the whole run (the launcher's wall time
``wall_s``, from the program's start to its exit), for every thread and for T_1 and T_s:
from one explained run's OMPT record (:mod:`pinbench.measure.explain`), per thread i,
``sync_i`` (waits at barriers, taskwait, taskgroup, reductions) and ``lock_i`` (waits for
locks, critical sections, ordered); the initial thread works ``T_P − sync_i − lock_i``
(serial phases are work), a worker ``team_i − sync_i − lock_i`` (outside its team it
waits for work: ``idle_between``, Σ over the workers of T_P − team_i, the idle time between
regions, before the first and after the last, kept apart from the barrier waits, so that
I_P = Σ sync + idle_between). The lock waits L_P (the runtime's waits of Bhattacharjee et al.) are kept
apart from the idle time: I_P = P·T_P − Σ work − L_P, everything that is neither, so
W_P = Σ work + L_P, and the stacked bar reads T_1 + I_P + (F_P − L_P) + L_P = P·T_P. With a
printed ``time`` the timing verdict compares the printed time (often a kernel's), a part of
that span: ``printed_share`` says how large a part, and the decomposition still covers the
whole run (the printed time for the initial thread against whole-run team times for the
workers made idle time vanish and work inflate).

**One runtime.** T_1 is measured where the explained runs are, on libomp under the tool: the
explained runs of the campaign's one-thread cell, else the job's one-thread runs (made under
the tool). The uninstrumented one-thread time, on the program's own runtime (libgomp for a
gcc build), is kept beside it (``T_1_uninstrumented``) when measured; T_1 falls back on it
only when nothing else was measured, and ``T_1_same_runtime`` then says so (F_P includes the
difference between the runtimes).

**The explained runs reproduce the timing runs, or do not explain them.** Per cell, the
explained runs' time (the timing verdict's: printed or wall) against the uninstrumented timing
runs' (same placement): when the distribution-free intervals of their medians are apart by
more than :data:`TOLERANCE` of the timing runs' (the runtime change and the tool: up to 11%
on the bundled benchmarks, docs/performance.md), ``reproduces`` is False and
``not_applicable`` says why. So it is when the explained runs did not all do the same work
(:func:`same_work`: their counts of regions, barriers and lock acquisitions differ between runs,
or their regions from the one-thread runs'): a program that sizes its work to a time takes the
same time for other work.

**Figures in their range, or none.** A derived figure outside its possible range beyond the
intervals of its parts (F_P below zero, a speedup above P: :func:`out_of_range`) is not
written; ``refused`` says why, in one line. A count (regions, barriers, lock acquisitions, tasks) is one that a run
made: the lower median over the explained runs (the runs of a cell that reproduces all agree).
``tool_cost`` estimates what the tool itself adds to a run (:data:`TOOL_COST` per event
counted); the reading says when it is larger than the difference it explains.

**Differences, not noise.** For every strategy but the baseline, the Hodges-Lehmann shift
(baseline − strategy, thread-s) of P·T_P and of its terms, idle time I_P, work inflation
(W_P − L_P: T_1 is common) and lock waits L_P, with Moses' distribution-free interval
(:mod:`pinbench.stats.shift`): P·T_P's at ``confidence``, each term's at
1 − (1 − confidence)/3 (Bonferroni over the three terms). A term is a finding, in ``lower``
(the strategy's is lower) or ``higher``, only when its interval excludes zero and the shift
is at least :data:`MIN_SHARE` of the baseline's P·T_P. The rule's false-positive rate and
power: ``python -m pinbench.stats.simulate_explain``, docs/explain.md.

Per (machine, benchmark, threads, strategy) every quantity is the median over the
explained runs, with a distribution-free interval of the median (order statistics at the
binomial quantiles, Conover 1999; :func:`pinbench.measure.stopping.median_interval`).
"""
from __future__ import annotations

import csv
import statistics
from collections import defaultdict
from dataclasses import make_dataclass
from pathlib import Path

from pinbench.measure.stopping import median_interval
from pinbench.results.rows import record
from pinbench.results.runs import RunRecord, write_table
from pinbench.stats.shift import shift_interval

#: The version of ``explain.csv``: the workflow passes it to the explain rule as a parameter,
#: so a table made by an older pinbench is made again.
FORMAT = 3
SYNC = ("barrier_implicit", "barrier_explicit", "taskwait", "taskgroup", "reduction",
        "other_sync")
LOCKS = ("lock", "critical", "ordered", "other_mutex")
#: How far apart the explained and the timing runs' medians may lie, beyond their intervals,
#: as a share of the timing runs' median: libomp against libgomp and the tool cost up to 11%
#: on the bundled benchmarks, more on fine-grained synchronisation (:data:`TOOL_COST`).
TOLERANCE = 0.25
#: What the tool adds per event it counts, in thread-s (P x its extra wall time per construct
#: over the events counted): ``python perf/ompt_overhead.py --constructs`` at 2 threads on
#: libomp 14, docs/explain.md (the parallel region's includes its closing barrier, which is
#: counted among the barriers too: an estimate on the high side).
TOOL_COST = {"parallel_regions": 1.7e-6, "barriers": 0.26e-6, "lock_acquisitions": 0.28e-6}
#: The counts that a run of a program doing a fixed work makes alike in every run (the
#: explained runs of a cell must agree on each, and on the regions with the one-thread runs).
WORK_COUNTS = {"parallel_regions": "parallel regions", "barriers": "barriers",
               "lock_acquisitions": "lock acquisitions"}
#: The least shift of a term, as a share of the baseline's P·T_P, that a reading names.
MIN_SHARE = 0.02
#: The terms of P·T_P a reading names: key -> (words, per-run quantity).
TERMS = {"idle": ("idle time", "I_P"), "inflation": ("work inflation", "W_P_less_L_P"),
         "locks": ("lock waits", "L_P")}
#: per run quantities, each with a median and an interval in the table
QUANTITIES = ("T_P", "time_s", "I_P", "W_P", "F_P", "L_P", "barrier_wait", "taskwait_wait",
              "idle_between", "speedup_idle", "speedup_inflation", "speedup_actual")
#: the derived figures whose possible range is checked (:func:`out_of_range`), in words
RANGED = {"F_P": "work inflation F_P", "speedup_max": "maximal speedup",
          "speedup_idle": "idle-time-specific speedup",
          "speedup_inflation": "inflation-specific speedup", "speedup_actual": "actual speedup"}
#: shifts baseline − strategy, each with an interval
DIFFERENCES = ("d_total", *(f"d_{term}" for term in TERMS))
COUNTS = ("parallel_regions", "barriers", "lock_acquisitions", "tasks_created",
          "tasks_executed")
TEXT = ("machine", "benchmark", "strategy", "runtime", "time_source", "T_s_source",
        "T_1_source", "not_applicable", "refused", "lower", "higher", "failure")
FLAGS = ("T_1_same_runtime", "reproduces")
COLUMNS = (["machine", "benchmark", "threads", "strategy", "n", "failed", "runtime",
            "time_source", "printed_share", "T_s", "T_s_source", "T_1", "T_1_source",
            "T_1_same_runtime", "T_1_uninstrumented", "speedup_max", "T_P_timing_s",
            "T_P_timing_s_low", "T_P_timing_s_high", "reproduces", "not_applicable", "refused"]
           + [f"{q}{suffix}" for q in QUANTITIES + DIFFERENCES for suffix in ("", "_low", "_high")]
           + ["lower", "higher"] + list(COUNTS) + ["tool_cost", "failure"])
#: A row of ``explain.csv``: one (machine, benchmark, threads, strategy)'s explained runs, a
#: field per column of :data:`COLUMNS`: the :data:`TEXT` ones text, the :data:`FLAGS` True,
#: False or None (unknown), the :data:`COUNTS` whole numbers, every other a number or None
#: (unknown, empty in the file).
Explanation = make_dataclass(
    "Explanation", [(name, str if name in TEXT else bool | None if name in FLAGS
                     else int | None if name in COUNTS else float | None)
                    for name in COLUMNS], frozen=True)


def explanation(row: dict) -> Explanation:
    """The record of a row of :func:`explain_table` (a column it lacks: None)."""
    return Explanation(**{name: row.get(name) for name in COLUMNS})


def decompose(record: dict, span_s: float, threads: int) -> dict[str, float]:
    """P·T_P, I_P, W_P, L_P and the waits of one explained run (seconds), from the tool's
    ``record`` and the run's whole span ``span_s`` (its wall time) at ``threads`` threads.

    >>> initial = {"type": "initial", "team_s": 0.9, "barrier_implicit_wait_s": 0.1}
    >>> worker = {"type": "worker", "team_s": 0.9, "barrier_explicit_wait_s": 0.6,
    ...           "critical_wait_s": 0.1}
    >>> d = decompose({"threads": [initial, worker]}, 1.0, 2)
    >>> round(d["I_P"], 6), round(d["W_P"], 6), round(d["L_P"], 6)
    (0.8, 1.2, 0.1)
    """
    work = lock = barrier = taskwait = between = 0.0
    counts = dict.fromkeys(COUNTS, 0)
    for thread in record["threads"]:
        sync_i = sum(thread.get(f"{k}_wait_s", 0.0) for k in SYNC)
        lock_i = sum(thread.get(f"{k}_wait_s", 0.0) for k in LOCKS)
        span = span_s if thread.get("type") == "initial" else thread.get("team_s", 0.0)
        if thread.get("type") != "initial":
            between += max(0.0, span_s - span)
        work += max(0.0, span - sync_i - lock_i)
        lock += lock_i
        barrier += thread.get("barrier_implicit_wait_s", 0.0) + \
            thread.get("barrier_explicit_wait_s", 0.0)
        taskwait += thread.get("taskwait_wait_s", 0.0) + thread.get("taskgroup_wait_s", 0.0)
        counts["parallel_regions"] += thread.get("parallel_regions", 0)
        counts["barriers"] += thread.get("barrier_implicit_waits", 0) + \
            thread.get("barrier_explicit_waits", 0)
        counts["lock_acquisitions"] += sum(thread.get(f"{k}_waits", 0) for k in LOCKS)
        counts["tasks_created"] += thread.get("tasks_created", 0)
        counts["tasks_executed"] += thread.get("tasks_executed", 0)
    total = threads * span_s
    idle = max(0.0, total - work - lock)
    return {"T_P": span_s, "P_T_P": total, "I_P": idle, "W_P": total - idle, "L_P": lock,
            "W_P_less_L_P": total - idle - lock, "barrier_wait": barrier,
            "taskwait_wait": taskwait, "idle_between": between, **counts}


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _one_strategy(by_strategy: dict[str, list[float]], baseline: str) -> tuple[list[float], str]:
    """The baseline strategy's values, else every strategy's, and which it was."""
    if by_strategy.get(baseline):
        return by_strategy[baseline], baseline
    return [t for times in by_strategy.values() for t in times], "every strategy"


def baselines(rows: list[dict], runs: list[RunRecord], baseline: str
              ) -> dict[tuple[str, str], dict]:
    """(machine, benchmark) -> T_1, T_s (wall times, medians), where each came from,
    whether T_1 ran on the explained runs' runtime (see the module's text), and under
    ``runs`` the times T_1 and T_s are the medians of (``T_1``, ``T_s``) and the parallel
    regions per run of the one-thread runs under the tool that T_1 came from (``regions``,
    empty when none)."""
    tool, plain, ts = defaultdict(lambda: defaultdict(list)), defaultdict(list), defaultdict(list)
    regions = defaultdict(lambda: defaultdict(list))
    for row in rows:
        key = (row["machine"], row["benchmark"])
        if not row["ok"]:
            continue
        if row["kind"] == "sequential":
            ts[key].append(row["wall_s"])
        elif row["kind"] == "t1" and row.get("ompt"):
            tool[key]["the job's one-thread runs"].append(row["wall_s"])
            regions[key]["the job's one-thread runs"].append(_regions(row["ompt"]))
        elif row["kind"] == "t1":
            plain[key].append(row["wall_s"])
        elif row["kind"] == "explained" and row["threads"] == 1 and row.get("ompt"):
            tool[key][row["strategy"]].append(row["wall_s"])
            regions[key][row["strategy"]].append(_regions(row["ompt"]))
    cell1 = defaultdict(lambda: defaultdict(list))
    for run in runs:
        if run.threads == 1 and run.counts:
            cell1[(run.machine, run.benchmark)][run.strategy].append(run.wall_s)
    found = {}
    for key in {(r["machine"], r["benchmark"]) for r in rows}:
        uninstrumented, plain_source = plain[key], "the job's uninstrumented one-thread runs"
        if not uninstrumented and cell1[key]:
            uninstrumented, which = _one_strategy(cell1[key], baseline)
            plain_source = f"the campaign's one-thread cell ({which})"
        t_1_plain = _median(uninstrumented)
        one_regions = _one_strategy(regions[key], baseline)[0] if tool[key] else []
        times = []
        if tool[key]:
            times, which = _one_strategy(tool[key], baseline)
            t_1, same = _median(times), True
            source = (f"one-thread runs on libomp under the tool ({which}, {len(times)})"
                      if which != "the job's one-thread runs" else
                      f"the job's one-thread runs on libomp under the tool ({len(times)})")
        elif t_1_plain is not None:
            times, t_1, same = uninstrumented, t_1_plain, False
            source = (f"{plain_source}, {len(uninstrumented)} runs on the program's own "
                      "runtime: F_P includes the difference between the runtimes")
        else:
            t_1, same, source = None, None, "none measured"
        if ts[key]:
            t_s, s_source = _median(ts[key]), f"sequential command ({len(ts[key])})"
        else:
            t_s, s_source = t_1, "T_1 (no sequential command)"
        found[key] = {"T_1": t_1, "T_1_source": source, "T_1_same_runtime": same,
                      "T_1_uninstrumented": t_1_plain, "T_s": t_s, "T_s_source": s_source,
                      "runs": {"T_1": times, "T_s": ts[key] or times, "regions": one_regions}}
    return found


def _regions(record: dict) -> int:
    """The parallel regions an OMPT record counts."""
    return sum(thread.get("parallel_regions", 0) for thread in record["threads"])


def reproduction(explained: list[float], timing: list[float], confidence: float
                 ) -> tuple[bool | None, str]:
    """Whether the explained runs' times reproduce the timing runs' (None: nothing to
    compare), and, when not, why in words: their intervals of the median (their medians,
    when too few runs for an interval: then none is written) apart by more than
    :data:`TOLERANCE`.

    >>> reproduction([0.15] * 10, [5.8] * 10, 0.95)[0], reproduction([1.05] * 10, [1.0] * 10, 0.95)
    (False, (True, ''))
    >>> reproduction([0.441] * 5, [1.0] * 10, 0.95)[1][:62]
    'the explained runs took 0.441 s (too few runs for an interval)'
    """
    if not explained or not timing:
        return None, ""
    e_mid, t_mid = statistics.median(explained), statistics.median(timing)
    e_interval, t_interval = median_interval(explained, confidence), median_interval(timing,
                                                                                     confidence)
    e_low, e_high = e_interval or (e_mid, e_mid)
    t_low, t_high = t_interval or (t_mid, t_mid)
    if e_low <= t_high * (1 + TOLERANCE) and e_high * (1 + TOLERANCE) >= t_low:
        return True, ""
    return False, (f"the explained runs took {seconds(e_mid, e_interval)}, the timing runs "
                   f"{seconds(t_mid, t_interval)}: more than {TOLERANCE:.0%} apart beyond their "
                   "intervals, so the explained runs do not reproduce the timed behaviour "
                   "(another runtime, the tool, or load)")


def seconds(median: float, interval: tuple[float, float] | None) -> str:
    """A median in seconds with its interval, or saying there is none, the same way in every
    output (the table leaves the interval's columns empty, the report shows "–").

    >>> seconds(0.5, (0.4, 0.6)), seconds(0.441, None)
    ('0.5 s [0.4; 0.6]', '0.441 s (too few runs for an interval)')
    """
    if interval is None:
        return f"{median:.3g} s (too few runs for an interval)"
    return f"{median:.3g} s [{interval[0]:.3g}; {interval[1]:.3g}]"


def same_work(counts: dict[str, list[int]], one_thread_regions: list[int]) -> str:
    """Why the explained runs of a cell did not all do the same work, "" when they did: each
    count of :data:`WORK_COUNTS` (``counts``: per run) is the same in every run, and the
    parallel regions are those of the one-thread runs T_1 came from (``one_thread_regions``).
    A program doing a fixed work makes the same counts in every run; one that sizes its work
    to a time does not, and its time says nothing of a fixed work.

    >>> same_work({"parallel_regions": [4, 4], "barriers": [8, 8]}, [4, 4])
    ''
    >>> same_work({"parallel_regions": [40, 95]}, [])
    'their parallel regions per run differ, 40 to 95: the runs did different work'
    >>> same_work({"parallel_regions": [4, 4]}, [8])
    'the one-thread runs made 8 parallel regions per run, these 4: they did different work'
    """
    for name, words in WORK_COUNTS.items():
        values = counts.get(name, [])
        if values and min(values) != max(values):
            return (f"their {words} per run differ, {min(values)} to {max(values)}: the runs did "
                    "different work")
    regions = counts.get("parallel_regions", [])
    if regions and one_thread_regions and set(one_thread_regions) != {regions[0]}:
        made = "/".join(map(str, sorted(set(one_thread_regions))))
        return (f"the one-thread runs made {made} parallel regions per run, these {regions[0]}: "
                "they did different work")
    return ""


def out_of_range(row: dict, t_1: tuple[float, float] | None,
                 t_s: tuple[float, float] | None) -> tuple[list[str], str]:
    """The derived figures of a row of :func:`explain_table` outside their possible range, and
    why in one line ("" when none), beyond the intervals of their parts (``t_1``, ``t_s``: the
    intervals of the median of T_1 and T_s; nothing is refused without them, or without an
    interval of the explained runs' figure) and by more than :data:`MIN_SHARE`: work
    inflation F_P = W_P − T_1 below zero (W_P's interval's upper end below T_1's lower end by
    more than :data:`MIN_SHARE` of P·T_P: the P-thread runs did less work than the one-thread
    runs), a speedup above P (its interval's lower end, taken at T_s's lower end and T_1's upper
    end, above P by more than :data:`MIN_SHARE` of P).

    >>> row = {"threads": 2, "T_P": 0.05, "T_1": 0.16, "W_P": 0.08, "W_P_low": 0.079,
    ...        "W_P_high": 0.081, "F_P": -0.08, "F_P_low": -0.081, "F_P_high": -0.079,
    ...        "speedup_max": 2.0, "T_s": 0.16, "speedup_actual": 3.9, "speedup_actual_low": 3.8}
    >>> out_of_range(row, (0.15, 0.17), (0.15, 0.17))  # doctest: +ELLIPSIS
    (['F_P', 'speedup_actual'], 'work inflation F_P -0.08 thread-s [-0.081; -0.079] lies below 0: \
the 2-thread runs did less work than the one-thread runs (T_1 0.16 s [0.15; 0.17])...; actual \
speedup 3.9 above P = 2: the runs it divides did not do the same work')
    >>> out_of_range(row, None, None)
    ([], '')
    """
    if t_1 is None or t_s is None:
        return [], ""
    threads, names, why = row["threads"], [], []
    high = row.get("W_P_high")
    if row.get("F_P") is not None and high is not None and \
            high - t_1[0] < -MIN_SHARE * threads * row["T_P"]:
        names.append("F_P")
        why.append(f"{RANGED['F_P']} {row['F_P']:.3g} thread-s [{row['F_P_low']:.3g}; "
                   f"{row['F_P_high']:.3g}] lies below 0: the {threads}-thread runs did less work "
                   f"than the one-thread runs (T_1 {row['T_1']:.3g} s [{t_1[0]:.3g}; {t_1[1]:.3g}]), "
                   "which did other work or met a memory effect the decomposition does not model")
    above = []
    for name in RANGED:
        if name == "F_P" or row.get(name) is None:
            continue
        low = row[name] if name == "speedup_max" else row.get(f"{name}_low")
        if low is None:
            continue
        low *= t_s[0] / row["T_s"]
        if name in ("speedup_max", "speedup_idle"):  # T_1 in the denominator
            low *= row["T_1"] / t_1[1]
        if low > threads * (1 + MIN_SHARE):
            above.append(name)
    if above:
        names += above
        why.append(", ".join(f"{RANGED[name]} {row[name]:.3g}" for name in above)
                   + f" above P = {threads}: the runs it divides did not do the same work")
    return names, "; ".join(why)


def tool_cost(counts: dict[str, float | None]) -> float | None:
    """The tool's own cost in one run, thread-s: :data:`TOOL_COST` per event counted
    (None when the counts are unknown).

    >>> tool_cost({"parallel_regions": None}) is None
    True
    """
    if any(counts.get(name) is None for name in TOOL_COST):
        return None
    return sum(cost * counts[name] for name, cost in TOOL_COST.items())


def differences(mine: dict[str, list[float]], base: dict[str, list[float]],
                confidence: float) -> dict:
    """The shifts baseline − strategy of P·T_P (``d_total``) and of each term of
    :data:`TERMS` (``d_<term>``), each with its interval (``_low``, ``_high``; None when too
    few runs), and the terms found (``lower``, ``higher``: space-separated keys), from the
    per-run values of the strategy (``mine``) and the baseline (``base``): ``P_T_P`` and each
    term's quantity. The rule is the module's text's.

    >>> base = {"P_T_P": [2.0 + k / 100 for k in range(8)], "I_P": [0.5] * 8,
    ...         "W_P_less_L_P": [1.5 + k / 100 for k in range(8)], "L_P": [0.0] * 8}
    >>> mine = base | {"P_T_P": [1.8 + k / 100 for k in range(8)],
    ...                "W_P_less_L_P": [1.3 + k / 100 for k in range(8)]}
    >>> found = differences(mine, base, 0.95)
    >>> round(found["d_inflation"], 6), found["lower"], found["higher"]
    (0.2, 'inflation', '')
    """
    scale = _median(base["P_T_P"])
    term_confidence = 1 - (1 - confidence) / len(TERMS)
    out = {"lower": "", "higher": ""}
    for name, quantity, level in [("d_total", "P_T_P", confidence)] + [
            (f"d_{term}", q, term_confidence) for term, (_, q) in TERMS.items()]:
        shift = shift_interval(base[quantity], mine[quantity], level)
        out[name], out[f"{name}_low"], out[f"{name}_high"] = shift or (None, None, None)
        if shift is None or name == "d_total" or not scale:
            continue
        estimate, low, high = shift
        if abs(estimate) >= MIN_SHARE * scale and (low > 0 or high < 0):
            which = "lower" if low > 0 else "higher"
            out[which] = " ".join(filter(None, [out[which], name.removeprefix("d_")]))
    return out


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
    table, per_cell = [], {}
    for key in sorted(cells):
        machine, bench, threads, strategy = key
        b = dict(base[(machine, bench)])
        one_thread = b.pop("runs")
        good = [r for r in cells[key] if r["ok"] and r.get("ompt")]
        failed = [r for r in cells[key] if not (r["ok"] and r.get("ompt"))]
        printed = [r["time_s"] / r["wall_s"] for r in good
                   if r.get("time_source") == "regex" and r["wall_s"]]
        out = {"machine": machine, "benchmark": bench, "threads": threads,
               "strategy": strategy, "n": len(good), "failed": len(failed),
               "runtime": next((r["runtime"] for r in good), ""),
               "time_source": "regex" if printed else "wall", "printed_share": _median(printed),
               "T_P_timing_s": _median(timing.get(key, [])), **b,
               "failure": failed[0]["failure"] if failed and not good else ""}
        interval = median_interval(timing.get(key, []), confidence)
        out["T_P_timing_s_low"], out["T_P_timing_s_high"] = interval or (None, None)
        out["reproduces"], out["not_applicable"] = reproduction(
            [r["time_s"] for r in good], timing.get(key, []), confidence)
        t_1, t_s = b["T_1"], b["T_s"]
        out["speedup_max"] = threads * t_s / t_1 if t_1 and t_s else None
        per_run = defaultdict(list)
        for r in good:
            d = decompose(r["ompt"], r["wall_s"], threads) | {"time_s": r["time_s"]}
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
        for c in COUNTS:  # a count some run made: the lower median
            out[c] = statistics.median_low(per_run[c]) if per_run.get(c) else None
        out["tool_cost"] = tool_cost(out)
        work = same_work({c: per_run.get(c, []) for c in WORK_COUNTS}, one_thread["regions"])
        if work:
            out["reproduces"] = False
            out["not_applicable"] = "; ".join(filter(None, [out["not_applicable"], work]))
        refused, out["refused"] = out_of_range(
            out, median_interval(one_thread["T_1"], confidence),
            median_interval(one_thread["T_s"], confidence))
        for name in refused:
            out.update({c: None for c in (name, f"{name}_low", f"{name}_high") if c in out})
        per_cell[key] = per_run
        table.append(out)
    for out in table:
        mine = per_cell[(out["machine"], out["benchmark"], out["threads"], out["strategy"])]
        theirs = per_cell.get((out["machine"], out["benchmark"], out["threads"], baseline))
        if out["strategy"] != baseline and mine and theirs:
            out.update(differences(mine, theirs, confidence))
    return table


def write_explain(table: list[dict], path: Path) -> None:
    """Write the table as CSV (empty cells for what is unknown)."""
    write_table(path, COLUMNS, ({k: ("" if row.get(k) is None else row.get(k)) for k in COLUMNS}
                                for row in table))


def read_explain(path: Path) -> list[Explanation]:
    """The table back (ValueError for a table of another version: its columns differ)."""
    with Path(path).open(newline="") as handle:
        reader = csv.DictReader(handle)
        if list(reader.fieldnames or []) != COLUMNS:
            raise ValueError(f"{path} has other columns than this pinbench writes: it was "
                             "written by another version (snakemake --forcerun explain "
                             "rewrites it)")
        return [record(Explanation, row) for row in reader]
