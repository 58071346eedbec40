"""Placement files: one JSON per (machine, benchmark, threads, strategy).

A placement names, for every OpenMP thread i, the PU (OS index) it runs on,
the ``OMP_PLACES`` string that pins it there, and for each pair of threads
the lowest level of the tree they share. ``os`` has no list (the OS
decides); ``random`` has a fresh list per repetition, drawn from a recorded seed.

Given the affinity matrix of the run, every placement also records the
objective J it reaches (:mod:`affinity.objective`), so strategies can be
compared before anything runs; the graph strategies need the matrix.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from affinity import graph_strategies, strategies
from affinity.hierarchical import hierarchical
from affinity.matrix import MatrixError, read_matrix
from affinity.objective import lowest_shared_matrix, objective
from affinity.seeding import derive_seed
from affinity.topology import Topology, TopologyError, load


def omp_places(pus: list[int]) -> str:
    """The ``OMP_PLACES`` value that puts thread i on ``pus[i]`` under ``OMP_PROC_BIND=close``."""
    return ",".join(f"{{{pu}}}" for pu in pus)


def shared_levels(topo: Topology, pus: list[int]) -> list[list[str]]:
    """``m[i][j]``: type of the lowest tree object holding the PUs of threads i and j."""
    index, nodes = lowest_shared_matrix(topo, pus)
    return np.array([node.type for node in nodes], dtype=object)[index].tolist()


def make_placement(topo: Topology, strategy: str, threads: int, seed: int = 0,
                   repetitions: int = 1, matrix: np.ndarray | None = None) -> dict:
    """The placement record of one strategy for ``threads`` threads on ``topo``.

    ``seed`` and ``repetitions`` matter to ``random``, which draws one
    placement per repetition from ``derive_seed(seed, repetition)``; the graph
    strategies that partition pass ``seed`` to METIS. ``matrix`` is the
    ``threads`` x ``threads`` affinity matrix: the graph strategies need it,
    and with it the record's ``J`` is the objective of the placement (for
    ``random``, ``J_by_repetition`` holds each repetition's and ``J`` their
    mean); ``J`` is None without a matrix and for ``os``.
    """
    base, sockets = strategies.parse_strategy(strategy)
    strategies.check_fits(topo, threads)
    if matrix is not None:
        matrix = np.asarray(matrix, dtype=float)
        if matrix.shape != (threads, threads):
            raise strategies.PlacementError(
                f"the affinity matrix is {len(matrix)} x {len(matrix)}, not {threads} x {threads}")
    elif base in strategies.GRAPH:
        raise strategies.PlacementError(f"strategy {strategy!r} needs an affinity matrix")
    record: dict = {"strategy": strategy, "threads": threads, "topology": topo.source,
                    "placeable": topo.placeable, "pus": None, "omp_places": None, "J": None}
    if base == "random":
        record["seed"] = seed
        record["pus_by_repetition"] = [
            strategies.random_placement(topo, threads, derive_seed(seed, rep))
            for rep in range(repetitions)
        ]
        record["J_by_repetition"] = None if matrix is None else [
            objective(topo, matrix, pus) for pus in record["pus_by_repetition"]]
        if matrix is not None:
            record["J"] = float(np.mean(record["J_by_repetition"]))
    elif base != "os":
        pus = _bound_pus(topo, base, sockets, threads, matrix, seed)
        record.update(pus=pus, omp_places=omp_places(pus), shared_level=shared_levels(topo, pus))
        if matrix is not None:
            record["J"] = objective(topo, matrix, pus)
        if base in strategies.GRAPH:
            record["seed"] = seed
    return record


def _bound_pus(topo: Topology, base: str, sockets: int | None, threads: int,
               matrix: np.ndarray | None, seed: int) -> list[int]:
    """The thread -> PU list of a strategy that binds threads to one fixed list."""
    if base in strategies.FIXED_STRATEGIES:
        return strategies.FIXED_STRATEGIES[base](topo, threads)
    if base == "lp-compact":
        return graph_strategies.lp_compact(topo, matrix)
    if base == "lp-scatter":
        return graph_strategies.lp_scatter(topo, matrix)
    if base == "gp":
        return graph_strategies.gp(topo, matrix, seed)
    if base == "lpgp":
        return graph_strategies.lpgp(topo, matrix, sockets, seed)
    if base == "gplp":
        return graph_strategies.gplp(topo, matrix, sockets, seed)
    return hierarchical(topo, matrix, seed)


def pus_for(record: dict, repetition: int) -> list[int] | None:
    """The thread -> PU list a placement prescribes for one repetition (None for ``os``)."""
    if "pus_by_repetition" in record:
        return record["pus_by_repetition"][repetition]
    return record["pus"]


def describe(record: dict) -> str:
    """One human-readable line: strategy, its thread -> PU list, and J when known."""
    name = f"{record['strategy']:>10}"
    if record.get("pus"):
        line, objective_label = f"{name}: {' '.join(map(str, record['pus']))}", "J"
    elif "pus_by_repetition" in record:
        first = record["pus_by_repetition"][0]
        line = (f"{name}: fresh per repetition (seed {record['seed']}), "
                f"e.g. {' '.join(map(str, first))}")
        objective_label = "mean J"
    else:
        return f"{name}: not bound (the OS decides)"
    return line if record.get("J") is None else f"{line} ({objective_label} {record['J']:.6g})"


def write_placements(topology: str, threads: int, names: list[str], outdir: Path,
                     seed: int = 0, repetitions: int = 1, log: Path | None = None,
                     matrix: Path | None = None) -> list[dict]:
    """Compute each named strategy's placement and write ``<outdir>/<strategy>.json``.

    ``log``, when given, receives one :func:`describe` line per strategy.
    ``matrix``, when given, is the affinity matrix file (:mod:`affinity.matrix`)
    of the run: the graph strategies need it, and every record gets its J.
    """
    topo = load(topology)
    weights = None if matrix is None else read_matrix(matrix)
    records = [make_placement(topo, name, threads, seed, repetitions, weights) for name in names]
    outdir.mkdir(parents=True, exist_ok=True)
    for record in records:
        (outdir / f"{record['strategy']}.json").write_text(json.dumps(record, indent=1) + "\n")
    if log:
        log.write_text("".join(describe(record) + "\n" for record in records))
    return records


def main(argv: list[str] | None = None) -> int:
    """Write the placement file of each named strategy into a directory."""
    parser = argparse.ArgumentParser(prog="python -m affinity.placement", description=main.__doc__)
    parser.add_argument("--topology", required=True,
                        help='hwloc XML file, synthetic description, or "auto"')
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--strategies", nargs="+", required=True)
    parser.add_argument("--seed", type=int, default=0, help="seed of the random strategy")
    parser.add_argument("--repetitions", type=int, default=1)
    parser.add_argument("--outdir", type=Path, required=True)
    parser.add_argument("--matrix", type=Path, help="affinity matrix (CSV) of the run")
    args = parser.parse_args(argv)
    try:
        records = write_placements(args.topology, args.threads, args.strategies, args.outdir,
                                   args.seed, args.repetitions, matrix=args.matrix)
    except (TopologyError, strategies.PlacementError, MatrixError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for record in records:
        print(describe(record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
