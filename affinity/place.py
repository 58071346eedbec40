"""``python -m affinity.place``: one strategy's placement for an affinity matrix, or all compared.

    python -m affinity.place --topology (auto | FILE.xml | "synthetic string") \\
        --matrix m.csv --strategy NAME [--sockets K] [--seed S] [--json]

N, the number of threads, is the matrix's size. For one strategy it prints
the thread -> PU list (OS indexes), the objective J (:mod:`affinity.objective`)
and the ``OMP_PLACES`` string; with ``--json``, one object with ``pus``
(entry i is thread i's PU), ``J``, ``omp_places`` and ``shared_level`` (N x N:
the lowest tree level threads i and j share). ``--strategy all`` compares the
J of every strategy that binds threads (``random``: one draw from the seed),
as a table or, with ``--json``, one such object per strategy. ``--sockets K``
runs ``lpgp`` and ``gplp`` on K sockets (the same as ``lpgp-K``). Errors
(unknown strategy, unusable matrix or topology, more threads than placeable
PUs) print one line on stderr and exit with status 2.
"""
from __future__ import annotations

import argparse
import json
import sys

from affinity import strategies
from affinity.matrix import MatrixError, read_matrix
from affinity.placement import make_placement, omp_places, shared_levels
from affinity.topology import Topology, TopologyError, load


def strategy_names(strategy: str, sockets: int | None) -> list[str]:
    """The strategies a command asks for: ``all`` (every one that binds threads) or one name.

    ``sockets`` turns ``lpgp``/``gplp`` into ``lpgp-K``/``gplp-K``; PlacementError
    for an unknown name or sockets given to another strategy.
    """
    if strategy == "all":
        names = [name for name in strategies.KNOWN + strategies.GRAPH if name != "os"]
    else:
        strategies.parse_strategy(strategy)
        names = [strategy]
    if sockets is None:
        return names
    if strategy != "all" and strategy not in strategies.SOCKET_VARIANTS:
        raise strategies.PlacementError(
            f"--sockets applies to {' and '.join(strategies.SOCKET_VARIANTS)}, not {strategy!r}")
    return [f"{name}-{sockets}" if name in strategies.SOCKET_VARIANTS else name for name in names]


def summary(topo: Topology, record: dict) -> dict:
    """What the command reports of one placement record (``random``: its first repetition)."""
    pus = record["pus"] or record["pus_by_repetition"][0]
    return {"strategy": record["strategy"], "pus": pus, "J": record["J"],
            "omp_places": omp_places(pus),
            "shared_level": record.get("shared_level") or shared_levels(topo, pus)}


def main(argv: list[str] | None = None) -> int:
    """Place the threads of an affinity matrix on a machine and report the objective J."""
    parser = argparse.ArgumentParser(prog="python -m affinity.place", description=main.__doc__)
    parser.add_argument("--topology", required=True,
                        help='"auto", an hwloc XML file, or an hwloc synthetic description')
    parser.add_argument("--matrix", required=True, help="affinity matrix, N x N CSV")
    parser.add_argument("--strategy", required=True, help='a strategy name, or "all"')
    parser.add_argument("--sockets", type=int, help="sockets used by lpgp and gplp")
    parser.add_argument("--seed", type=int, default=0, help="seed of METIS and of random")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    try:
        if args.sockets is not None and args.sockets < 1:
            raise strategies.PlacementError("--sockets must be at least 1")
        names = strategy_names(args.strategy, args.sockets)
        matrix = read_matrix(args.matrix)
        topo = load(args.topology)
        records = [make_placement(topo, name, len(matrix), args.seed, matrix=matrix)
                   for name in names]
    except (TopologyError, MatrixError, strategies.PlacementError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        found = [summary(topo, record) for record in records]
        print(json.dumps(found[0] if args.strategy != "all" else {f["strategy"]: f for f in found}))
    elif args.strategy != "all":
        found = summary(topo, records[0])
        print(f"{found['strategy']}: {len(matrix)} threads on {topo.summary()}")
        print("thread -> PU: " + " ".join(f"{t}->{pu}" for t, pu in enumerate(found["pus"])))
        print(f"J: {found['J']:.6g}")
        print(f"OMP_PLACES={found['omp_places']}")
    else:
        best = min(record["J"] for record in records)
        print(f"{len(matrix)} threads on {topo.summary()}")
        print(f"{'strategy':>12} {'J':>14} {'J/best':>8}")
        for record in records:
            ratio = record["J"] / best if best else 1.0
            print(f"{record['strategy']:>12} {record['J']:>14.6g} {ratio:>8.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
