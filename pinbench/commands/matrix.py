"""``pinbench matrix SOURCE TARGET --to LAYOUT [--from LAYOUT]``: an affinity matrix file
converted to another tool's layout (:mod:`pinbench.graph.matrix`)."""
from __future__ import annotations

import argparse

from pinbench.graph.matrix import FORMATS, read_matrix, write_matrix


def arguments(parser: argparse.ArgumentParser, name: str) -> None:
    """The two files and their layouts."""
    parser.add_argument("source", help="the matrix file to read")
    parser.add_argument("target", help="the file to write")
    parser.add_argument("--to", required=True, help=f"layout to write: {', '.join(FORMATS)}")
    parser.add_argument("--from", dest="source_layout", default="pinbench",
                        help=f"layout of the source file: {', '.join(FORMATS)} "
                             "(default: pinbench)")


def run(args: argparse.Namespace) -> int:
    """Read the source in its layout, write the target in the other."""
    write_matrix(read_matrix(args.source, args.source_layout), args.target, args.to)
    return 0
