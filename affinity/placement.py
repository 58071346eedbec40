"""Placement files: one JSON per (machine, benchmark, threads, strategy).

A placement names, for every OpenMP thread i, the PU (OS index) it runs on,
the ``OMP_PLACES`` string that pins it there, and for each pair of threads
the lowest level of the tree they share. ``os`` has no list (the OS
decides); ``random`` has a fresh list per repetition, drawn from a recorded seed.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from affinity import strategies
from affinity.seeding import derive_seed
from affinity.topology import Topology, TopologyError, load


def omp_places(pus: list[int]) -> str:
    """The ``OMP_PLACES`` value that puts thread i on ``pus[i]`` under ``OMP_PROC_BIND=close``."""
    return ",".join(f"{{{pu}}}" for pu in pus)


def shared_levels(topo: Topology, pus: list[int]) -> list[list[str]]:
    """``m[i][j]``: type of the lowest tree object holding the PUs of threads i and j."""
    return [[topo.lowest_shared(a, b).type for b in pus] for a in pus]


def make_placement(topo: Topology, strategy: str, threads: int,
                   seed: int = 0, repetitions: int = 1) -> dict:
    """The placement record of one strategy for ``threads`` threads on ``topo``.

    ``seed`` and ``repetitions`` matter only to ``random``, which draws one
    placement per repetition from ``derive_seed(seed, repetition)``.
    """
    record: dict = {"strategy": strategy, "threads": threads, "topology": topo.source,
                    "placeable": topo.placeable, "pus": None, "omp_places": None}
    if strategy == "os":
        strategies.check_fits(topo, threads)
    elif strategy == "random":
        record["seed"] = seed
        record["pus_by_repetition"] = [
            strategies.random_placement(topo, threads, derive_seed(seed, rep))
            for rep in range(repetitions)
        ]
    elif strategy in strategies.FIXED_STRATEGIES:
        pus = strategies.FIXED_STRATEGIES[strategy](topo, threads)
        record.update(pus=pus, omp_places=omp_places(pus), shared_level=shared_levels(topo, pus))
    else:
        raise strategies.PlacementError(
            f"unknown strategy {strategy!r}; known: {', '.join(strategies.KNOWN)}")
    return record


def pus_for(record: dict, repetition: int) -> list[int] | None:
    """The thread -> PU list a placement prescribes for one repetition (None for ``os``)."""
    if "pus_by_repetition" in record:
        return record["pus_by_repetition"][repetition]
    return record["pus"]


def describe(record: dict) -> str:
    """One human-readable line: strategy and its thread -> PU list."""
    if record.get("pus"):
        return f"{record['strategy']:>10}: {' '.join(map(str, record['pus']))}"
    if "pus_by_repetition" in record:
        first = record["pus_by_repetition"][0]
        return (f"{record['strategy']:>10}: fresh per repetition (seed {record['seed']}), "
                f"e.g. {' '.join(map(str, first))}")
    return f"{record['strategy']:>10}: not bound (the OS decides)"


def write_placements(topology: str, threads: int, names: list[str], outdir: Path,
                     seed: int = 0, repetitions: int = 1, log: Path | None = None) -> list[dict]:
    """Compute each named strategy's placement and write ``<outdir>/<strategy>.json``.

    ``log``, when given, receives one :func:`describe` line per strategy.
    """
    topo = load(topology)
    records = [make_placement(topo, name, threads, seed, repetitions) for name in names]
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
    args = parser.parse_args(argv)
    try:
        records = write_placements(args.topology, args.threads, args.strategies, args.outdir,
                                   args.seed, args.repetitions)
    except (TopologyError, strategies.PlacementError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for record in records:
        print(describe(record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
