"""Application-independent placement strategies: thread i -> PU (OS index).

``compact`` and ``scatter`` follow Intel's ``KMP_AFFINITY`` on the hwloc tree,
as LLVM's ``openmp/runtime/src/kmp_affinity.cpp`` (``compare_compact``) does:
every PU is labelled by its rank among its siblings at each level, compact
sorts the labels root first (fill a socket before the next), scatter sorts
them leaf first (thread i on socket i mod S, and so on down the tree).
Strategies work on the tree, never on OS index arithmetic, so they give the
same placement (up to renaming) on consecutive and alternating numberings.
"""
from __future__ import annotations

import random
from collections.abc import Callable

from affinity.topology import Topology

#: Strategies that bind threads to one fixed list of PUs.
FIXED = ("compact", "scatter")
#: Every strategy a campaign may name in this version.
KNOWN = ("os", "random", *FIXED)


class PlacementError(ValueError):
    """No placement of the requested kind exists."""


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
    pus = check_fits(topo, threads)
    return sorted(pus, key=lambda pu: tuple(reversed(topo.sub_ids(pu))))[:threads]


def random_placement(topo: Topology, threads: int, seed: int) -> list[int]:
    """A uniformly random choice and order of ``threads`` distinct placeable PUs."""
    pus = check_fits(topo, threads)
    return random.Random(seed).sample(pus, threads)


FIXED_STRATEGIES: dict[str, Callable[[Topology, int], list[int]]] = {
    "compact": compact,
    "scatter": scatter,
}
