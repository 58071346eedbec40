"""``pinbench place`` : placements of threads on a machine.

    pinbench place --topology (auto | FILE.xml | "synthetic string") \\
        [--matrix m.csv] [--threads N] --strategy NAME [NAME ...] \\
        [--sockets K] [--seed S] [--repetitions R] [--regions t<N>.regions.json]
        [--json | --outdir DIR]

N, the number of threads, is the matrix's size (or ``--threads`` when no
strategy needs a matrix). For one strategy it prints the thread -> PU list
(OS indexes), the objective J (:mod:`pinbench.graph.objective`) and the
``OMP_PLACES`` string; with ``--json``, one object with ``pus`` (entry i is
thread i's PU), ``J``, ``omp_places`` and ``shared_level`` (N x N: the lowest
tree level threads i and j share) and ``core_pairs`` (thread pairs on one
core's hardware threads). Several names, or ``all`` (every strategy that
binds threads; ``random``: one draw from the seed), compare their J as a
table, ranked by core pairs first, then J (:func:`pinbench.place.record.ranked`),
or, with ``--json``, one such object per strategy. ``--outdir DIR``
writes each strategy's placement file (:mod:`pinbench.results.placements`)
to ``DIR/<strategy>.json`` instead, ``random`` with ``--repetitions`` draws,
and prints one line per strategy. ``--sockets K`` runs ``lpgp`` and ``gplp``
on K sockets (the same as ``lpgp-K``). ``--regions`` gives the per-region trace that
``per-region`` and ``phase-weighted`` place by (:mod:`pinbench.place.per_region`; ``all``
leaves them out). Errors (unknown strategy, unusable
matrix, regions file or topology, more threads than placeable PUs) print one line on
stderr and exit with status 2.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from pinbench.commands.conventions import json_option, print_json
from pinbench.graph.matrix import read_matrix
from pinbench.place.domains import PlacementError
from pinbench.place.record import core_sharing, make_placement, ranked
from pinbench.place.registry import NAMES, STRATEGIES, parse_strategy
from pinbench.place.study import Memo
from pinbench.results.placements import Placement, omp_places, shared_levels, write_placement
from pinbench.results.regions import read_regions
from pinbench.topology import Topology, load

SOCKET_VARIANTS = tuple(name for name, strategy in STRATEGIES.items() if strategy.takes_sockets)


def strategy_names(requested: list[str], sockets: int | None) -> list[str]:
    """The strategies a command asks for: ``all`` (every one pinbench binds threads by; the
    runtimes' policies by name) or the names.

    ``sockets`` turns ``lpgp``/``gplp`` into ``lpgp-K``/``gplp-K``; PlacementError
    for an unknown name or sockets given to another strategy.
    """
    if requested == ["all"]:
        names = [name for name in NAMES
                 if STRATEGIES[name].place is not None and not STRATEGIES[name].policy]
    else:
        for name in requested:
            parse_strategy(name)
        names = list(requested)
    if sockets is None:
        return names
    if requested != ["all"] and not set(names) & set(SOCKET_VARIANTS):
        raise PlacementError(f"--sockets applies to {' and '.join(SOCKET_VARIANTS)}, "
                             f"not {', '.join(map(repr, names))}")
    return [f"{name}-{sockets}" if name in SOCKET_VARIANTS else name for name in names]


def summary(topo: Topology, placement: Placement) -> dict:
    """What the command reports of one placement (``random``: its first repetition)."""
    pus = placement.example_pus
    return {"strategy": placement.strategy, "pus": pus, "J": placement.J,
            "core_pairs": core_sharing(topo, placement),
            "omp_places": None if pus is None else omp_places(pus),
            "shared_level": None if pus is None else shared_levels(topo, pus)}


def _print_one(topo: Topology, placement: Placement, threads: int) -> None:
    found = summary(topo, placement)
    print(f"{found['strategy']}: {threads} threads on {topo.summary()}")
    if found["pus"] is None:
        print("thread -> PU: not bound (the OS decides)")
        return
    print("thread -> PU: " + " ".join(f"{t}->{pu}" for t, pu in enumerate(found["pus"])))
    if found["J"] is not None:
        print(f"J: {found['J']:.6g}")
    print(f"OMP_PLACES={found['omp_places']}")
    print(f"thread pairs sharing a core: {found['core_pairs']:g}")


def _print_table(topo: Topology, placements: list[Placement], threads: int) -> None:
    """J, J over the best's, thread pairs sharing a core, and the rank by (core pairs, J)."""
    order = ranked(topo, placements)
    rank = {placement.strategy: (k, pairs) for k, (placement, pairs) in enumerate(order, 1)}
    best = order[0][0].J if order else None
    print(f"{threads} threads on {topo.summary()}")
    print(f"{'strategy':>12} {'J':>14} {'J/best':>8} {'core pairs':>10} {'rank':>5}")
    for placement in placements:
        if placement.strategy not in rank:
            print(f"{placement.strategy:>12} {'-':>14} {'-':>8} {'-':>10} {'-':>5}")
            continue
        place, pairs = rank[placement.strategy]
        ratio = placement.J / best if best else 1.0
        print(f"{placement.strategy:>12} {placement.J:>14.6g} {ratio:>8.4f} {pairs:>10.4g} "
              f"{place:>5}")


def arguments(parser: argparse.ArgumentParser, name: str) -> None:
    """The topology, the strategies, and the matrix or the thread count."""
    parser.add_argument("--topology", required=True,
                        help='"auto", an hwloc XML file, or an hwloc synthetic description')
    parser.add_argument("--matrix", help="affinity matrix, N x N CSV")
    parser.add_argument("--threads", type=int, help="N, when no matrix is given")
    parser.add_argument("--regions", help="the per-region trace (t<N>.regions.json), for "
                                          "per-region and phase-weighted")
    parser.add_argument("--strategy", "--strategies", dest="strategies", nargs="+", required=True,
                        help='strategy names, or "all"')
    parser.add_argument("--sockets", type=int, help="sockets used by lpgp and gplp")
    parser.add_argument("--seed", type=int, default=0, help="seed of METIS and of random")
    parser.add_argument("--repetitions", type=int, default=1,
                        help="placements drawn by random (with --outdir)")
    output = parser.add_mutually_exclusive_group()
    json_option(output)
    output.add_argument("--outdir", type=Path, help="write DIR/<strategy>.json")


def run(args: argparse.Namespace) -> int:
    """Place threads on a machine, report the objective J, or write placement files."""
    if args.sockets is not None and args.sockets < 1:
        raise PlacementError("--sockets must be at least 1")
    if args.repetitions < 1:
        raise PlacementError("--repetitions must be at least 1")
    names = strategy_names(args.strategies, args.sockets)
    matrix = None if args.matrix is None else read_matrix(args.matrix)
    regions = None if args.regions is None else read_regions(args.regions)
    if matrix is None and args.threads is None:
        raise PlacementError("give --matrix (N is its size) or --threads N")
    threads = len(matrix) if args.threads is None else args.threads
    topo = load(args.topology)
    memo = Memo()  # the strategies share their matching, partitions and study placements
    placements = [make_placement(topo, name, threads, args.seed, args.repetitions, matrix,
                                 memo=memo, regions=regions)
                  for name in names]
    single = args.strategies != ["all"] and len(names) == 1
    if args.outdir is not None:
        args.outdir.mkdir(parents=True, exist_ok=True)
        for placement in placements:
            write_placement(placement, args.outdir / f"{placement.strategy}.json")
            print(placement.line())
    elif args.json:
        found = [summary(topo, placement) for placement in placements]
        print_json(found[0] if single else {f["strategy"]: f for f in found})
    elif single:
        _print_one(topo, placements[0], threads)
    else:
        _print_table(topo, placements, threads)
    return 0
