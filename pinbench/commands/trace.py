"""``pinbench trace``: trace a program, or print the flags.

    pinbench trace --tracer {tsan,valgrind,pin} --threads N --out m.csv \\
        [--weight parallel-common|parallel-min|parallel-events|common|min|events]
        [--line-bytes 64] [--per-region] -- PROGRAM ARGS
    pinbench trace --print-flags      # CFLAGS=... and LDFLAGS=... (two lines)

Errors (bad usage, a failing program, a tracer ``pinbench setup`` has not built) are one line
and exit status 2 (:mod:`pinbench.cli`).
"""
from __future__ import annotations

import argparse
from pathlib import Path

from pinbench.commands.conventions import say
from pinbench.errors import UsageError
from pinbench.results.regions import read_regions, regions_path
from pinbench.trace.build import TRACERS, traced_build_flags
from pinbench.trace.run import DEFAULT_WEIGHT, LINE_BYTES, WEIGHT_DEFINITIONS, trace


def arguments(parser: argparse.ArgumentParser, name: str) -> None:
    """The tracer, the threads, the matrix file and the program; or ``--print-flags``."""
    parser.description = "Write the cache-line sharing matrix of a program's threads."
    parser.add_argument("--print-flags", action="store_true",
                        help="print CFLAGS=... and LDFLAGS=... of a tsan-traced build")
    parser.add_argument("--tracer", choices=TRACERS, default="tsan")
    parser.add_argument("--threads", type=int, help="OpenMP threads (OMP_NUM_THREADS)")
    parser.add_argument("--out", type=Path, help="matrix CSV; the sidecar is the same path .json")
    parser.add_argument("--weight", choices=WEIGHT_DEFINITIONS, default=DEFAULT_WEIGHT,
                        help="parallel-*: only the accesses inside parallel regions count "
                             f"(default {DEFAULT_WEIGHT})")
    parser.add_argument("--line-bytes", type=int, default=64)
    parser.add_argument("--per-region", action="store_true",
                        help="also one matrix per parallel region, in OUT's stem .regions.json "
                             "(tsan and valgrind tracers)")
    parser.add_argument("program", nargs=argparse.REMAINDER, help="-- PROGRAM ARGS")


def run(args: argparse.Namespace) -> int:
    """Trace a program (or print the flags of a traced build)."""
    program = args.program[1:] if args.program[:1] == ["--"] else args.program
    if args.print_flags:
        if program or args.out or args.threads is not None:
            raise UsageError("--print-flags takes no other arguments")
        cflags, ldflags = traced_build_flags()
        print(f"CFLAGS={cflags}")
        print(f"LDFLAGS={ldflags}")
        return 0
    if args.threads is None or args.out is None or not program:
        raise UsageError("give --threads N, --out FILE.csv and -- PROGRAM [ARGS]")
    if args.threads < 1:
        raise UsageError(f"--threads must be at least 1, not {args.threads}")
    if args.line_bytes not in LINE_BYTES:
        raise UsageError(f"--line-bytes must be a power of two from 8 to 4096, "
                         f"not {args.line_bytes}")
    regions = regions_path(args.out) if args.per_region else None
    side = trace(program, args.threads, args.out, args.tracer, args.weight, args.line_bytes,
                 regions=regions)
    say(args, f"trace: {args.out}: {side['threads']} threads, {side['weight']} weight, "
              f"{side['accesses']} accesses, {side['shared_lines']} of "
              f"{side['distinct_lines']} lines shared, {side['wall_s']:.2f} s under "
              f"{side['tracer']}")
    if regions is not None:
        say(args, f"trace: {regions}: {len(read_regions(regions).regions)} parallel regions")
    return 0
