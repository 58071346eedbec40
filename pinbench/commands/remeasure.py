"""``pinbench remeasure RESULTS --machine M --benchmark B --threads N [--strategy S]
[--why TEXT]``: a measurement job set aside, so that the next ``pinbench run`` measures it
again (:mod:`pinbench.measure.remeasure`)."""
from __future__ import annotations

import argparse

from pinbench.commands.conventions import bad_input
from pinbench.measure.remeasure import WHY, remeasure


def arguments(parser: argparse.ArgumentParser, name: str) -> None:
    """The campaign's results, the job, and the note."""
    parser.add_argument("results", help="the campaign's results folder, results/<campaign>")
    parser.add_argument("--machine", required=True)
    parser.add_argument("--benchmark", required=True)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--strategy", help="the strategy to measure again: its whole job is "
                        "measured again, so that its runs are compared within one session")
    parser.add_argument("--why", default=WHY, help="the note kept with the journal set aside")


def run(args: argparse.Namespace) -> int:
    """Set the job aside; print what was done, one line each."""
    with bad_input():
        lines = remeasure(args.results.rstrip("/"), args.machine, args.benchmark, args.threads,
                          args.strategy, args.why)
    if args.strategy:
        print(f"re-measuring {args.strategy} measures its whole job again "
              f"({args.machine}/{args.benchmark}/t{args.threads}): runs of one job are "
              "compared within one session")
    for line in lines:
        print(line)
    return 0
