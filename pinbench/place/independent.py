"""The application-independent strategies: thread i -> PU (OS index) without an affinity matrix.

``compact`` and ``scatter`` follow Intel's ``KMP_AFFINITY`` on the hwloc tree,
as LLVM's ``openmp/runtime/src/kmp_affinity.cpp`` (``_set_sub_ids``,
``compare_compact``) does: every PU is labelled by its rank among its
siblings at each level, compact sorts the labels root first (fill a socket
before the next), scatter sorts them leaf first (thread i on socket i mod S,
and so on down the tree). libomp labels only the OS procs of its affinity
mask, so the ranks are taken in the tree restricted to the placeable PUs
(:attr:`pinbench.topology.Topology.root`): on a machine where some PUs are
disallowed, a socket with one placeable core counts as a socket of one core,
and no socket with a placeable PU is skipped. Strategies work on the tree,
never on OS index arithmetic, so they give the same placement (up to
renaming) on consecutive and alternating numberings. ``random`` draws a
uniformly random placement from a seed.

The application-sensitive strategies, which need an affinity matrix, live in
:mod:`pinbench.place.study` (the study's five) and
:mod:`pinbench.place.hierarchical`; :mod:`pinbench.place.registry` names them all.
"""
from __future__ import annotations

import random

from pinbench.place.domains import check_fits, scatter_order
from pinbench.topology import Topology


def compact(topo: Topology, threads: int) -> list[int]:
    """``KMP_AFFINITY=compact,granularity=fine``: neighbours in the tree get consecutive threads.

    >>> from pinbench.topology import load, parse_xml, topology_xml
    >>> compact(load("Package:2 Core:2 PU:1"), 3)
    [0, 1, 2]
    >>> tree = topology_xml("Package:3 Core:2 PU:1")
    >>> restricted = parse_xml(tree, restrict_to=frozenset({0, 2, 3, 5}))
    >>> compact(restricted, 3)
    [0, 2, 3]
    """
    pus = check_fits(topo, threads)
    return sorted(pus, key=topo.sub_ids)[:threads]


def scatter(topo: Topology, threads: int) -> list[int]:
    """``KMP_AFFINITY=scatter,granularity=fine``: spread threads as far apart as the tree allows.

    >>> from pinbench.topology import load, parse_xml, topology_xml
    >>> scatter(load("Package:2 Core:2 PU:1"), 3)
    [0, 2, 1]
    >>> tree = topology_xml("Package:3 Core:2 PU:1")
    >>> restricted = parse_xml(tree, restrict_to=frozenset({0, 2, 3, 5}))
    >>> scatter(restricted, 3)  # a thread on every package, as libomp's scatter
    [0, 2, 5]
    """
    return scatter_order(topo, check_fits(topo, threads))[:threads]


def random_placement(topo: Topology, threads: int, seed: int) -> list[int]:
    """A uniformly random choice and order of ``threads`` distinct placeable PUs."""
    pus = check_fits(topo, threads)
    return random.Random(seed).sample(pus, threads)
