"""Optimal thread pairs: maximum-weight matching of the affinity graph (Edmonds).

The study's "LP" step (Mazouz, Touati, Barthou, section 3.2): when a cache is
shared by two cores, grouping threads into parts of two that maximise the
affinity inside the parts is a maximum-weight perfect matching, solved exactly
in polynomial time by Edmonds' blossom algorithm (J. Edmonds, "Maximum
matching and a polyhedron with 0,1-vertices", J. Res. NBS 69B, 1965;
Galil's O(n^3) formulation, ACM Computing Surveys 1986).

Only the non-zero edges are given to the solver (affinity graphs are sparse)
with integer weights (:mod:`affinity.graph.edges`). Threads the matching leaves
alone are then paired among themselves: on the complete affinity graph their
edges weigh 0, so the result is a maximum-weight *perfect* matching of it
(one thread stays single when N is odd).

Why ``maxcardinality=False``: asking for maximum cardinality on the *sparse*
graph would be a different, worse problem. On the path a-b-c-d weighted
1, 10, 1 the only perfect matching of the sparse graph is {ab, cd}, weight 2,
while {bc} completed by the zero pair {ad} weighs 10. Completing a maximum-
weight matching with zero-weight pairs is what maximum cardinality on the
complete graph would give, at the cost of the sparse graph.

Two solvers, one algorithm: networkx's ``max_weight_matching`` (pure Python,
the reference) up to :data:`NETWORKX_UP_TO` threads (the study's machines
ran 4 to 16), rustworkx's (the same primal-dual algorithm in Rust, 100 times
faster from 64 threads on) above. Both are exact,
so they reach the same total weight; the pairs may differ between optima.
Time O(N^3) in the worst case: about 0.4 s for 512 threads and 4.4 s for 1024
on a complete graph with rustworkx here, much less on sparse graphs.
"""
from __future__ import annotations

from typing import Literal

import networkx as nx
import numpy as np
import rustworkx as rx

from affinity.graph.edges import MATCHING_BOUND, edges, integer_matrix

#: Largest thread count solved with networkx when the backend is "auto".
NETWORKX_UP_TO = 16

Backend = Literal["auto", "networkx", "rustworkx"]


def max_weight_matching(matrix: np.ndarray, backend: Backend = "auto") -> list[tuple[int, int]]:
    """The pairs (i < j) of a maximum-weight matching on the non-zero entries of ``matrix``.

    ``matrix`` is a symmetric N x N affinity matrix (diagonal ignored); weights
    are made integers by :func:`affinity.graph.edges.integer_matrix`, exactly for
    whole numbers. Pairs are sorted. Threads may stay unmatched.
    """
    rows, cols, weights = edges(integer_matrix(matrix, MATCHING_BOUND))
    triples = list(zip(rows.tolist(), cols.tolist(), weights.tolist()))
    n = len(matrix)
    if backend == "networkx" or (backend == "auto" and n <= NETWORKX_UP_TO):
        graph = nx.Graph()
        graph.add_nodes_from(range(n))
        graph.add_weighted_edges_from(triples)
        found = nx.max_weight_matching(graph, maxcardinality=False)
    else:
        graph = rx.PyGraph()
        graph.add_nodes_from(range(n))
        graph.add_edges_from(triples)
        found = rx.max_weight_matching(graph, max_cardinality=False, weight_fn=lambda w: w)
    return sorted(tuple(sorted(pair)) for pair in found)


def thread_pairs(matrix: np.ndarray,
                 backend: Backend = "auto") -> tuple[list[tuple[int, int]], int | None]:
    """A maximum-weight perfect pairing of the N threads, and the single thread when N is odd.

    The maximum-weight matching, with the threads it leaves alone paired in
    increasing order (their affinity is 0). Pairs are (i < j), sorted.

    >>> thread_pairs(np.array([[0, 1, 0, 0], [1, 0, 10, 0], [0, 10, 0, 1], [0, 0, 1, 0]]))
    ([(0, 3), (1, 2)], None)
    """
    pairs = max_weight_matching(matrix, backend)
    matched = {t for pair in pairs for t in pair}
    alone = [t for t in range(len(matrix)) if t not in matched]
    pairs += list(zip(alone[0::2], alone[1::2]))
    return sorted(pairs), alone[-1] if len(alone) % 2 else None
