"""``pinbench topology SPEC [--out FILE] [--json]``: a machine's tree, described in one line
(or as JSON) or saved."""
from __future__ import annotations

import argparse
from pathlib import Path

from pinbench.commands.conventions import json_option, print_json
from pinbench.topology import load, save


def arguments(parser: argparse.ArgumentParser, name: str) -> None:
    """The tree's spec and where to save its XML."""
    parser.add_argument("spec", help='"auto", an hwloc XML file, or a synthetic description')
    parser.add_argument("--out", type=Path, help="write the hwloc XML here")
    json_option(parser)


def run(args: argparse.Namespace) -> int:
    """Print the tree's one-line summary (:meth:`Topology.summary`; ``--json``: with its
    levels, PUs and placeable PUs); save it with ``--out``."""
    topo = load(args.spec)
    if args.out:
        save(topo, args.out)
    if args.json:
        print_json({"summary": topo.summary(), "levels": topo.level_names, "pus": topo.pus,
                    "placeable": topo.placeable})
    else:
        print(topo.summary())
    return 0
