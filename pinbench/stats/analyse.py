"""The analysis of a campaign's runs table, inside the workflow or on any runs table.

    pinbench analyse RUNS_CSV OUTDIR [--baseline os] [--confidence 0.95]
        [--topology MACHINE=FILE ...] [--strategies NAME ...] [--seed 0]
        [--time-share-expected BENCH=SHARE ...] [--report-decision fwer|fdr]

writes into OUTDIR the files the workflow writes into ``results/<campaign>/stats/``
(:data:`pinbench.results.layout.STATS_FILES`):

- ``cells.csv``: every (machine, benchmark, threads, strategy) against the baseline by the
  study's Speedup-Test (:mod:`pinbench.stats.tables`);
- ``summary.csv``, ``summary.txt``: the study's Tables 1-3;
- ``stats.json``: both, with the settings;
- ``verdicts.csv``: one row per (machine, benchmark, threads): the headline verdict with
  family-wise error control in the cell and the report-wide decision (family-wise error or
  false discovery rate, ``--report-decision``; :mod:`pinbench.stats.verdicts`), each with its
  outcome (faster, slower, none), the smallest speedup it could have detected
  (:mod:`pinbench.stats.detectable`), the drift check (:mod:`pinbench.stats.drift`) and
  the printed times' check (:mod:`pinbench.results.printed_share`: a cell whose printed
  times are none of its runs' gets no verdict);
- ``comparisons.csv``: one row per strategy: the experiment it ran, raw, Holm-adjusted (in
  the cell) and report-wide p-values of the verdict's test, its outcome in each.

When the runs are too few for a decision to reject anything, whatever the difference, the
tables' text (``summary.txt``, printed) says which decision and why (verdicts.csv's ``too_few``,
:func:`pinbench.stats.attainable.too_few`), as the report does.

``--topology MACHINE=FILE`` (hwloc XML, a synthetic string or ``auto``) lets placements that
are equal up to a symmetry of that machine's tree count as one experiment; without it only
equal PU lists do. ``--time-share-expected BENCH=SHARE`` is a benchmark's
``time_share_expected``. The command's parser: :mod:`pinbench.commands.analyse`.
"""
from __future__ import annotations

import csv
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pinbench.measure.settings import QUIET
from pinbench.place.symmetry import experiment_key
from pinbench.results import formats
from pinbench.results.layout import STATS_FILES
from pinbench.results.printed_share import printed_share
from pinbench.results.rows import columns, read_records
from pinbench.results.runs import RunRecord, on_metric, read_runs
from pinbench.topology import Topology

if TYPE_CHECKING:
    from pinbench.stats.verdicts import Experiment

# The statistics themselves (drift, tables, verdicts: SciPy) are imported by the functions that
# compute them: the workflow reads FORMAT and the verdicts files at every call.

#: The version of the analysis' files (:mod:`pinbench.results.formats`): the workflow passes
#: it to the analysis as a parameter, so results analysed by an older pinbench are analysed
#: again (Snakemake's params trigger); ``stats.json`` holds it too.
FORMAT = formats.CURRENT["stats"]


@dataclass(frozen=True)
class Verdict:
    """A row of ``verdicts.csv``: the headline verdict of one (machine, benchmark, threads)
    (:func:`pinbench.stats.verdicts.cell_verdict`, :func:`pinbench.stats.verdicts.report_wide`),
    its drift check (:mod:`pinbench.stats.drift`) and its printed times' check
    (:mod:`pinbench.results.printed_share`). Empty fields read as None."""

    machine: str
    benchmark: str
    threads: int
    baseline: str
    tests: int
    outcome: str  #: ``faster``, ``slower`` or ``none`` (no difference shown)
    slower: int  #: how many of its experiments the cell's verdict names slower
    best: str  #: the cell verdict's best experiment ("" when none is faster)
    stands_for: str
    speedup_median: float | None
    p_raw: float | None
    p_adjusted: float | None
    runner_up: str
    p_best_vs_others: float | None
    clear_winner: bool | None
    identical: str
    coincide: bool | None  #: every fixed placement of the cell the same
    detectable: float | None
    tests_report: int
    decision_report: str  #: the campaign's ``report_decision``: ``fwer`` or ``fdr``
    outcome_report: str
    best_report: str
    p_report: float | None
    detectable_report: float | None
    too_few: str  #: which decisions the cell's runs are too few for, and why ("" none)
    drift: bool | None
    drift_p: float | None
    drift_p_adjusted: float | None
    drift_tau: float | None
    run_order: str
    noisy_runs: int
    printed_time: str  #: what is to be said of the printed times ("" nothing)
    printed_implausible: bool | None
    design: str = "fixed"  #: ``fixed`` or ``sequential``; a table written before it: fixed

    @property
    def key(self) -> tuple[str, str, int]:
        """(machine, benchmark, threads): the cell."""
        return self.machine, self.benchmark, self.threads


@dataclass(frozen=True)
class Comparison:
    """A row of ``comparisons.csv``: one strategy of a cell against the baseline, the
    experiment it ran and the verdict's test on it. Empty fields read as None."""

    machine: str
    benchmark: str
    threads: int
    strategy: str
    experiment: str
    same_as_baseline: bool | None
    runs: int
    baseline_runs: int
    speedup_median: float | None
    noise: float | None
    p_raw: float | None
    p_adjusted: float | None
    effect: float | None  #: P[Y < X] + P[Y = X]/2: above 1/2, the strategy tends to be faster
    outcome: str  #: ``faster``, ``slower`` or ``none`` (no difference shown)
    faster: bool | None
    detectable: float | None
    p_report: float | None
    outcome_report: str
    faster_report: bool | None
    detectable_report: float | None
    #: the sequential design's: what decided it (a look's crossing, futility, a drop, the
    #: maximum: :meth:`pinbench.stats.sequential.Cell.decided_by`); "" under the fixed design
    decided_by: str = ""

    @property
    def key(self) -> tuple[str, str, int, str]:
        """(machine, benchmark, threads, strategy)."""
        return self.machine, self.benchmark, self.threads, self.strategy


#: The columns of ``verdicts.csv`` and ``comparisons.csv``: their records' fields.
VERDICT_COLUMNS = columns(Verdict)
COMPARISON_COLUMNS = columns(Comparison)


def verdict_tables(records: list[RunRecord], baseline: str, alpha: float,
                   topologies: dict[str, Topology] | None = None, order: Sequence[str] = (),
                   quiet_threshold: float = QUIET["threshold"],
                   time_shares: dict[str, float] | None = None, decision: str = "fwer",
                   sequential: dict | None = None) -> tuple[list[dict], list[dict]]:
    """The verdict rows and the comparison rows of every (machine, benchmark, threads),
    each cell's decision beside the report-wide one, drift flags adjusted over the jobs.

    ``noisy_runs``: the runs during which other processes used more than ``quiet_threshold``
    of the CPUs (the campaign's ``quiet.threshold``). ``printed_time``: what is to be said of
    the cell's printed times against its wall times, ``printed_implausible``: whether that
    leaves it without a verdict (:mod:`pinbench.results.printed_share`; ``time_shares``:
    benchmark -> its ``time_share_expected``; None: the times are not checked, the verdicts
    are on a counter). ``decision``: the report-wide decision (the campaign's
    ``report_decision``, :data:`pinbench.stats.decisions.DECISIONS`). ``sequential``: the
    campaign's sequential design (:func:`pinbench.workflow.jobsettings.sequential_design` and
    its ``maximum`` repetitions), whose verdicts replay its looks
    (:func:`pinbench.stats.sequential.analysis_test`; its per-comparison ``alpha``, when not
    given, alpha over the report's tests as its jobs counted them:
    :func:`pinbench.stats.verdicts.cell_tests`); None: the fixed design. Each verdict
    names its ``design``, each comparison what ``decided_by`` it under the sequential one.
    """
    from pinbench.stats.drift import across_jobs, drift
    from pinbench.stats.sequential import analysis_test, decided_by
    from pinbench.stats.verdicts import cell_verdict, experiments, report_wide

    trees = topologies or {}

    def key(machine: str, pus: tuple[int, ...]):
        return experiment_key(trees.get(machine), pus)

    jobs: dict[tuple, list[RunRecord]] = defaultdict(list)
    for record in records:
        jobs[(record.machine, record.benchmark, record.threads)].append(record)
    groups = {cell: experiments(runs, key, order) for cell, runs in jobs.items()}
    if sequential and "alpha" not in sequential:
        sequential = sequential | {"alpha": alpha / max(report_tests(groups.values(),
                                                                     baseline), 1)}
    verdicts, comparisons = [], []
    for (machine, bench, threads), runs in sorted(jobs.items()):
        names = {"machine": machine, "benchmark": bench, "threads": threads}
        printed = None if time_shares is None else printed_share(runs, time_shares.get(bench))
        implausible = printed is not None and printed.implausible
        row = cell_verdict(runs, baseline, alpha, key, order, test=not implausible,
                           compare=sequential and analysis_test(sequential)) | drift(runs)
        row["design"] = "sequential" if sequential else "fixed"
        cell = groups[(machine, bench, threads)]
        base = next((g for g in cell if baseline in g.strategies), None)
        how = decided_by(sequential, base, [g for g in cell if g is not base]) \
            if sequential and sequential.get("looks", 0) != 1 and base is not None else {}
        for comparison in row["comparisons"]:
            comparison["decided_by"] = how.get(comparison["experiment"], "")
        row["printed_time"] = printed.text() if printed else ""
        row["printed_implausible"] = implausible
        row["noisy_runs"] = sum((r.other_cpu or 0) > quiet_threshold for r in runs)
        comparisons += [names | comparison for comparison in row.pop("comparisons")]
        verdicts.append(names | row)
    report_wide(verdicts, comparisons, alpha, decision)
    across_jobs(verdicts, alpha)
    return verdicts, comparisons


def report_tests(cells: Iterable[list[Experiment]], baseline: str) -> int:
    """The report's tests as its sequential jobs counted them
    (:func:`pinbench.stats.verdicts.cell_tests`), from each cell's experiments
    (:func:`pinbench.stats.verdicts.experiments`)."""
    from pinbench.stats.verdicts import cell_tests

    return sum(cell_tests({s: g.name for g in cell for s in g.strategies}, baseline)
               for cell in cells)


def _write_csv(rows: list[dict], columns: list[str], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, columns)
        writer.writeheader()
        writer.writerows(rows)


def analyse(runs_csv: Path, outputs: dict[str, Path], *, campaign: str, baseline: str,
            confidence: float, benchmark_weights: dict[str, float] | None = None,
            seed: int = 0, topologies: dict[str, Topology] | None = None,
            order: Sequence[str] = (), quiet_threshold: float = QUIET["threshold"],
            metric: str = "time", time_shares: dict[str, float] | None = None,
            report_decision: str = "fwer", sequential: dict | None = None) -> str:
    """Write every file of :data:`STATS_FILES` (``outputs``: kind -> path); return Tables 1-3.

    ``order``: the campaign's strategies (the first of identical ones names the experiment);
    ``metric``: what every test and table is on, the run time or a counter
    (:func:`pinbench.results.runs.on_metric`; lower is better); ``time_shares``: benchmark
    -> its ``time_share_expected``, where a benchmark sets one; ``report_decision``: the
    campaign's (:data:`pinbench.stats.decisions.DECISIONS`); ``sequential``: the sequential
    design (:func:`verdict_tables`).
    """
    from pinbench.stats.tables import (CELL_COLUMNS, SUMMARY_COLUMNS, cell_table, summary_table,
                                       tables_text)

    records = on_metric(read_runs([runs_csv]), metric)
    cells = cell_table(records, baseline, confidence, seed)
    summary = summary_table(cells, baseline, confidence, benchmark_weights)
    verdicts, comparisons = verdict_tables(records, baseline, 1 - confidence, topologies, order,
                                           quiet_threshold,
                                           (time_shares or {}) if metric == "time" else None,
                                           report_decision, sequential)
    _write_csv(cells, CELL_COLUMNS, outputs["cells"])
    _write_csv(summary, SUMMARY_COLUMNS, outputs["summary"])
    _write_csv(verdicts, VERDICT_COLUMNS, outputs["verdicts"])
    _write_csv(comparisons, COMPARISON_COLUMNS, outputs["comparisons"])
    text = tables_text(summary, baseline, confidence)
    for note in reversed(list(dict.fromkeys(v["too_few"] for v in verdicts if v["too_few"]))):
        text = (f"too few runs for the verdicts (the tables below test each strategy alone at "
                f"{1 - confidence:.2g}): {note}\n\n" + text)
    if sequential:
        from pinbench.stats.sequential import POWER, decisions_text

        tested = {(c["machine"], c["benchmark"], c["threads"], c["experiment"]): c["decided_by"]
                  for c in comparisons if c["decided_by"]}
        text = decisions_text(list(tested.values()), sequential.get("power", POWER)) + \
            "\n\n" + text
    if metric != "time":
        text = (f"metric: {metric} per run (lower is better), not the run time: every test, "
                "speedup and table below is on it\n\n" + text)
    outputs["tables"].write_text(text)
    meta = {"campaign": campaign, "baseline": baseline, "confidence": confidence,
            "report_decision": report_decision,
            "weights": benchmark_weights or "equal", "bootstrap_seed": seed,
            "runs": str(runs_csv), "metric": metric}
    outputs["json"].write_text(json.dumps(
        formats.stamp("stats", {"meta": meta, "cells": cells, "summary": summary}),
        indent=1) + "\n")
    return text


def read_verdicts(path: Path) -> list[Verdict]:
    """The rows of a ``verdicts.csv`` (ValueError: one of another version of pinbench)."""
    return read_records(Verdict, path)


def read_comparisons(path: Path) -> list[Comparison]:
    """The rows of a ``comparisons.csv`` (ValueError: one of another version of pinbench)."""
    return read_records(Comparison, path)
