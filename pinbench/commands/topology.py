"""``pinbench topology SPEC [--out FILE]``: a machine's tree, described in one line or saved."""
from __future__ import annotations

import argparse
from pathlib import Path

from pinbench.topology import load, save


def arguments(parser: argparse.ArgumentParser, name: str) -> None:
    """The tree's spec and where to save its XML."""
    parser.add_argument("spec", help='"auto", an hwloc XML file, or a synthetic description')
    parser.add_argument("--out", type=Path, help="write the hwloc XML here")


def run(args: argparse.Namespace) -> int:
    """Print the tree's one-line summary (:meth:`Topology.summary`); save it with ``--out``."""
    topo = load(args.spec)
    if args.out:
        save(topo, args.out)
    print(topo.summary())
    return 0
