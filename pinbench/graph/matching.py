"""Optimal thread pairs: maximum-weight matching of the affinity graph (Edmonds).

The study's "LP" step (Mazouz, Touati, Barthou, section 3.2): when a cache is
shared by two cores, grouping threads into parts of two that maximise the
affinity inside the parts is a maximum-weight perfect matching, solved exactly
in polynomial time by Edmonds' blossom algorithm (J. Edmonds, "Maximum
matching and a polyhedron with 0,1-vertices", J. Res. NBS 69B, 1965;
Galil's O(n^3) formulation, ACM Computing Surveys 1986).

Only the non-zero edges are given to the solver (affinity graphs are sparse)
with integer weights (:mod:`pinbench.graph.edges`). Threads the matching leaves
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
Time O(N^3) in the worst case: about 0.4 s for 512 threads and 2.5-6 s for
1024 on a complete graph with rustworkx here, much less on sparse graphs.

**Dense graphs: reduced-cost edge elimination** (backend ``"reduced"``, what
``"auto"`` uses above :data:`NETWORKX_UP_TO` threads when the graph has more
than :data:`DENSE_EDGES_PER_THREAD` edges per thread). It gives the blossom
algorithm only the edges that can be in a maximum-weight matching, found
from the linear relaxation, as reduced-cost fixing does in branch and bound
(the edge-elimination argument of Dantzig, Fulkerson and Johnson's TSP
method; for matchings, e.g. Applegate and Cook, "Solving large-scale
matching problems", DIMACS 1993). With W completed by zero-weight pairs (and
a zero vertex when N is odd), a maximum-weight matching is a maximum-weight
*perfect* matching of the complete graph. Its relaxation without odd-set
constraints is the assignment problem on W (the diagonal forbidden), halved:

1. an optimal assignment sigma (:func:`scipy.optimize.linear_sum_assignment`,
   O(N^3) but in C, 0.1 s for 1024 threads) and exact integer duals a, b
   (a_i + b_j >= W[i][j], equality on sigma) as shortest-path potentials of
   its residual graph (Bellman-Ford, O(N^2) per round, a few rounds);
2. y = (a + b) / 2 is a feasible dual of the matching relaxation
   (y_i + y_j >= W[i][j]), so the reduced costs r_ij = y_i + y_j - W[i][j]
   are >= 0 and every perfect matching M weighs sum(y) - sum over M of r;
3. given any matching of weight L, a matching of weight >= L has only edges
   with r_ij <= sum(y) - L: the blossom algorithm on those edges alone is
   exact on the whole graph. The blossom algorithm runs on the edges with
   r_ij <= s for s = 0, 2, 8, 32, ... (at most the gap sum(y) - L of the
   matching found so far); once its matching's gap is <= s it is optimal.

All of it in integers, so exact; an assignment whose duals do not settle (an
inexact float result) falls back to the whole graph. About 0.2-0.3 s for
1024 threads on a complete graph here.
"""
from __future__ import annotations

from typing import Literal

import numpy as np
import rustworkx as rx

from pinbench.graph.edges import MATCHING_BOUND, edges, integer_matrix

#: Largest thread count solved with networkx when the backend is "auto".
NETWORKX_UP_TO = 16
#: Above this many edges per thread, "auto" reduces the graph first (backend "reduced").
DENSE_EDGES_PER_THREAD = 16

Backend = Literal["auto", "networkx", "rustworkx", "reduced"]


def max_weight_matching(matrix: np.ndarray, backend: Backend = "auto") -> list[tuple[int, int]]:
    """The pairs (i < j) of a maximum-weight matching on the non-zero entries of ``matrix``.

    ``matrix`` is a symmetric N x N affinity matrix (diagonal ignored); weights
    are made integers by :func:`pinbench.graph.edges.integer_matrix`, exactly for
    whole numbers. Pairs are sorted. Threads may stay unmatched.
    """
    weights = integer_matrix(matrix, MATCHING_BOUND)
    rows, cols, values = edges(weights)
    n = len(matrix)
    if backend == "networkx" or (backend == "auto" and n <= NETWORKX_UP_TO):
        import networkx as nx  # here: it takes 0.5 s to import, which every Snakemake call paid

        graph = nx.Graph()
        graph.add_nodes_from(range(n))
        graph.add_weighted_edges_from(zip(rows.tolist(), cols.tolist(), values.tolist()))
        found = nx.max_weight_matching(graph, maxcardinality=False)
    elif backend == "reduced" or (backend == "auto" and len(rows) > DENSE_EDGES_PER_THREAD * n):
        found = _reduced_matching(weights, rows, cols, values)
    else:
        found = _rustworkx_matching(n, rows, cols, values)
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


def _rustworkx_matching(n: int, rows: np.ndarray, cols: np.ndarray,
                        values: np.ndarray) -> list[tuple[int, int]]:
    """rustworkx's exact maximum-weight matching of the graph with these integer edges."""
    graph = rx.PyGraph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from(list(zip(rows.tolist(), cols.tolist(), values.tolist())))
    return list(rx.max_weight_matching(graph, max_cardinality=False, weight_fn=int))


def _reduced_matching(weights: np.ndarray, rows: np.ndarray, cols: np.ndarray,
                      values: np.ndarray) -> list[tuple[int, int]]:
    """The exact matching on the edges the assignment relaxation cannot rule out (module doc)."""
    n = len(weights)
    twice_y = _twice_duals(weights)
    if twice_y is None:
        return _rustworkx_matching(n, rows, cols, values)
    twice_reduced = twice_y[rows] + twice_y[cols] - 2 * values
    bound = int(twice_y.sum())  # twice the relaxation's value: no matching weighs more than half
    twice_y = twice_y[:n]
    slack = 0
    while True:
        keep = twice_reduced <= slack
        found = _rustworkx_matching(n, rows[keep], cols[keep], values[keep])
        gap = bound - 2 * sum(int(weights[a, b]) for a, b in found)
        if gap <= slack:  # every edge of a heavier matching has a reduced cost <= gap
            return found
        slack = min(gap, max(2, 4 * slack))  # widen step by step: few edges, then exact


def _twice_duals(weights: np.ndarray) -> np.ndarray | None:
    """2y for a feasible dual y of the matching relaxation of value = the assignment's / 2.

    One entry per vertex, and one more for the zero vertex when N is odd. None when the float assignment is not optimal (its duals do not settle).
    """
    # Imported here: scipy.optimize takes 0.3 s to import, which only dense graphs need.
    from scipy.optimize import linear_sum_assignment

    n = len(weights)
    padded = np.zeros((n + n % 2,) * 2, dtype=np.int64)  # a zero vertex when N is odd
    padded[:n, :n] = weights
    m = len(padded)
    scores = padded.astype(float)
    np.fill_diagonal(scores, -2.0 * float(padded.sum()) - 1.0)  # never assigned to itself
    from scipy.optimize import linear_sum_assignment  # here: 0.6 s to import, see above

    _, sigma = linear_sum_assignment(scores, maximize=True)
    # Potentials a with a_k <= a_i + W[k][sigma k] - W[i][sigma k], sigma k != i: then
    # b_(sigma k) = W[k][sigma k] - a_k gives a_i + b_j >= W[i][j] for every i != j.
    on_sigma = padded[np.arange(m), sigma]
    step = on_sigma[None, :] - padded[:, sigma]
    step[sigma, np.arange(m)] = 2**61  # column sigma k is not row sigma k's to take
    potential = np.zeros(m, dtype=np.int64)
    for _ in range(m):
        relaxed = np.minimum(potential, (potential[:, None] + step).min(axis=0))
        if np.array_equal(relaxed, potential):
            b = np.empty(m, dtype=np.int64)
            b[sigma] = on_sigma - potential
            return potential + b
        potential = relaxed
    return None
