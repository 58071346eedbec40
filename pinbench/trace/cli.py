"""``pinbench trace`` : trace a program, or print the flags.

    pinbench trace --tracer {tsan,valgrind,pin} --threads N --out m.csv \\
        [--weight parallel-common|parallel-min|parallel-events|common|min|events]
        [--line-bytes 64] [--per-region] -- PROGRAM ARGS
    pinbench trace --print-flags      # CFLAGS=... and LDFLAGS=... (two lines)

Errors (bad usage, a failing program) print one line and exit with status 2; so does a
tracer that ``pinbench setup`` has not built (:class:`pinbench.native.NotBuilt`, said by
:mod:`pinbench.cli`).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pinbench.results.regions import read_regions, regions_path
from pinbench.trace.build import TRACERS, TraceError, traced_build_flags
from pinbench.trace.run import DEFAULT_WEIGHT, LINE_BYTES, WEIGHT_DEFINITIONS, trace


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit status 2 (main)
        raise _UsageError(message)


def main(argv: list[str] | None = None) -> int:
    """Trace a program (or print the flags of a traced build)."""
    parser = _Parser(prog="pinbench trace",
                     description="Write the cache-line sharing matrix of a program's threads.")
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
    try:
        args = parser.parse_args(argv)
        program = args.program[1:] if args.program[:1] == ["--"] else args.program
        if args.print_flags:
            if program or args.out or args.threads is not None:
                raise _UsageError("--print-flags takes no other arguments")
            cflags, ldflags = traced_build_flags()
            print(f"CFLAGS={cflags}")
            print(f"LDFLAGS={ldflags}")
            return 0
        if args.threads is None or args.out is None or not program:
            raise _UsageError("give --threads N, --out FILE.csv and -- PROGRAM [ARGS]")
        if args.threads < 1:
            raise _UsageError(f"--threads must be at least 1, not {args.threads}")
        if args.line_bytes not in LINE_BYTES:
            raise _UsageError(f"--line-bytes must be a power of two from 8 to 4096, "
                              f"not {args.line_bytes}")
        regions = regions_path(args.out) if args.per_region else None
        side = trace(program, args.threads, args.out, args.tracer, args.weight, args.line_bytes,
                     regions=regions)
    except _UsageError as exc:
        print(f"pinbench trace: error: {exc} (see --help)", file=sys.stderr)
        return 2
    except TraceError as exc:
        print(f"pinbench trace: error: {exc}", file=sys.stderr)
        return 2
    print(f"trace: {args.out}: {side['threads']} threads, {side['weight']} weight, "
          f"{side['accesses']} accesses, {side['shared_lines']} of {side['distinct_lines']} "
          f"lines shared, {side['wall_s']:.2f} s under {side['tracer']}", file=sys.stderr)
    if args.per_region:
        print(f"trace: {regions}: {len(read_regions(regions).regions)} parallel regions",
              file=sys.stderr)
    return 0

