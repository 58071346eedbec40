"""A strategy's placement record for one (machine, benchmark, threads), and writing them all.

A record names, for every OpenMP thread i, the PU (OS index) it runs on,
the ``OMP_PLACES`` string that pins it there, and for each pair of threads
the lowest level of the tree they share. ``os`` has no list (the OS
decides); ``random`` has a fresh list per repetition, drawn from a recorded
seed. Given the affinity matrix of the run, every record also holds the
objective J it reaches (:mod:`pinbench.graph.objective`), so strategies can
be compared before anything runs; the graph strategies need the matrix. The
file format is :mod:`pinbench.results.placements`.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from pinbench.graph.matrix import read_matrix
from pinbench.graph.objective import core_pairs, lowest_shared_matrix, objective
from pinbench.place.domains import PlacementError, check_fits
from pinbench.place.registry import parse_strategy
from pinbench.place.study import Memo
from pinbench.results.placements import omp_places, placement_line, write_placement
from pinbench.seeding import derive_seed
from pinbench.topology import Topology, load


def shared_levels(topo: Topology, pus: list[int]) -> list[list[str]]:
    """``m[i][j]``: type of the lowest tree object holding the PUs of threads i and j."""
    index, nodes = lowest_shared_matrix(topo, pus)
    return np.array([node.type for node in nodes], dtype=object)[index].tolist()


def wrapped(pus: list[int], threads: int) -> list[int]:
    """Thread i on ``pus[i mod len(pus)]``: a placement of every PU, repeated for more threads.

    >>> wrapped([0, 2, 1, 3], 6)
    [0, 2, 1, 3, 0, 2]
    """
    return [pus[i % len(pus)] for i in range(threads)]


def make_placement(topo: Topology, strategy: str, threads: int, seed: int = 0,
                   repetitions: int = 1, matrix: np.ndarray | None = None,
                   oversubscribe: bool = False, memo: Memo | None = None) -> dict:
    """The placement record of one strategy for ``threads`` threads on ``topo``.

    ``seed`` and ``repetitions`` matter to ``random``, which draws one
    placement per repetition from ``derive_seed(seed, repetition)``; the graph
    strategies that partition pass ``seed`` to METIS. ``matrix`` is the
    ``threads`` x ``threads`` affinity matrix: the graph strategies need it,
    and with it the record's ``J`` is the objective of the placement (for
    ``random``, ``J_by_repetition`` holds each repetition's and ``J`` their
    mean); ``J`` is None without a matrix and for ``os``.

    ``oversubscribe``: more threads than placeable PUs are allowed for the strategies that
    wrap (:attr:`~pinbench.place.registry.Strategy.wraps`): thread i gets the strategy's
    placement of all P PUs at i mod P (:func:`wrapped`; ``random`` draws one per repetition),
    so ``OMP_PLACES`` repeats places and thread i is still bound to place i. The record then
    has ``oversubscribed: true``. PlacementError for a strategy that does not wrap.

    ``memo``, one per (topology, matrix), lets the strategies placed with it share their steps
    (:class:`pinbench.place.study.Memo`): the matching, the socket partition, the study's
    placements that ``hierarchical`` starts from.
    """
    memo = Memo() if memo is None else memo
    chosen, sockets = parse_strategy(strategy)
    placed = threads
    if oversubscribe and threads > len(topo.placeable):
        if not chosen.wraps:
            raise PlacementError(f"strategy {strategy!r} cannot place {threads} threads on "
                                 f"{len(topo.placeable)} placeable PUs (oversubscribed)")
        placed = len(topo.placeable)
    check_fits(topo, placed)
    if matrix is not None:
        matrix = np.asarray(matrix, dtype=float)
        if matrix.shape != (threads, threads):
            raise PlacementError(
                f"the affinity matrix is {len(matrix)} x {len(matrix)}, not {threads} x {threads}")
    elif chosen.needs_matrix:
        raise PlacementError(f"strategy {strategy!r} needs an affinity matrix")
    record: dict = {"strategy": strategy, "threads": threads, "topology": topo.source,
                    "placeable": topo.placeable, "pus": None, "omp_places": None, "J": None}
    if chosen.per_repetition:
        record["seed"] = seed
        record["pus_by_repetition"] = [
            wrapped(chosen.place(topo, placed, matrix, sockets, derive_seed(seed, rep), memo),
                    threads)
            for rep in range(repetitions)
        ]
        record["J_by_repetition"] = None if matrix is None else [
            objective(topo, matrix, pus) for pus in record["pus_by_repetition"]]
        if matrix is not None:
            record["J"] = float(np.mean(record["J_by_repetition"]))
    elif chosen.place is not None:
        pus = wrapped(chosen.place(topo, placed, matrix, sockets, seed, memo), threads)
        record.update(pus=pus, omp_places=omp_places(pus), shared_level=shared_levels(topo, pus))
        if matrix is not None:
            record["J"] = objective(topo, matrix, pus)
        if chosen.needs_matrix:
            record["seed"] = seed
    if placed < threads:
        record["oversubscribed"] = True
    return record


def core_sharing(topo: Topology, record: dict) -> float | None:
    """Thread pairs on one core (:func:`~pinbench.graph.objective.core_pairs`) of a record.

    ``random``: the mean over its repetitions; ``os``: None.
    """
    if "pus_by_repetition" in record:
        return float(np.mean([core_pairs(topo, pus) for pus in record["pus_by_repetition"]]))
    return None if record["pus"] is None else core_pairs(topo, record["pus"])


def ranked(topo: Topology, records: list[dict]) -> list[tuple[dict, float]]:
    """The records that bind threads and have a J, best first, with their core sharing.

    Placements are ranked by core sharing first, then by J (see
    :mod:`pinbench.graph.objective`): J compares communication only between
    placements that load the cores alike. Ties keep the order of ``records``.
    """
    scored = [(record, core_sharing(topo, record)) for record in records
              if record["J"] is not None]  # os has no J
    return sorted(scored, key=lambda item: (item[1], item[0]["J"]))


def write_placements(topology: str, threads: int, names: list[str], outputs: list[Path],
                     seed: int = 0, repetitions: int = 1, log: Path | None = None,
                     matrix: Path | None = None, oversubscribe: bool = False) -> list[dict]:
    """Compute each named strategy's placement and write it to the matching path of ``outputs``.

    ``log``, when given, receives one :func:`~pinbench.results.placements.placement_line`
    per strategy. ``matrix``, when given, is the affinity matrix file
    (:mod:`pinbench.graph.matrix`) of the run: the graph strategies need it, and
    every record gets its J. ``oversubscribe``: as :func:`make_placement`'s. The strategies
    share their common steps (one :class:`~pinbench.place.study.Memo`).
    """
    topo = load(topology)
    weights = None if matrix is None else read_matrix(matrix)
    memo = Memo()
    records = [make_placement(topo, name, threads, seed, repetitions, weights, oversubscribe,
                              memo)
               for name in names]
    for record, path in zip(records, outputs, strict=True):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        write_placement(record, path)
    if log:
        Path(log).write_text("".join(placement_line(record) + "\n" for record in records))
    return records
