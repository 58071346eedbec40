"""A strategy's placement for one (machine, benchmark, threads), and writing them all.

A placement names, for every OpenMP thread i, the PU (OS index) it runs on, and
the ``OMP_PLACES`` string that pins it there (the lowest level of the tree each
pair of threads shares follows from the topology:
:func:`pinbench.results.placements.shared_levels`). ``os`` has no list (the OS
decides); ``random`` has a fresh list per repetition, drawn from a recorded
seed. Given the affinity matrix of the run, every placement also holds the
objective J it reaches (:mod:`pinbench.graph.objective`), so strategies can
be compared before anything runs; the graph strategies need the matrix. The
record and its file are :mod:`pinbench.results.placements`.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from pinbench.graph.matrix import read_matrix
from pinbench.graph.objective import core_pairs, objective
from pinbench.place import per_region, policies
from pinbench.place.domains import PlacementError, check_fits
from pinbench.place.registry import STRATEGIES, Strategy, parse_strategy
from pinbench.place.study import Memo
from pinbench.place.user import UserPlacement
from pinbench.results.placements import Placement, write_placement
from pinbench.results.regions import Regions, RegionsError, read_regions, regions_path
from pinbench.seeding import derive_seed
from pinbench.topology import Topology, load
from pinbench.trace.build import TraceError
from pinbench.trace.callsites import carry


def wrapped(pus: list[int], threads: int) -> list[int]:
    """Thread i on ``pus[i mod len(pus)]``: a placement of every PU, repeated for more threads.

    >>> wrapped([0, 2, 1, 3], 6)
    [0, 2, 1, 3, 0, 2]
    """
    return [pus[i % len(pus)] for i in range(threads)]


def make_placement(topo: Topology, strategy: str, threads: int, seed: int = 0,
                   repetitions: int = 1, matrix: np.ndarray | None = None,
                   oversubscribe: bool = False, memo: Memo | None = None,
                   placements: dict[str, UserPlacement] | None = None,
                   regions: Regions | None = None) -> Placement:
    """The placement of one strategy for ``threads`` threads on ``topo``.

    ``seed`` and ``repetitions`` matter to ``random``, which draws one
    placement per repetition from ``derive_seed(seed, repetition)``; the graph
    strategies that partition pass ``seed`` to METIS. ``matrix`` is the
    ``threads`` x ``threads`` affinity matrix: the graph strategies need it,
    and with it the placement's ``J`` is its objective (for ``random``,
    ``J_by_repetition`` holds each repetition's and ``J`` their mean); ``J`` is
    None without a matrix and for ``os``.

    ``oversubscribe``: more threads than placeable PUs are allowed for the strategies that
    wrap (:attr:`~pinbench.place.registry.Strategy.wraps`): thread i gets the strategy's
    placement of all P PUs at i mod P (:func:`wrapped`; ``random`` draws one per repetition),
    so ``OMP_PLACES`` repeats places and thread i is still bound to place i. The placement
    is then ``oversubscribed``. PlacementError for a strategy that does not wrap.

    ``memo``, one per (topology, matrix), lets the strategies placed with it share their steps
    (:class:`pinbench.place.study.Memo`): the matching, the socket partition, the study's
    placements that ``hierarchical`` starts from. ``placements``: the campaign's own
    placements by name (:mod:`pinbench.place.user`). ``regions``: the per-region trace, which
    the per-region strategies need (:mod:`pinbench.place.per_region`).
    """
    memo = Memo() if memo is None else memo
    chosen, sockets = parse_strategy(strategy, placements)
    placed = threads
    if oversubscribe and threads > len(topo.placeable):
        if not chosen.wraps:
            raise PlacementError(f"strategy {strategy!r} cannot place {threads} threads on "
                                 f"{len(topo.placeable)} placeable PUs (oversubscribed)")
        placed = len(topo.placeable)
    check_fits(topo, placed)
    # on a hybrid machine the strategies keep to the most efficient kind while threads fit
    # (the runtimes' policies and the campaign's own placements go where they say)
    own = chosen.policy or (placements and strategy in placements)
    on = topo if own else topo.on_best_kind(placed)
    if matrix is not None:
        matrix = np.asarray(matrix, dtype=float)
        if matrix.shape != (threads, threads):
            raise PlacementError(
                f"the affinity matrix is {len(matrix)} x {len(matrix)}, not {threads} x {threads}")
    elif chosen.needs_matrix:
        raise PlacementError(f"strategy {strategy!r} needs an affinity matrix")
    placement = Placement(strategy=strategy, threads=threads, topology=topo.source,
                          placeable=topo.placeable, pus=None, J=None,
                          oversubscribed=placed < threads)
    if chosen.by_region:
        return _by_region(topo, on, chosen, placement, matrix, regions, sockets, seed, memo)
    if chosen.per_repetition:
        draws = [wrapped(chosen.place(on, placed, matrix, sockets, derive_seed(seed, rep),
                                      memo), threads)
                 for rep in range(repetitions)]
        each = None if matrix is None else [objective(topo, matrix, pus) for pus in draws]
        return dataclasses.replace(placement, seed=seed, pus_by_repetition=draws,
                                   J_by_repetition=each,
                                   J=None if each is None else float(np.mean(each)))
    if chosen.place is None:
        return placement  # os
    pus = wrapped(chosen.place(on, placed, matrix, sockets, seed, memo), threads)
    if chosen.policy:
        placement = dataclasses.replace(placement, policy=policies.environment(strategy),
                                        places_by_runtime=policies.predict(topo, strategy,
                                                                           threads))
    return dataclasses.replace(placement, pus=pus,
                               J=None if matrix is None else objective(topo, matrix, pus),
                               seed=seed if chosen.needs_matrix else None)


def _by_region(topo: Topology, on: Topology, chosen: Strategy, placement: Placement,
               matrix: np.ndarray, regions: Regions | None, sockets: int | None, seed: int,
               memo: Memo) -> Placement:
    """The placement of a per-region strategy (:mod:`pinbench.place.per_region`) on top of
    its base graph strategy."""
    if regions is None:
        raise PlacementError(f"strategy {placement.strategy!r} needs the per-region trace "
                             "(pinbench trace --per-region)")
    if regions.threads != placement.threads:
        raise PlacementError(f"the per-region trace is of {regions.threads} threads, not "
                             f"{placement.threads}")
    base = STRATEGIES[chosen.base]

    def place(weights: np.ndarray, shared: Memo | None = None) -> list[int]:
        return base.place(on, placement.threads, weights, sockets, seed,
                          Memo() if shared is None else shared)

    if chosen.by_region == "weighted":
        pus = place(per_region.phase_weighted(regions))
        return dataclasses.replace(placement, pus=pus, J=objective(topo, matrix, pus),
                                   seed=seed)
    made = per_region.plan(topo, matrix, regions, place(matrix, memo), place,
                           per_region.rebind_cost_s())
    return dataclasses.replace(placement, pus=made.pus, J=made.J, seed=seed,
                               regions=made.regions)


def core_sharing(topo: Topology, placement: Placement) -> float | None:
    """Thread pairs on one core (:func:`~pinbench.graph.objective.core_pairs`) of a placement.

    ``random``: the mean over its repetitions; ``os``: None.
    """
    if placement.per_repetition:
        return float(np.mean([core_pairs(topo, pus) for pus in placement.pus_by_repetition]))
    return None if placement.pus is None else core_pairs(topo, placement.pus)


def ranked(topo: Topology, placements: list[Placement]) -> list[tuple[Placement, float]]:
    """The placements that bind threads and have a J, best first, with their core sharing.

    Placements are ranked by the threads they put off the most efficient CPU kind first (a
    hybrid machine's E-cores; :meth:`~pinbench.topology.Topology.off_best_kind`), then by core
    sharing, then by J (see :mod:`pinbench.graph.objective`): J compares communication only
    between placements that load the cores alike. Ties keep the order of ``placements``.
    """
    scored = [(placement, core_sharing(topo, placement)) for placement in placements
              if placement.J is not None]  # os has no J

    def off_kind(placement: Placement) -> float:
        lists = placement.pus_by_repetition or [placement.pus]
        return float(np.mean([topo.off_best_kind(pus) for pus in lists]))

    return sorted(scored, key=lambda item: (off_kind(item[0]), item[1], item[0].J))


def left_out(topo: Topology, strategy: str, threads: int, why: str) -> Placement:
    """The placement of a strategy left out of a cell: no PUs, and ``why`` (its trace failed)."""
    return Placement(strategy=strategy, threads=threads, topology=topo.source,
                     placeable=topo.placeable, pus=None, J=None, left_out=why)


def write_placements(topology: str | Topology, threads: int, names: list[str],
                     outputs: list[Path], seed: int = 0, repetitions: int = 1,
                     log: Path | None = None, matrix: Path | None = None,
                     oversubscribe: bool = False,
                     placements: dict[str, UserPlacement] | None = None,
                     no_matrix: str | None = None,
                     binaries: tuple[Path | str, Path | str] | None = None) -> list[Placement]:
    """Compute each named strategy's placement and write it to the matching path of ``outputs``.

    ``topology``: a topology spec (:func:`pinbench.topology.load`), or one already loaded.

    ``log``, when given, receives one :meth:`~pinbench.results.placements.Placement.line`
    per strategy. ``matrix``, when given, is the affinity matrix file
    (:mod:`pinbench.graph.matrix`) of the run: the graph strategies need it, and
    every placement gets its J. ``no_matrix``, instead: why there is none (the cell's trace
    failed, :mod:`pinbench.results.traces`): the graph strategies are left out
    (:func:`left_out`), the others placed. ``oversubscribe``, ``placements``: as
    :func:`make_placement`'s. The strategies share their common steps (one
    :class:`~pinbench.place.study.Memo`). The per-region strategies read the per-region trace
    beside ``matrix`` (:func:`~pinbench.results.regions.regions_path`); where it is missing
    or unusable they are left out, with its one line. ``binaries``: (traced, measured), the
    two builds of the program, when they differ: the regions are carried from the first to
    the second (:func:`pinbench.trace.callsites.carry`; those that cannot be are not placed
    on their own, and ``log`` says so).
    """
    topo = load(topology) if isinstance(topology, str) else topology
    weights = None if matrix is None else read_matrix(matrix)
    by_region = [name for name in names if parse_strategy(name, placements)[0].by_region]
    regions, no_regions, lost = None, no_matrix, []
    if by_region and matrix is not None and not no_matrix:
        try:
            regions = read_regions(regions_path(matrix))
            if binaries:
                regions, lost = carry(regions, *binaries)
        except (RegionsError, TraceError) as exc:
            no_regions = str(exc)
    memo = Memo()
    made = [left_out(topo, name, threads, no_regions if name in by_region else no_matrix)
            if (no_matrix and parse_strategy(name, placements)[0].needs_matrix)
            or (no_regions and name in by_region)
            else make_placement(topo, name, threads, seed, repetitions, weights, oversubscribe,
                                memo, placements, regions)
            for name in names]
    for placement, path in zip(made, outputs, strict=True):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        write_placement(placement, path)
    if log:
        Path(log).write_text("".join([*(placement.line() + "\n" for placement in made),
                                      *(f"region not placed on its own: {why}\n"
                                        for why in lost)]))
    return made
