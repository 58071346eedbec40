"""The application-sensitive strategies of the pinning study: lp-compact, lp-scatter, gp, lpgp, gplp.

Mazouz, Touati, Barthou, "Performance Evaluation and Analysis of Thread
Pinning Strategies on Multi-Core Platforms", section 3.2. Each strategy turns
the affinity matrix W (W[i][j]: accesses to cache lines shared by threads i
and j) into a placement thread i -> PU, combining two steps:

- **LP** (:mod:`pinbench.graph.matching`): optimal thread pairs, a maximum-weight
  perfect matching (Edmonds), for the caches shared by two cores;
- **GP** (:mod:`pinbench.graph.partition`): a k-way partition of the threads (or of
  the pairs) over the sockets, METIS then capacity repair and swap refinement.

=============  ==============================================================
``lp-compact``  pairs, laid on pairs of cores sharing a cache in compact order:
                pair 0 (the pair of the lowest thread) on the first two cores
                of the first cache, and so on
``lp-scatter``  the same pairs spread over the machine in scatter order: one
                pair per socket (and per NUMA node first) before a second one
``gp``          threads partitioned over the sockets; each socket's threads,
                in thread order, on its cores in compact order
``lpgp``        bottom-up: pairs, then the graph of pairs partitioned over the
                sockets, each socket's pairs laid compactly on its caches
``gplp``        top-down: threads partitioned over the sockets, then optimal
                pairs inside each socket, laid compactly on its caches
=============  ==============================================================

Generalisation beyond the study's trees (see :mod:`pinbench.place.domains` for slots,
sockets and sharing groups): a pair goes onto two slots of one sharing group,
whatever the group's size (two cores under a Core2 L2, two of the four
under a Nehalem L3, the two hyperthreads of a core when threads outnumber
cores); groups of odd size leave a slot that takes a single thread or, when
pairs outnumber the pair places, half a pair. Pairs are taken in the order of
their lowest thread ("successive thread pairs").

Sockets: by default every socket of the machine is a part; ``lpgp`` and
``gplp`` accept a number K of sockets (config names ``lpgp-K``, ``gplp-K``),
then the first K sockets in tree order are used, so they fill one NUMA node
before the next. Parts are balanced, as METIS's are: each socket takes at most
the smallest bound B >= ceil(N / K) at which the threads (or pairs) fit, so
16 threads on 4, 8 and 16 sockets of the 96-core machine put 4, 2 and 1 pair
on each socket, as the study's LPGP(4/8/16 sockets) variants. When a socket
of odd capacity cannot take whole pairs, ``lpgp`` breaks its lightest pairs.

Shared steps: lp-compact, lp-scatter and lpgp pair the threads alike (one
matching), gp and gplp split them over the sockets alike (one partition), and
``hierarchical`` starts from all five placements. A :class:`Memo` passed to
each strategy placed for one machine and matrix computes each of those once.

Cost: the matching is O(N^3) in the worst case (0.1-0.3 s for 1024 threads on
a dense matrix here, far less on sparse ones), the partition O(edges) plus
O(N^2) per refinement pass, laying out O(N * depth of the tree).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import numpy as np

from pinbench.graph.matching import thread_pairs
from pinbench.graph.partition import fits, partition
from pinbench.place.domains import (PlacementError, domain_tree, rank_path, scatter_order,
                                    sharing_groups, slots, socket_groups)
from pinbench.topology import Topology

Pairing = tuple[list[tuple[int, int]], int | None]
T = TypeVar("T")


class Memo:
    """The steps the graph strategies share on one machine and matrix, each computed once.

    Keys name a step and its parameters (``("pairs",)``: the optimal pairs,
    ``("split", sockets, seed)``: the threads of each socket, ``("pairs split",
    sockets, seed)``: lpgp's placement...); values are what the step returned.
    One memo serves the strategies placed for one (topology, matrix): the
    command line and the workflow pass one to every strategy they place
    (:func:`pinbench.place.record.make_placement`), so ``--strategy all``
    matches and partitions the threads once. Never share one between
    machines or matrices. Placements taken from it are the same as computed
    afresh, since every step is deterministic.
    """

    def __init__(self) -> None:
        self._found: dict[tuple, object] = {}

    def once(self, key: tuple, compute: Callable[[], T]) -> T:
        """``compute()`` the first time ``key`` is asked for; the same value every later time."""
        if key not in self._found:
            self._found[key] = compute()
        return self._found[key]  # type: ignore[return-value]


def lp_compact(topo: Topology, matrix: np.ndarray, memo: Memo | None = None) -> list[int]:
    """LP compact: optimal pairs on cores sharing a cache, filling the machine in tree order.

    ``matrix`` is the N x N affinity matrix; returns the PU of each thread.
    On the Core2 tree with W pairing (0, 3) and (1, 2): threads 0 and 3 share
    the first L2, threads 1 and 2 the second L2 of the same socket. ``memo``
    (:class:`Memo`) shares the steps with the other strategies of this matrix.
    """
    memo = Memo() if memo is None else memo
    return list(memo.once(("pairs laid", False),
                          lambda: _lp(topo, _pairing(matrix, memo), len(matrix), scatter=False)))


def lp_scatter(topo: Topology, matrix: np.ndarray, memo: Memo | None = None) -> list[int]:
    """LP scatter: optimal pairs on cores sharing a cache, one pair per socket before a second."""
    memo = Memo() if memo is None else memo
    return list(memo.once(("pairs laid", True),
                          lambda: _lp(topo, _pairing(matrix, memo), len(matrix), scatter=True)))


def gp(topo: Topology, matrix: np.ndarray, seed: int = 0, memo: Memo | None = None) -> list[int]:
    """GP: threads partitioned over every socket (balanced), each part on its socket in order.

    ``seed`` is METIS's; the same arguments give the same placement.
    """
    memo = Memo() if memo is None else memo

    def place() -> list[int]:
        n = len(matrix)
        sockets = socket_groups(topo, slots(topo, n), None, n)
        placed: dict[int, int] = {}
        for group, members in zip(sockets, _split(matrix, sockets, None, seed, memo)):
            placed.update(zip(members, group))
        return [placed[t] for t in range(n)]

    return list(memo.once(("split laid", seed), place))


def lpgp(topo: Topology, matrix: np.ndarray, sockets: int | None = None, seed: int = 0,
         memo: Memo | None = None) -> list[int]:
    """LPGP: optimal pairs, then pairs partitioned over ``sockets`` sockets (default: all)."""
    memo = Memo() if memo is None else memo
    return list(memo.once(("pairs split", sockets, seed),
                          lambda: _lpgp(topo, matrix, _pairing(matrix, memo), sockets, seed)))


def gplp(topo: Topology, matrix: np.ndarray, sockets: int | None = None, seed: int = 0,
         memo: Memo | None = None) -> list[int]:
    """GPLP: threads partitioned over ``sockets`` sockets (default: all), then optimal pairs."""
    memo = Memo() if memo is None else memo

    def place() -> list[int]:
        n = len(matrix)
        groups = socket_groups(topo, slots(topo, n), sockets, n)
        placed: dict[int, int] = {}
        for group, members in zip(groups, _split(matrix, groups, sockets, seed, memo)):
            pairs, single = thread_pairs(matrix[np.ix_(members, members)])
            placed.update(_lay_pairs(topo, group, [(members[a], members[b]) for a, b in pairs],
                                     [] if single is None else [members[single]], scatter=False))
        return [placed[t] for t in range(n)]

    return list(memo.once(("split paired", sockets, seed), place))


def study_placements(topo: Topology, matrix: np.ndarray, seed: int = 0,
                     memo: Memo | None = None) -> list[list[int]]:
    """lp-compact, lp-scatter, gp, lpgp and gplp on every socket, shared steps computed once."""
    memo = Memo() if memo is None else memo
    return [lp_compact(topo, matrix, memo), lp_scatter(topo, matrix, memo),
            gp(topo, matrix, seed, memo), lpgp(topo, matrix, None, seed, memo),
            gplp(topo, matrix, None, seed, memo)]


def _pairing(matrix: np.ndarray, memo: Memo) -> Pairing:
    """The optimal pairs of the threads (:func:`~pinbench.graph.matching.thread_pairs`), once."""
    return memo.once(("pairs",), lambda: thread_pairs(matrix))


def _lp(topo: Topology, pairing: Pairing, n: int, scatter: bool) -> list[int]:
    pairs, single = pairing
    placed = _lay_pairs(topo, slots(topo, n), pairs, [] if single is None else [single], scatter)
    return [placed[t] for t in range(n)]


def _lpgp(topo: Topology, matrix: np.ndarray, pairing: Pairing, sockets: int | None,
          seed: int) -> list[int]:
    n = len(matrix)
    groups = socket_groups(topo, slots(topo, n), sockets, n)
    pairs, single = pairing
    units = [list(pair) for pair in pairs] + ([] if single is None else [[single]])
    while not fits([len(group) for group in groups], [len(unit) for unit in units]):
        lightest = min((u for u in units if len(u) == 2), key=lambda u: (matrix[u[0], u[1]], u))
        units.remove(lightest)
        units += [[lightest[0]], [lightest[1]]]
    sizes = [len(unit) for unit in units]
    parts = partition(_unit_matrix(matrix, units), _capacities(groups, sizes), sizes, seed)
    placed: dict[int, int] = {}
    for k, group in enumerate(groups):
        mine = [unit for unit, part in zip(units, parts) if part == k]
        placed.update(_lay_pairs(topo, group, sorted(tuple(u) for u in mine if len(u) == 2),
                                 [u[0] for u in mine if len(u) == 1], scatter=False))
    return [placed[t] for t in range(n)]


def _unit_matrix(matrix: np.ndarray, units: list[list[int]]) -> np.ndarray:
    """The affinity between units of threads: the sum of their threads' (O(N^2), no product)."""
    order = np.array([t for unit in units for t in unit])
    starts = np.cumsum([0] + [len(unit) for unit in units[:-1]])
    rows = np.add.reduceat(np.asarray(matrix)[order], starts, axis=0)
    return np.add.reduceat(rows[:, order], starts, axis=1)


def _capacities(groups: list[list[int]], sizes: list[int]) -> list[int]:
    """Balanced capacities min(socket slots, B), B the smallest bound >= ceil(total / k) that fits."""
    for bound in range(-(-sum(sizes) // len(groups)), max(map(len, groups)) + 1):
        caps = [min(len(group), bound) for group in groups]
        if fits(caps, sizes):
            return caps
    raise PlacementError(f"items of sizes {sorted(sizes)} do not fit on {len(groups)} sockets")


def _split(matrix: np.ndarray, groups: list[list[int]], sockets: int | None, seed: int,
           memo: Memo) -> list[list[int]]:
    """The threads of each socket (increasing order), by a balanced partition of the matrix.

    ``groups`` are the slots of the ``sockets`` sockets used (None: all).
    """
    def split() -> list[list[int]]:
        n = len(matrix)
        parts = np.array(partition(matrix, _capacities(groups, [1] * n), seed=seed))
        return [np.flatnonzero(parts == k).tolist() for k in range(len(groups))]

    return memo.once(("split", sockets, seed), split)


def _lay_pairs(topo: Topology, pus: list[int], pairs: list[tuple[int, int]], singles: list[int],
               scatter: bool) -> dict[int, int]:
    """Pairs on two slots of one sharing group, in compact or scatter order; then the rest.

    Pair places are consecutive slots of a sharing group. In compact order
    they follow the tree; in scatter order the first place of every group
    comes before the second of any, groups ordered as ``scatter`` orders PUs.
    Pairs beyond the pair places and single threads take the remaining slots
    in the same order.
    """
    places = [(k, domain, group[2 * k:2 * k + 2])
              for domain, group in sharing_groups(domain_tree(topo, pus))
              for k in range(len(group) // 2)]
    if scatter:
        places.sort(key=lambda place: (place[0], tuple(reversed(rank_path(place[1].node)))))
    placed: dict[int, int] = {}
    for pair, (_, _, where) in zip(pairs, places):
        placed.update(zip(pair, where))
    taken = set(placed.values())
    free = [pu for pu in pus if pu not in taken]
    rest = [t for pair in pairs[len(places):] for t in pair] + singles
    placed.update(zip(rest, scatter_order(topo, free) if scatter else free))
    return placed
