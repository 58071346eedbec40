"""``pinbench analyse RUNS_CSV OUTDIR [--json]``: the campaign's analysis on any runs table
(:mod:`pinbench.stats.analyse`), its files written into OUTDIR."""
from __future__ import annotations

import argparse
import json
import math
from dataclasses import asdict
from pathlib import Path

from pinbench.commands.conventions import bad_input, json_option, print_json
from pinbench.errors import InputError, UsageError
from pinbench.measure.settings import QUIET
from pinbench.results.layout import STATS_FILES
from pinbench.results.printed_share import SHARE_EXPECTED
from pinbench.results.runs import read_runs
from pinbench.stats.analyse import analyse, read_comparisons, read_verdicts
from pinbench.stats.decisions import DECISIONS
from pinbench.topology import Topology, load


def _topology_option(text: str) -> tuple[str, Topology]:
    machine, sep, spec = text.partition("=")
    if not sep or not machine:
        raise argparse.ArgumentTypeError(f"expected MACHINE=FILE, got {text!r}")
    return machine, load(spec)


def _share_option(text: str) -> tuple[str, float]:
    bench, sep, share = text.partition("=")
    try:
        value = float(share)
    except ValueError:
        value = math.nan
    if not sep or not bench or not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"expected BENCH=SHARE, a share in (0, 1], got {text!r}")
    return bench, value


def arguments(parser: argparse.ArgumentParser, name: str) -> None:
    """The runs table, the output folder and the analysis' settings."""
    parser.description = ("Analyse a runs table: the study's tables, the headline verdicts, "
                          "the drift checks.")
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
    parser.add_argument("--report-decision", choices=tuple(DECISIONS), default="fwer",
                        help="the decision over the whole report: family-wise error (Holm) "
                             "or false discovery rate (Benjamini-Hochberg)")
    json_option(parser)


def run(args: argparse.Namespace) -> int:
    """Write the analysis' files; print Tables 1-3, or (``--json``) ``stats.json`` with the
    verdicts and comparisons and the files written."""
    if not 0 < args.confidence < 1:
        raise UsageError(f"--confidence must be strictly between 0 and 1, not {args.confidence}")
    outputs = {kind: args.outdir / name for kind, name in STATS_FILES.items()}
    with bad_input():
        if not any(r.strategy == args.baseline for r in read_runs([args.runs])):
            raise InputError(f"no run of the baseline {args.baseline!r} in {args.runs}")
        text = analyse(args.runs, outputs, campaign=args.runs.stem, baseline=args.baseline,
                       confidence=args.confidence, seed=args.seed,
                       topologies=dict(args.topology), order=args.strategies,
                       quiet_threshold=args.quiet_threshold,
                       time_shares=dict(args.time_share_expected),
                       report_decision=args.report_decision)
    if not args.json:
        print(text, end="")
        return 0
    print_json({"stats": json.loads(outputs["json"].read_text()),
                "verdicts": [asdict(v) for v in read_verdicts(outputs["verdicts"])],
                "comparisons": [asdict(c) for c in read_comparisons(outputs["comparisons"])],
                "files": {kind: str(path) for kind, path in outputs.items()}})
    return 0
