"""``pinbench speeduptest BASELINE VARIANT [--json]``: is VARIANT faster than BASELINE? The
Speedup-Test of Touati, Worms and Briais on two samples of run times
(:mod:`pinbench.stats.speeduptest`)."""
from __future__ import annotations

import argparse
from pathlib import Path

from pinbench.commands.conventions import bad_input, json_option, print_json
from pinbench.stats.speeduptest import read_times, report, speedup_test


def arguments(parser: argparse.ArgumentParser, name: str) -> None:
    """The two samples' files, the confidence and the bootstrap's settings."""
    parser.description = ("Is VARIANT faster than BASELINE? The Speedup-Test of Touati, Worms "
                          "and Briais on two samples of run times.")
    parser.add_argument("baseline", type=Path, help="baseline run times (X)")
    parser.add_argument("variant", type=Path, help="variant run times (Y)")
    parser.add_argument("--confidence", type=float, default=0.95, help="default 0.95")
    parser.add_argument("--column", help="CSV column of the times (default: the first column "
                                         "holding only numbers), e.g. time_s")
    parser.add_argument("--resamples", type=int, default=2000,
                        help="bootstrap resamples, 0 for no intervals (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    json_option(parser)


def run(args: argparse.Namespace) -> int:
    """The test's account, or its result as one JSON object."""
    with bad_input():  # a SampleError, or a bad setting
        x = read_times(args.baseline, args.column)
        y = read_times(args.variant, args.column)
        result = speedup_test(x, y, args.confidence, args.resamples, args.seed)
    if args.json:
        print_json(result)
    else:
        print(report(result, str(args.baseline), str(args.variant)), end="")
    return 0
