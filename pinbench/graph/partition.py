"""k-way partition of an affinity graph into parts that fit their capacities.

The study's "GP" step (Mazouz, Touati, Barthou, section 3.2, after Karypis and
Kumar, "Multilevel k-way partitioning scheme for irregular graphs", JPDC 48,
1998): split the threads (or thread pairs) over the sockets so that the
affinity between parts, the *cut*, is as small as possible. Three stages:

1. **METIS** k-way (``pymetis.part_graph``), vertex weights = item sizes,
   target part weights proportional to the capacities, integer edge weights
   scaled into METIS's range and zero edges dropped (:mod:`pinbench.graph.edges`).
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
   item's swaps at once (O(n k)), the exact swaps (O(n) each) only
   of the items whose bound is positive, then applies the best candidate of
   every item in decreasing order of gain, each re-checked against the current
   state. Gains are integers, so the cut strictly decreases and the search
   ends, at a partition no single move or swap improves. This stage runs in C
   (``partition.c``, built by ``pinbench setup``, :mod:`pinbench.native`): the same steps
   in the same order as the numpy version it replaced (issue 16).

Time: METIS O(edges) plus, per refinement pass, O(n k) and O(n) per item
that may swap (a swap within one part gains -2 w <= 0, so with equal sizes no
swap is masked).
"""
from __future__ import annotations

import ctypes
import functools
from collections.abc import Sequence

import numpy as np
import pymetis

from pinbench import native
from pinbench.errors import PinbenchError
from pinbench.graph.edges import METIS_BOUND, integer_matrix



class PartitionError(PinbenchError, ValueError):
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
    without copying (weights fit: :data:`~pinbench.graph.edges.METIS_BOUND`)."""
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
    """Stage 3 (module doc), in C: ``partition.c``."""
    refined = np.array(parts, dtype=np.int64)
    if _library().refine_parts(len(weights), len(caps), np.array(weights, dtype=np.float64),
                               np.ascontiguousarray(sizes, dtype=np.int64),
                               np.ascontiguousarray(caps, dtype=np.int64), refined):
        raise MemoryError(f"refining a partition of {len(weights)} items")
    return refined


@functools.lru_cache(maxsize=1)
def _library() -> ctypes.CDLL:
    """``partition.c`` as ``pinbench setup`` built it (:func:`pinbench.native.built`), loaded,
    its entry point typed."""
    lib = ctypes.CDLL(str(native.built("partition")))
    longs = np.ctypeslib.ndpointer(np.int64, flags="C_CONTIGUOUS")
    lib.refine_parts.argtypes = [ctypes.c_int, ctypes.c_int,
                                 np.ctypeslib.ndpointer(np.float64, flags="C_CONTIGUOUS"),
                                 longs, longs, longs]
    lib.refine_parts.restype = ctypes.c_int
    return lib
