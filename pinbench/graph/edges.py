"""Integer edge weights of an affinity matrix, for the graph algorithms that need integers.

Edmonds' matching is exact only on integer weights (floating-point rounding
breaks the primal-dual bookkeeping of blossoms), and METIS takes only
positive integer edge weights of its index type. Raw access counts can exceed
2**31, and matrices may hold fractions, so :func:`integer_matrix` scales the
weights so that their sum stays under a bound, rounds them, and zeroes the
diagonal (a thread's affinity with itself is no edge). Weights that round to
zero are then no edge at all: :func:`edges` lists only the others, as the
affinity graphs of real programs are sparse.

A matrix of whole numbers whose sum is under the bound is left exactly as it
is, so the algorithms are exact on the matrices the tracers write.
"""
from __future__ import annotations

import numpy as np

#: Bound on the sum of all entries for METIS: its idx_t may be 32 bits wide.
METIS_BOUND = 2**31 - 1
#: Bound on the sum of all entries for the matching: totals stay exact in a double and an int64.
MATCHING_BOUND = 2**53


def integer_matrix(matrix: np.ndarray, bound: int) -> np.ndarray:
    """The matrix as int64 with a zero diagonal, scaled so its entries sum to at most ``bound``.

    Whole-number matrices under the bound are returned unchanged (apart from the
    diagonal); others are scaled by ``bound / sum`` and rounded down, so the
    sum never exceeds the bound. O(N^2).

    >>> integer_matrix(np.array([[9, 0.5], [0.5, 9]]), 100).tolist()
    [[0, 50], [50, 0]]
    """
    weights = np.array(matrix, dtype=float)
    np.fill_diagonal(weights, 0.0)
    total = weights.sum()
    whole = np.all(np.mod(weights, 1) == 0)
    if total > 0 and (total > bound or not whole):
        weights = np.floor(weights * (bound / total))
    return weights.astype(np.int64)


def edges(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The non-zero edges (i < j) of a symmetric integer matrix: rows, columns, weights."""
    rows, cols = np.nonzero(np.triu(weights, 1))
    return rows, cols, weights[rows, cols]
