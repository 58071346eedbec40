"""``pinbench compare A B [--json]``: the cells two campaigns both measured, B against A, a
regression gate (:mod:`pinbench.report.compare`, :mod:`pinbench.stats.regression`)."""
from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path

from pinbench.commands.conventions import bad_input, json_option, print_json
from pinbench.errors import InputError, UsageError
from pinbench.report.compare import (cell_line, machine_differences, resolve, side,
                                     write_outputs)
from pinbench.results.layout import COMPARISONS
from pinbench.results.store import DEFAULT_STORE


def arguments(parser: argparse.ArgumentParser, name: str) -> None:
    """The two campaigns, the gate's threshold and confidence, where the outputs go."""
    parser.description = "Compare the cells of two campaigns: B against A, a regression gate."
    parser.epilog = "exit status: 0 no cell slower, 1 some cell slower (report-wide), 2 an error"
    parser.add_argument("a", help="the reference: results folder, campaign file or stored id")
    parser.add_argument("b", help="the campaign compared with it (same forms)")
    parser.add_argument("--threshold", type=float, default=0.0, metavar="PERCENT",
                        help="only a difference beyond this many percent counts (default 0)")
    parser.add_argument("--confidence", type=float, default=0.95,
                        help="1 - the report-wide error rate (default 0.95)")
    parser.add_argument("--out", type=Path, help="the folder of the page and the table "
                        "(default results/compare/A-vs-B)")
    parser.add_argument("--store", type=Path, default=DEFAULT_STORE,
                        help=f"the results store, for ids (default {DEFAULT_STORE})")
    parser.add_argument("--allow-other-machines", action="store_true",
                        help="compare machines whose topologies differ (a warning)")
    json_option(parser)


def run(args: argparse.Namespace) -> int:
    """Compare; print one line per cell and the gate's line (``--json``: one document); write
    the page and the table; 1 when some cell is slower."""
    if not 0 < args.confidence < 1:
        raise UsageError(f"--confidence must be strictly between 0 and 1, not {args.confidence}")
    if args.threshold < 0:
        raise UsageError(f"--threshold must be at least 0, not {args.threshold}")
    with bad_input():
        (a, label_a), (b, label_b) = resolve(args.a, args.store), resolve(args.b, args.store)
        runs_a, runs_b = a.records(), b.records()
    from pinbench.stats.cells import describe_cells
    from pinbench.stats.regression import compare, gate

    times_a = {key: cell.times for key, cell in describe_cells(runs_a).items()}
    times_b = {key: cell.times for key, cell in describe_cells(runs_b).items()}
    machines = sorted({key[0] for key in times_a if key in times_b})
    if not machines:
        raise InputError(f"{a.source} and {b.source} have no cell (machine, benchmark, "
                         "threads, strategy) in common: nothing to compare")
    topologies, others = machine_differences(a, b, machines)
    if topologies and not args.allow_other_machines:
        raise InputError(f"{topologies[0]}: not the same machine (--allow-other-machines "
                         "compares anyway)")
    warnings = topologies + others
    for line in warnings:
        print(f"pinbench compare: WARNING: {line}", file=sys.stderr)
    alpha = 1 - args.confidence
    rows, only_a, only_b = compare(times_a, times_b, args.threshold / 100, alpha)
    failed = gate(rows)
    tests = [row for row in rows if not row["same_as"]]
    slower = sum(row["verdict"] == "slower" for row in tests)
    faster = sum(row["verdict"] == "faster" for row in tests)
    summary = (f"{len(rows)} cells compared ({len(tests)} tests): {slower} slower, "
               f"{faster} faster "
               f"(report-wide, error rate {alpha:g}, threshold {args.threshold:g}%)")
    out = args.out or Path(COMPARISONS) / f"{label_a}-vs-{label_b}"
    generated = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    meta = {"a": a.source, "b": b.source, "threshold_percent": f"{args.threshold:g}",
            "confidence": f"{args.confidence:g}", "generated": generated, "tool": "pinbench"}
    context = {"a": side(a, label_a), "b": side(b, label_b), "rows": rows, "meta": meta,
               "only_a": only_a, "only_b": only_b, "warnings": warnings, "failed": failed,
               "summary": summary, "threshold": args.threshold, "alpha": alpha,
               "generated": generated}
    if not args.json:
        for row in rows:
            print(cell_line(row))
        for which, keys in (("A", only_a), ("B", only_b)):
            for machine, bench, threads, strategy in keys:
                print(f"{machine}/{bench}/t{threads} {strategy}: only in {which}")
        print(f"gate: {'FAIL' if failed else 'pass'}: {summary}")
    with bad_input():
        write_outputs(out, context)
    if args.json:
        print_json({"a": context["a"], "b": context["b"], "gate": "FAIL" if failed else "pass",
                    "summary": summary, "cells": rows,
                    "only_a": [dict(zip(("machine", "benchmark", "threads", "strategy"), key))
                               for key in only_a],
                    "only_b": [dict(zip(("machine", "benchmark", "threads", "strategy"), key))
                               for key in only_b],
                    "warnings": warnings, "report": str(out / "index.html")})
    else:
        print(f"report: {out / 'index.html'}")
    return 1 if failed else 0
