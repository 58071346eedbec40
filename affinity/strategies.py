"""Application-independent placement strategies: thread i -> PU (OS index).

``compact`` and ``scatter`` follow Intel's ``KMP_AFFINITY`` on the hwloc tree,
as LLVM's ``openmp/runtime/src/kmp_affinity.cpp`` (``compare_compact``) does:
every PU is labelled by its rank among its siblings at each level, compact
sorts the labels root first (fill a socket before the next), scatter sorts
them leaf first (thread i on socket i mod S, and so on down the tree).
Strategies work on the tree, never on OS index arithmetic, so they give the
same placement (up to renaming) on consecutive and alternating numberings.

This module also names every strategy a campaign may use. The
application-sensitive ones, which need an affinity matrix, live in
:mod:`affinity.graph_strategies` (the study's five) and
:mod:`affinity.hierarchical`; ``lpgp`` and ``gplp`` take a number of sockets
as a suffix, ``lpgp-8`` being LPGP on 8 sockets (see :func:`parse_strategy`).
"""
from __future__ import annotations

import random
import re
from collections.abc import Callable

from affinity.topology import Topology

#: Strategies that bind threads to one fixed list of PUs.
FIXED = ("compact", "scatter")
#: The application-independent strategies: they need no affinity matrix.
KNOWN = ("os", "random", *FIXED)
#: The application-sensitive strategies: they place threads by an affinity matrix.
GRAPH = ("lp-compact", "lp-scatter", "gp", "lpgp", "gplp", "hierarchical")
#: Graph strategies that may be told how many sockets to use: ``lpgp-<K>``, ``gplp-<K>``.
SOCKET_VARIANTS = ("lpgp", "gplp")


class PlacementError(ValueError):
    """No placement of the requested kind exists."""


def parse_strategy(name: str) -> tuple[str, int | None]:
    """A strategy name as (base name, number of sockets or None).

    ``parse_strategy("lpgp-8") == ("lpgp", 8)``, ``parse_strategy("gp") == ("gp", None)``.
    Raises PlacementError for a name no campaign may use.
    """
    base, _, suffix = name.rpartition("-")
    if base in SOCKET_VARIANTS and re.fullmatch("[1-9][0-9]*", suffix):
        return base, int(suffix)
    if name in KNOWN or name in GRAPH:
        return name, None
    raise PlacementError(
        f"unknown strategy {name!r}; known: {', '.join(KNOWN + GRAPH)}, "
        f"and {'/'.join(f'{v}-<sockets>' for v in SOCKET_VARIANTS)}")


def needs_matrix(name: str) -> bool:
    """True when the strategy places threads by an affinity matrix (PlacementError if unknown)."""
    return parse_strategy(name)[0] in GRAPH


def check_fits(topo: Topology, threads: int) -> list[int]:
    """The placeable PUs, or PlacementError when ``threads`` do not fit on them."""
    pus = topo.placeable
    if not 1 <= threads <= len(pus):
        raise PlacementError(
            f"{threads} threads do not fit on {len(pus)} placeable PUs "
            f"of {topo.source or 'this machine'}"
        )
    return pus


def compact(topo: Topology, threads: int) -> list[int]:
    """``KMP_AFFINITY=compact,granularity=fine``: neighbours in the tree get consecutive threads.
    On ``Package:2 Core:2 PU:1``, 3 threads go to PUs 0, 1, 2.
    """
    pus = check_fits(topo, threads)
    return sorted(pus, key=topo.sub_ids)[:threads]


def scatter(topo: Topology, threads: int) -> list[int]:
    """``KMP_AFFINITY=scatter,granularity=fine``: spread threads as far apart as the tree allows.
    On ``Package:2 Core:2 PU:1``, 3 threads go to PUs 0, 2, 1.
    """
    return scatter_order(topo, check_fits(topo, threads))[:threads]


def scatter_order(topo: Topology, pus: list[int]) -> list[int]:
    """``pus`` sorted as ``scatter`` takes them: by their sub-ids, leaf level most significant."""
    return sorted(pus, key=lambda pu: tuple(reversed(topo.sub_ids(pu))))


def random_placement(topo: Topology, threads: int, seed: int) -> list[int]:
    """A uniformly random choice and order of ``threads`` distinct placeable PUs."""
    pus = check_fits(topo, threads)
    return random.Random(seed).sample(pus, threads)


FIXED_STRATEGIES: dict[str, Callable[[Topology, int], list[int]]] = {
    "compact": compact,
    "scatter": scatter,
}
