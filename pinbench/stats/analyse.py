"""The analysis of a campaign's runs table, inside the workflow or on any runs table.

    pinbench analyse RUNS_CSV OUTDIR [--baseline os] [--confidence 0.95]
        [--topology MACHINE=FILE ...] [--strategies NAME ...] [--seed 0]
        [--time-share-expected BENCH=SHARE ...]

writes into OUTDIR the files the workflow writes into ``results/<campaign>/stats/``
(:data:`pinbench.results.layout.STATS_FILES`):

- ``cells.csv``: every (machine, benchmark, threads, strategy) against the baseline by the
  study's Speedup-Test (:mod:`pinbench.stats.tables`);
- ``summary.csv``, ``summary.txt``: the study's Tables 1-3;
- ``stats.json``: both, with the settings;
- ``verdicts.csv``: one row per (machine, benchmark, threads): the headline verdict with
  family-wise error control in the cell and over the whole report
  (:mod:`pinbench.stats.verdicts`), the smallest speedup it could have detected
  (:mod:`pinbench.stats.detectable`), the drift check (:mod:`pinbench.stats.drift`) and
  the printed times' check (:mod:`pinbench.results.printed_share`: a cell whose printed
  times are none of its runs' gets no verdict);
- ``comparisons.csv``: one row per strategy: the experiment it ran, raw, Holm-adjusted (in
  the cell) and report-wide p-values of the verdict's test.

``--topology MACHINE=FILE`` (hwloc XML, a synthetic string or ``auto``) lets placements that
are equal up to a symmetry of that machine's tree count as one experiment; without it only
equal PU lists do. ``--time-share-expected BENCH=SHARE`` is a benchmark's
``time_share_expected``. Errors print one line and exit with status 2.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pinbench.measure.settings import QUIET
from pinbench.place.symmetry import experiment_key
from pinbench.results import formats
from pinbench.results.layout import STATS_FILES
from pinbench.results.printed_share import SHARE_EXPECTED, printed_share
from pinbench.results.rows import read_records, required
from pinbench.results.runs import RunRecord, on_metric, read_runs
from pinbench.topology import Topology, TopologyError, load

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
    best_report: str
    p_report: float | None
    detectable_report: float | None
    drift: bool | None
    drift_p: float | None
    drift_p_adjusted: float | None
    drift_tau: float | None
    run_order: str
    noisy_runs: int
    printed_time: str  #: what is to be said of the printed times ("" nothing)
    printed_implausible: bool | None
    #: faster, slower or none (no difference shown); "" in a table written before it
    outcome: str = ""

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
    faster: bool | None
    detectable: float | None
    p_report: float | None
    faster_report: bool | None
    detectable_report: float | None
    #: faster, slower or none (no difference shown); "" in a table written before it
    outcome: str = ""

    @property
    def key(self) -> tuple[str, str, int, str]:
        """(machine, benchmark, threads, strategy)."""
        return self.machine, self.benchmark, self.threads, self.strategy


#: The columns of ``verdicts.csv`` and ``comparisons.csv``: their records' fields (but those
#: with a default, read when present).
VERDICT_COLUMNS = required(Verdict)
COMPARISON_COLUMNS = required(Comparison)


def verdict_tables(records: list[RunRecord], baseline: str, alpha: float,
                   topologies: dict[str, Topology] | None = None, order: Sequence[str] = (),
                   quiet_threshold: float = QUIET["threshold"],
                   time_shares: dict[str, float] | None = None) -> tuple[list[dict], list[dict]]:
    """The verdict rows and the comparison rows of every (machine, benchmark, threads),
    each cell's decision beside the report-wide one, drift flags adjusted over the jobs.

    ``noisy_runs``: the runs during which other processes used more than ``quiet_threshold``
    of the CPUs (the campaign's ``quiet.threshold``). ``printed_time``: what is to be said of
    the cell's printed times against its wall times, ``printed_implausible``: whether that
    leaves it without a verdict (:mod:`pinbench.results.printed_share`; ``time_shares``:
    benchmark -> its ``time_share_expected``; None: the times are not checked, the verdicts
    are on a counter).
    """
    from pinbench.stats.drift import across_jobs, drift
    from pinbench.stats.verdicts import cell_verdict, report_wide

    trees = topologies or {}

    def key(machine: str, pus: tuple[int, ...]):
        return experiment_key(trees.get(machine), pus)

    jobs: dict[tuple, list[RunRecord]] = defaultdict(list)
    for record in records:
        jobs[(record.machine, record.benchmark, record.threads)].append(record)
    verdicts, comparisons = [], []
    for (machine, bench, threads), runs in sorted(jobs.items()):
        names = {"machine": machine, "benchmark": bench, "threads": threads}
        printed = None if time_shares is None else printed_share(runs, time_shares.get(bench))
        implausible = printed is not None and printed.implausible
        row = cell_verdict(runs, baseline, alpha, key, order, test=not implausible) | drift(runs)
        row["printed_time"] = printed.text() if printed else ""
        row["printed_implausible"] = implausible
        row["noisy_runs"] = sum((r.other_cpu or 0) > quiet_threshold for r in runs)
        comparisons += [names | comparison for comparison in row.pop("comparisons")]
        verdicts.append(names | row)
    report_wide(verdicts, comparisons, alpha)
    across_jobs(verdicts, alpha)
    return verdicts, comparisons


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
            metric: str = "time", time_shares: dict[str, float] | None = None) -> str:
    """Write every file of :data:`STATS_FILES` (``outputs``: kind -> path); return Tables 1-3.

    ``order``: the campaign's strategies (the first of identical ones names the experiment);
    ``metric``: what every test and table is on, the run time or a counter
    (:func:`pinbench.results.runs.on_metric`; lower is better); ``time_shares``: benchmark
    -> its ``time_share_expected``, where a benchmark sets one.
    """
    from pinbench.stats.tables import (CELL_COLUMNS, SUMMARY_COLUMNS, cell_table, summary_table,
                                       tables_text)

    records = on_metric(read_runs([runs_csv]), metric)
    cells = cell_table(records, baseline, confidence, seed)
    summary = summary_table(cells, baseline, confidence, benchmark_weights)
    verdicts, comparisons = verdict_tables(records, baseline, 1 - confidence, topologies, order,
                                           quiet_threshold,
                                           (time_shares or {}) if metric == "time" else None)
    _write_csv(cells, CELL_COLUMNS, outputs["cells"])
    _write_csv(summary, SUMMARY_COLUMNS, outputs["summary"])
    _write_csv(verdicts, VERDICT_COLUMNS, outputs["verdicts"])
    _write_csv(comparisons, COMPARISON_COLUMNS, outputs["comparisons"])
    text = tables_text(summary, baseline, confidence)
    if metric != "time":
        text = (f"metric: {metric} per run (lower is better), not the run time: every test, "
                "speedup and table below is on it\n\n" + text)
    outputs["tables"].write_text(text)
    meta = {"campaign": campaign, "baseline": baseline, "confidence": confidence,
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


def _topology_option(text: str) -> tuple[str, Topology]:
    machine, sep, spec = text.partition("=")
    if not sep or not machine:
        raise argparse.ArgumentTypeError(f"expected MACHINE=FILE, got {text!r}")
    try:
        return machine, load(spec)
    except TopologyError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _share_option(text: str) -> tuple[str, float]:
    bench, sep, share = text.partition("=")
    try:
        value = float(share)
    except ValueError:
        value = math.nan
    if not sep or not bench or not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"expected BENCH=SHARE, a share in (0, 1], got {text!r}")
    return bench, value


def main(argv: list[str] | None = None) -> int:
    """Analyse a runs table: the study's tables, the headline verdicts, the drift checks."""
    parser = argparse.ArgumentParser(prog="pinbench analyse", description=main.__doc__)
    parser.add_argument("runs", type=Path, help="a runs table (runs.csv)")
    parser.add_argument("outdir", type=Path, help="the folder to write the analysis into")
    parser.add_argument("--baseline", default="os")
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--topology", type=_topology_option, action="append", default=[],
                        metavar="MACHINE=FILE", help="a machine's tree, for its symmetries")
    parser.add_argument("--strategies", nargs="+", default=(),
                        help="the campaign's order of strategies")
    parser.add_argument("--seed", type=int, default=0, help="the bootstrap's seed")
    parser.add_argument("--quiet-threshold", type=float, default=QUIET["threshold"],
                        help="share of the CPUs others may use during a run before it is noisy")
    parser.add_argument("--time-share-expected", type=_share_option, action="append",
                        default=[], metavar="BENCH=SHARE",
                        help="the least share of a run's wall time a benchmark's printed time "
                             f"is expected to be (default {SHARE_EXPECTED:g})")
    args = parser.parse_args(argv)
    if not 0 < args.confidence < 1:
        parser.error(f"--confidence must be strictly between 0 and 1, not {args.confidence}")
    try:
        if not any(r.strategy == args.baseline for r in read_runs([args.runs])):
            raise ValueError(f"no run of the baseline {args.baseline!r} in {args.runs}")
        text = analyse(args.runs, {kind: args.outdir / name for kind, name in STATS_FILES.items()},
                       campaign=args.runs.stem, baseline=args.baseline,
                       confidence=args.confidence, seed=args.seed,
                       topologies=dict(args.topology), order=args.strategies,
                       quiet_threshold=args.quiet_threshold,
                       time_shares=dict(args.time_share_expected))
    except (OSError, ValueError) as exc:
        print(f"pinbench analyse: error: {exc}", file=sys.stderr)
        return 2
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
