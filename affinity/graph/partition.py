"""k-way partition of an affinity graph into parts that fit their capacities.

The study's "GP" step (Mazouz, Touati, Barthou, section 3.2, after Karypis and
Kumar, "Multilevel k-way partitioning scheme for irregular graphs", JPDC 48,
1998): split the threads (or thread pairs) over the sockets so that the
affinity between parts, the *cut*, is as small as possible. Three stages:

1. **METIS** k-way (``pymetis.part_graph``), vertex weights = item sizes,
   target part weights proportional to the capacities, integer edge weights
   scaled into METIS's range and zero edges dropped (:mod:`affinity.graph.edges`).
   METIS balances parts only approximately and may collapse a small graph
   into one part, so its answer is a starting point, not a placement. A graph
   without edges, or with fewer items than parts (METIS refuses it), starts
   from the parts filled in order instead.
2. **Capacity repair.** Items are visited largest first, and among equal
   sizes the most attached to their METIS part first; an item stays in its
   part while it fits, otherwise it goes to the part with room it has the
   most affinity with. With sizes 1 and 2 (threads and pairs) this always
   succeeds when :func:`fits` holds: pairs are placed before singles, so a
   pair finds room while fewer pairs than ``sum(cap // 2)`` are placed, and
   singles fill whatever is left.
3. **Swap refinement** (in the manner of Kernighan and Lin, and Fiduccia and
   Mattheyses): moves of one item to a part with room and swaps of two items
   between parts, each kept only if it lowers the cut and respects the
   capacities. Each pass computes every move's gain and a bound on every
   item's swaps at once (O(n k) with numpy), the exact swaps (O(n) each) only
   of the items whose bound is positive, then applies the best candidate of
   every item in decreasing order of gain, each re-checked against the current
   state. Gains are integers, so the cut strictly decreases and the search
   ends, at a partition no single move or swap improves.

Time: METIS O(edges) plus, per refinement pass, O(n k) and O(n) per item
that may swap (a swap within one part gains -2 w <= 0, so with equal sizes no
swap is masked).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pymetis

from affinity.graph.edges import METIS_BOUND, integer_matrix


class PartitionError(ValueError):
    """The items cannot fit in the parts (see :func:`fits`)."""


def fits(capacities: Sequence[int], sizes: Sequence[int]) -> bool:
    """True when items of size 1 and 2 can be packed into parts of these capacities."""
    pairs = sum(1 for size in sizes if size == 2)
    return (sum(sizes) <= sum(capacities)
            and pairs <= sum(capacity // 2 for capacity in capacities))


def partition(matrix: np.ndarray, capacities: Sequence[int],
              sizes: Sequence[int] | None = None, seed: int = 0) -> list[int]:
    """Part index (0..k-1) of each item, every part within its capacity, the cut made small.

    ``matrix``: symmetric affinity between the n items (diagonal ignored).
    ``capacities``: the size each of the k parts may hold.
    ``sizes``: each item's size, 1 (a thread) or 2 (a pair); all 1 by default.
    ``seed``: METIS's random seed; the same arguments give the same partition.
    Raises PartitionError when the items cannot fit (see :func:`fits`).
    """
    weights = integer_matrix(matrix, METIS_BOUND)
    item_sizes = np.ones(len(weights), dtype=np.int64) if sizes is None else np.array(sizes)
    caps = np.array(capacities, dtype=np.int64)
    if not fits(caps, item_sizes):
        raise PartitionError(f"items of sizes {sorted(item_sizes.tolist())} do not fit "
                             f"in parts of capacities {caps.tolist()}")
    if len(caps) == 1:
        return [0] * len(weights)
    if weights.any() and len(weights) >= len(caps):
        parts = _metis(weights, item_sizes, caps, seed)
    else:
        parts = _first_fit(item_sizes, caps)
    parts = _repair(weights, item_sizes, caps, parts)
    return _refine(weights, item_sizes, caps, parts).tolist()


def cut(matrix: np.ndarray, parts: Sequence[int]) -> float:
    """The affinity between items in different parts."""
    parts = np.asarray(parts)
    return float(np.sum(np.triu(np.asarray(matrix, dtype=float) * (parts[:, None] != parts), 1)))


def _metis(weights: np.ndarray, sizes: np.ndarray, caps: np.ndarray, seed: int) -> np.ndarray:
    """METIS's parts. The graph goes in as arrays of METIS's index type, which pymetis passes
    without copying (weights fit: :data:`~affinity.graph.edges.METIS_BOUND`)."""
    index = pymetis.zero_copy_dtype()
    rows, cols = np.nonzero(weights)
    starts = np.zeros(len(weights) + 1, dtype=index)
    np.cumsum(np.bincount(rows, minlength=len(weights)), out=starts[1:])
    result = pymetis.part_graph(
        len(caps), pymetis.CSRAdjacency(starts, cols.astype(index)),
        vweights=sizes.astype(index), eweights=weights[rows, cols].astype(index),
        tpwgts=(caps / caps.sum()).tolist(), options=pymetis.Options(seed=seed % 2**31))
    return np.asarray(result.vertex_part, dtype=np.int64)


def _first_fit(sizes: np.ndarray, caps: np.ndarray) -> np.ndarray:
    """Parts filled in order: for a graph without edges, or fewer items than parts (METIS refuses)."""
    parts, load = np.zeros(len(sizes), dtype=np.int64), np.zeros(len(caps), dtype=np.int64)
    for item in np.argsort(-sizes, kind="stable"):
        part = int(np.argmax(load + sizes[item] <= caps))
        parts[item], load[part] = part, load[part] + sizes[item]
    return parts


def _repair(weights: np.ndarray, sizes: np.ndarray, caps: np.ndarray,
            parts: np.ndarray) -> np.ndarray:
    affinity = weights @ np.eye(len(caps), dtype=np.int64)[parts]  # item x part
    attached = affinity[np.arange(len(parts)), parts]
    repaired, load = parts.copy(), np.zeros(len(caps), dtype=np.int64)
    for item in np.lexsort((np.arange(len(parts)), -attached, -sizes)):
        part = parts[item]
        if load[part] + sizes[item] > caps[part]:
            room = np.flatnonzero(load + sizes[item] <= caps)
            part = room[np.lexsort((-(caps - load)[room], -affinity[item, room]))[0]]
        repaired[item], load[part] = part, load[part] + sizes[item]
    return repaired


def _refine(weights: np.ndarray, sizes: np.ndarray, caps: np.ndarray,
            parts: np.ndarray) -> np.ndarray:
    state = _Parts(weights.astype(float), sizes, caps, parts.copy())
    while True:
        move_gain, best_move, swap_gain, best_swap = state.gains()
        gain = np.maximum(move_gain, swap_gain)
        applied = False
        for a in np.argsort(-gain, kind="stable"):
            if gain[a] <= 0:
                break
            if move_gain[a] >= swap_gain[a]:
                applied |= state.move(a, best_move[a])
            else:
                applied |= state.swap(a, best_swap[a])
        if not applied:
            return state.parts


class _Parts:
    """A partition under refinement: parts, loads, and each item's affinity to each part."""

    def __init__(self, weights: np.ndarray, sizes: np.ndarray, caps: np.ndarray,
                 parts: np.ndarray):
        self.w, self.sizes, self.caps, self.parts = weights, sizes, caps, parts
        self.load = np.bincount(parts, sizes, minlength=len(caps)).astype(np.int64)
        self.affinity = weights @ np.eye(len(caps))[parts]  # [i, p]: weight between i and part p
        self.twice_w = 2 * weights
        self.mixed_sizes = bool(np.any(sizes != sizes[0]))

    def gains(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Each item's best move and best swap: (move gain, its part, swap gain, its partner).

        A gain is the cut's decrease; -inf where nothing is allowed. A swap of a
        and b gains g_a(part b) + g_b(part a) - 2 w[a][b] <= g_a(part b) + g_b(part a),
        g_x(p) the gain of moving x alone to p: only the items whose bound
        max over parts q of (g_a(q) + the best g_b(part a) of b in q) is positive get
        their row of swaps evaluated (O(n) each, O(n k) for all the bounds); the
        others' best swap gains at most 0, so the steps taken are the same.
        """
        parts, sizes, caps, load = self.parts, self.sizes, self.caps, self.load
        items = np.arange(len(parts))
        own = self.affinity[items, parts]
        alone = self.affinity - own[:, None]  # g_a(p), every part
        move = alone.copy()
        move[load[None, :] + sizes[:, None] > caps[None, :]] = -np.inf
        move[items, parts] = -np.inf
        best_move = move.argmax(axis=1)
        # into[q, p]: the best g_b(p) of an item b in part q
        into = np.full((len(caps), len(caps)), -np.inf)
        np.maximum.at(into, parts, alone)
        bound = alone + into.T[parts]  # [a, q]: g_a(q) + into[q, part a]
        bound[items, parts] = -np.inf
        rows = np.flatnonzero(bound.max(axis=1) > 0)
        swap_gain, best_swap = np.full(len(parts), -np.inf), np.zeros(len(parts), dtype=np.int64)
        if rows.size:
            # [a, b]: b's affinity to a's part. A swap inside one part gains -2 w[a][b] <= 0,
            # never applied, so with equal sizes no swap needs to be forbidden.
            swap = self.affinity[:, parts[rows]].T + self.affinity[rows][:, parts]
            swap -= own[rows, None]
            swap -= own[None, :]
            swap -= self.twice_w[rows]
            if self.mixed_sizes:
                grow = sizes[None, :] - sizes[rows, None]  # load change of a's part
                forbidden = parts[rows, None] == parts[None, :]
                forbidden |= load[parts[rows]][:, None] + grow > caps[parts[rows]][:, None]
                forbidden |= load[parts][None, :] - grow > caps[parts][None, :]
                swap[forbidden] = -np.inf
            best_swap[rows] = swap.argmax(axis=1)
            swap_gain[rows] = swap[np.arange(len(rows)), best_swap[rows]]
        return move[items, best_move], best_move, swap_gain, best_swap

    def move(self, a: int, target: int) -> bool:
        """Move item a to part ``target`` if it still fits there and still lowers the cut."""
        source = self.parts[a]
        if (source == target or self.load[target] + self.sizes[a] > self.caps[target]
                or self.affinity[a, target] <= self.affinity[a, source]):
            return False
        self._relocate(a, target)
        return True

    def swap(self, a: int, b: int) -> bool:
        """Swap items a and b if they are in different parts and the swap still fits and pays."""
        pa, pb = self.parts[a], self.parts[b]
        grow = self.sizes[b] - self.sizes[a]
        if pa == pb or self.load[pa] + grow > self.caps[pa] or self.load[pb] - grow > self.caps[pb]:
            return False
        aff = self.affinity
        if aff[a, pb] - aff[a, pa] + aff[b, pa] - aff[b, pb] - 2 * self.w[a, b] <= 0:
            return False
        self._relocate(a, pb)
        self._relocate(b, pa)
        return True

    def _relocate(self, item: int, target: int) -> None:
        source = self.parts[item]
        self.affinity[:, source] -= self.w[:, item]
        self.affinity[:, target] += self.w[:, item]
        self.load[source] -= self.sizes[item]
        self.load[target] += self.sizes[item]
        self.parts[item] = target
