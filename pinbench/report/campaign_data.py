"""The report's sections, made from a campaign's results (:mod:`pinbench.report.campaign_results`).

Nothing here reads a file, measures or recomputes statistics: a section whose data the
campaign did not write (no measurement on a planned machine, no affinity matrix before
tracing) is simply left out.
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict

import numpy as np

from pinbench.place.record import core_sharing
from pinbench.place.symmetry import flat_machine
from pinbench.report import figures
from pinbench.report.campaign_results import MachineResults
from pinbench.results.runs import RunRecord
from pinbench.stats.analyse import Verdict
from pinbench.stats.cells import CellStats
from pinbench.stats.models import EXPLAINED, ModelError, ModelRow, time_curve_text, unmodelled
from pinbench.stats.tables import footnotes, split_warnings
from pinbench.topology import Node, Topology

#: The p-value inside a warning of the Speedup-Test's checks ("(Shapiro-Wilk p = 0.002)"):
#: left out of the report's notes, so one check says one note (``cells.csv`` keeps them).
_CHECK_P = re.compile(r" \((?:Shapiro-Wilk|Kolmogorov-Smirnov) p = [^)]*\)")


def run_counts(runs: list[RunRecord]) -> dict:
    """Totals over the campaign's (or one machine's) runs, the verification results counted."""
    return {
        "runs": len(runs),
        "failed": sum(not r.ok for r in runs),
        "misplaced": sum(r.misplaced for r in runs),
        "first": min((r.started_at for r in runs), default=None),
        "last": max((r.started_at for r in runs), default=None),
        "verification": dict(sorted(Counter(r.verification for r in runs).items())),
        "hosts": sorted({r.host for r in runs if r.host}),
    }


def placement_tree(node: Node, threads_on: dict[int, int]) -> dict:
    """The tree for drawing: chains of single children are folded into one box, as lstopo does."""
    labels = []
    while True:
        labels.append(node.type + (f" P#{node.os_index}" if node.type in ("Package", "PU") else ""))
        if len(node.children) != 1:
            break
        node = node.children[0]
    box = {"label": " + ".join(labels), "numa": node.numa, "children": []}
    if node.type == "PU":
        box.update(pu=node.os_index, thread=threads_on.get(node.os_index))
    box["children"] = [placement_tree(child, threads_on) for child in node.children]
    return box


def _cell_key(cell: dict) -> tuple:
    return cell["machine"], cell["benchmark"], int(cell["threads"])


def warning_notes(rows: list[dict]) -> tuple[list[list[int]], list[str]]:
    """The distinct warnings of a table's rows (their ``warnings`` field) said once: per row
    the numbers of its notes, and the notes (:func:`pinbench.stats.tables.footnotes`), each check's
    p-value left out."""
    return footnotes([[_CHECK_P.sub("", w) for w in split_warnings(row.get("warnings"))]
                      for row in rows])


def indistinct_machines(verdicts: list[Verdict]) -> list[str]:
    """Machines on which, in every cell, the strategies with a fixed placement coincide."""
    machines: dict[str, bool] = {}
    for verdict in verdicts:
        machines[verdict.machine] = machines.get(verdict.machine, True) and verdict.coincide
    return [machine for machine, coincide in machines.items() if coincide]


def flat_machines(machines: dict[str, MachineResults], names: list[str]) -> dict[str, str]:
    """Those of the machines ``names`` that are flat, each with what makes it so
    (:func:`pinbench.place.symmetry.flat_machine`), from the topology the campaign saved."""
    trees = {name: machines[name].topology for name in names if name in machines}
    return {name: flat for name, tree in trees.items()
            if tree is not None and (flat := flat_machine(tree))}


def summary_by_threads(summary: list[dict]) -> list[dict]:
    """The study's tables: one per thread count, strategies as rows, machines side by side."""
    tables: dict[int, dict] = {}
    for row in summary:
        table = tables.setdefault(int(row["threads"]), {"machines": [], "rows": {}})
        if row["machine"] not in table["machines"]:
            table["machines"].append(row["machine"])
        table["rows"].setdefault(row["strategy"], {})[row["machine"]] = row
    return [{"threads": t, "machines": tables[t]["machines"],
             "rows": list(tables[t]["rows"].items())} for t in sorted(tables)]


def placement_scores(machines: dict[str, MachineResults], cells: list[dict]
                     ) -> dict[tuple, dict]:
    """Per cell key and strategy: the placement's J and thread pairs sharing a core (None if
    the placement or the topology is not there), to show beside the strategy's verdicts."""
    placements = {(key.machine, key.benchmark, key.threads, key.strategy): placement
                  for machine in machines.values()
                  for key, placement in machine.placements.items()}
    scores: dict[tuple, dict] = {}
    for cell in cells:
        key = (*_cell_key(cell), cell["strategy"])
        placement = placements.get(key)
        tree = machines[key[0]].topology if key[0] in machines else None
        scores[key] = {"J": None if placement is None else placement.J,
                       "core_pairs": None if placement is None or tree is None
                       else core_sharing(tree, placement)}
    return scores


def figure_name(machine: str, bench: str, threads: int, kind: str) -> str:
    """The name of a section's figure file (:meth:`Layout.report_figure`)."""
    return f"{machine}-{bench}-t{threads}-{kind}"


def counter_medians(runs: list[RunRecord], label: dict[str, str]) -> dict:
    """The median of each counter per experiment (``label``: strategy -> its label), over the
    runs given: ``{"names": [...], "rows": [{"strategy": label, "values": [...]}]}``; no names
    when the runs counted nothing."""
    values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        for name, count in run.counter_values.items():
            if count is not None:
                values[label.get(run.strategy, run.strategy)][name].append(count)
    names = sorted({name for per in values.values() for name in per})
    return {"names": names,
            "rows": [{"strategy": strategy,
                      "values": [float(np.median(per[name])) if per.get(name) else None
                                 for name in names]}
                     for strategy, per in values.items()]}


def benchmark_sections(cells: list[dict], runs: list[RunRecord], scores: dict[tuple, dict],
                       quiet_threshold: float) -> list[dict]:
    """Per (machine, benchmark, threads): the strategies' table, its notes, its counters and
    the data of its two figures, drawn by the page (``report.js``).

    ``scores`` (:func:`placement_scores`) adds each strategy's J and core pairs to its row;
    each distinct warning of the table is one note (``notes``), its rows name it by number
    (``note_marks``). ``series``: one per experiment, its usable runs as ``[order index,
    time, busy]`` (busy: other processes used more than ``quiet_threshold`` of the CPUs
    during the run; the run-order plot rings it); ``figure``: the section's id, under which
    the page's data holds the series (None without a usable run).
    """
    by_key: dict[tuple, list[dict]] = defaultdict(list)
    for cell in cells:
        by_key[_cell_key(cell)].append(cell | scores.get((*_cell_key(cell), cell["strategy"]), {}))
    runs_by_key: dict[tuple, list[RunRecord]] = defaultdict(list)
    for run in runs:
        runs_by_key[(run.machine, run.benchmark, run.threads)].append(run)
    sections = []
    for key in sorted(by_key):
        usable = [r for r in runs_by_key[key] if r.counts]
        # one series per experiment: a strategy measured for others too is labelled with them
        label = {r.strategy: r.strategy + (f" (+{len(r.stands_for.split())})" if r.stands_for
                                           else "") for r in runs_by_key[key]}
        measured = [c["strategy"] for c in by_key[key] if c["strategy"] in label]
        series = [{"label": label[s],
                   "runs": [[r.order_index, float(f"{r.time_s:.6g}"),
                             int((r.other_cpu or 0) > quiet_threshold)]
                            for r in usable if r.strategy == s]} for s in measured]
        marks, notes = warning_notes(by_key[key])
        rows = [cell | {"note_marks": mark} for cell, mark in zip(by_key[key], marks)]
        drawn = any(s["runs"] for s in series)
        sections.append({
            "machine": key[0], "benchmark": key[1], "threads": key[2], "cells": rows,
            "notes": notes, "smt": any(c.get("core_pairs") for c in by_key[key]),
            "busy_runs": sum(busy for s in series for *_, busy in s["runs"]),
            "figure": f"{key[0]}-t{key[2]}" if drawn else None, "series": series,
            "figure_names": {kind: figure_name(*key, kind) for kind in ("times", "order")},
            "counters": counter_medians(usable, label),
        })
    return sections


def cpu_kinds(machine: MachineResults) -> str:
    """A hybrid machine's CPU kinds in one line ("" for a machine of one kind)."""
    return machine.topology.kinds_line() if machine.topology else ""


def _on_kinds(topo: Topology, pus: tuple[int, ...]) -> str:
    """On a hybrid machine, how many threads each kind holds: ``8 on IntelCore, 2 on IntelAtom``."""
    if not topo.hybrid:
        return ""
    counts: dict[str, int] = defaultdict(int)
    for pu in pus:
        counts[topo.kind_of(pu)] += 1
    return ", ".join(f"{n} on {kind}" for kind, n in counts.items())


def placement_sections(machine: MachineResults) -> list[dict]:
    """Per threads and strategy: the thread -> PU map drawn on the tree."""
    topo = machine.topology
    if topo is None:
        return []
    maps: dict[tuple[int, str], dict[str, list[int]]] = defaultdict(dict)
    objectives: dict[tuple[int, str], dict[str, float]] = defaultdict(dict)
    notes: dict[tuple[int, str], str] = {}
    for found, placement in machine.placements.items():
        key = (placement.threads, placement.strategy)
        pus = placement.example_pus
        if pus is None:
            continue
        if placement.per_repetition:
            if key in notes:
                continue  # random: one example is enough
            notes[key] = (f"a fresh placement per repetition (seed {placement.seed} for "
                          f"{found.benchmark}); repetition 0 shown")
        maps[key][found.benchmark] = pus
        if placement.J is not None:
            objectives[key][found.benchmark] = placement.J
    sections = []
    for (threads, strategy), per_bench in sorted(maps.items()):
        distinct: dict[tuple, list[str]] = defaultdict(list)
        for bench, pus in per_bench.items():
            distinct[tuple(pus)].append(bench)
        for pus, benches in distinct.items():
            label = "every benchmark" if len(distinct) == 1 else ", ".join(benches)
            threads_on = {pu: thread for thread, pu in enumerate(pus)}
            sections.append({"threads": threads, "strategy": strategy, "benchmarks": label,
                             "note": notes.get((threads, strategy), ""), "pus": list(pus),
                             "kinds": _on_kinds(topo, pus),
                             "objective": {b: objectives[(threads, strategy)][b] for b in benches
                                           if b in objectives[(threads, strategy)]},
                             "tree": placement_tree(topo.root, threads_on)})
    return sections


def heatmaps(machine: MachineResults, metadata: dict | None = None) -> list[dict]:
    """Affinity matrices a tracer wrote for this machine, as heatmaps."""
    found = []
    for bench, matrix in machine.matrices:
        meta = (metadata or {}) | {"Title": f"affinity matrix of {bench}, {len(matrix)} threads"}
        found.append({"machine": machine.name, "benchmark": bench, "threads": len(matrix),
                      "svg": figures.heatmap(matrix, meta),
                      "figure_name": figure_name(machine.name, bench, len(matrix), "affinity")})
    return found


def model_sections(rows: list[ModelRow], first_line: str | None,
                   described: dict[tuple, CellStats]) -> dict:
    """Per (machine, benchmark) with models: the selected median model of each strategy, a
    figure of measured medians and fitted curves, why each strategy without a reliable model
    has none, the models of the explained quantities (idle time, inflation, waits; each
    row's model or why there is none); and the note saying why there are no models at all
    (Extra-P missing or failing, or too few thread counts: then there is no models table).
    ``rows``: ``models.csv``'s, ``first_line``: the models' summary's (None: not written),
    ``described``: the runs' cells (:func:`pinbench.stats.cells.describe_cells`)."""
    medians: dict[tuple, dict[str, list[tuple[int, float]]]] = defaultdict(lambda: defaultdict(list))
    counts_of: dict[str, set[int]] = defaultdict(set)
    for (machine, bench, threads, strategy), cell in described.items():
        if cell.times:
            medians[(machine, bench)][strategy].append((threads, cell.median_s))
            counts_of[machine].add(threads)
    sections: dict[tuple, dict] = {}
    reasons: dict[tuple, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        key = (row.machine, row.benchmark)
        section = sections.setdefault(key, {"machine": key[0], "benchmark": key[1], "models": [],
                                            "unmodelled": [], "curves": {}, "pus": row.pus,
                                            "oversubscribed": row.oversubscribed,
                                            "explained": []})
        if row.quantity.removesuffix("_median") in EXPLAINED:
            section["explained"].append(row)  # idle time, inflation, waits: model or why not
            continue
        if row.quantity.endswith("_mean"):
            continue
        if not row.selected:
            reason = row.note or "not selected"
            reasons[key][row.strategy].append(f"{row.quantity}: {reason}" if row.quantity
                                              else reason)
            continue
        section["models"].append(row)
        try:
            section["curves"][row.strategy] = time_curve_text(row.model, row.quantity,
                                                              row.horizon)
        except ModelError:
            pass
    for key, by_strategy in reasons.items():
        chosen = {r.strategy for r in sections[key]["models"]}
        sections[key]["unmodelled"] = [f"{strategy}: {'; '.join(why)}"
                                       for strategy, why in by_strategy.items()
                                       if strategy not in chosen]
    order = [f"{name}_median" for name in EXPLAINED]
    for key, section in sections.items():
        section["explained"].sort(key=lambda r: (r.strategy, order.index(r.quantity)))
        counts = [int(t) for r in section["models"] for t in r.thread_counts.split()]
        if section["curves"]:
            section["figure"] = figures.scaling(
                dict(medians.get(key, {})), section["curves"], max(counts),
                section["pus"] or None)
        else:
            section["figure"] = None
    if first_line and first_line.startswith("no scalability models"):
        why = first_line
    elif not rows and first_line is None:
        why = unmodelled({machine: sorted(counts) for machine, counts in counts_of.items()})
    else:
        why = ""
    return {"note": why, "sections": list(sections.values())}
