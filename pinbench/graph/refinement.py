"""Swap refinement of a placement on the objective J: a 2-exchange local search.

Given the threads' slots and the cost matrix between slots
(:func:`pinbench.graph.objective.cost_matrix`), repeatedly exchange the slots of two
threads, or move a thread to a free slot, whenever that lowers J, until no
single exchange or move does. This is the refinement step of graph mappers
(Kernighan and Lin's exchanges, as Scotch and TreeMatch apply them after
mapping), here on J itself rather than on the cut of one level.

**Levels.** The costs are heights in a tree (an ultrametric), so
C[x][y] = the number of levels h = 1..H at which x and y lie in different
groups, the groups of level h being the classes of C < h (level 1's are the
single slots). With A_h[a][g] the affinity of thread a to the threads in group
g of level h (A_1[a][{x}] = W[a][thread at x]), the cost thread a would pay
at slot x is

    S[a][x] = sum_h (total_a - A_h[a][g_h(x)]),

and the changes of J are

    move a to a free slot x:  S[a][x] - S[a][slot(a)]
    exchange a and b:         S[a][slot(b)] - S[a][slot(a)] + S[b][slot(a)] - S[b][slot(b)]
                              + 2 W[a][b] C[slot(a)][slot(b)]

(the last term puts back the pair a-b, whose cost an exchange does not change).
These are the per-group affinity sums that EagerMap (Cruz et al., "EagerMap: a
task mapping algorithm to improve communication and load balancing in clusters
of multicore systems", ACM TOPC 2019) groups threads by, kept for every level
at once. A_h for h >= 2 is built from the level below (O(N^2) for level 2,
O(groups x N) above); a thread that changes group at level h changes two of
its rows, O(N) each, so every change of J is evaluated exactly in O(H) at any
time. Each pass evaluates every exchange and move at once (the sums over the
levels accumulated from the top, one gather of N x N), then applies the best
one of every thread in decreasing order of gain, each re-checked exactly
against the current placement; passes stop when none applies. Every applied
step lowers J by more than a relative tolerance, so the search ends. Per pass
O(N^2 + N G) (G groups in all) plus O(H N) per applied step (before issue 16: a
product O(N^2 M) over the M slots per pass and dot products over the pass's moves
per re-check; the steps taken are the same). With integer weights every sum is exact. J is kept
up to date by the applied changes, so a search racing another placement
(``beat``) can give up early: the racing of candidates that stops those that
cannot win (Maron and Moore, "Hoeffding races: accelerating model selection
search for classification and function approximation", NIPS 1994), here with
a geometric extrapolation of the search's own gains instead of a statistical
bound.

**In C.** The search runs in ``refinement.c`` (built by ``pinbench setup``,
:mod:`pinbench.native`, called through ctypes): the same passes, the same order of
steps, the same ties (the lowest thread, partner and free slot first), so the same
placements as the numpy version it replaced, checked on random matrices with free
slots and races; a pass at 1,024 threads takes a few milliseconds where numpy's took
about 20.
"""
from __future__ import annotations

import ctypes
import functools

import numpy as np

from pinbench import native
from pinbench.errors import PinbenchError

#: Give up on a search whose J, after its passes' decreases extrapolated as a geometric
#: series, would stay above the J to beat by more than this many times that extrapolation.
GIVE_UP_MARGIN = 4.0



class RefinementError(PinbenchError, RuntimeError):
    """The C search cannot be built, or ran out of memory; one-line message."""


class Refinement:
    """One affinity matrix and the slots' costs, prepared once for many searches and sums of J.

    ``matrix`` is the N x N affinity (diagonal ignored); ``costs`` the M x M integer level
    costs of :func:`pinbench.graph.objective.cost_matrix` between the slots, N <= M. The
    float copy of the matrix, the slots' level groups and the byte costs are built here
    once (a few milliseconds at 1,024 threads), not per search.
    """

    def __init__(self, matrix: np.ndarray, costs: np.ndarray) -> None:
        costs = np.asarray(costs)
        self._w = np.array(matrix, dtype=np.float64, order="C")
        np.fill_diagonal(self._w, 0.0)
        self._gid = np.array(level_groups(costs), dtype=np.int32).reshape(-1, len(costs))
        self._ngroups = np.ascontiguousarray(self._gid.max(axis=1, initial=-1) + 1,
                                             dtype=np.int32)
        self._costs = np.ascontiguousarray(costs, dtype=np.uint8)

    def refine(self, positions: list[int], beat: float = np.inf) -> list[int]:
        """Slots after local search: ``positions[i]`` is thread i's index into the slots.

        The result has J no higher than the input's. Without ``beat``, no single
        exchange of two threads or move to a free slot lowers it further. With
        ``beat`` (the J of the best placement found elsewhere), the search stops
        early once it looks unable to reach it: after each pass from the second
        on, when the last two passes' decreases d1 > d2 > 0, continued as a
        geometric series (d2 q / (1 - q), q = d2 / d1, what the remaining passes
        would gain), fall more than :data:`GIVE_UP_MARGIN` times short of the gap
        between J and ``beat``. The decreases of a local search's passes shrink
        roughly geometrically (see :mod:`pinbench.place.hierarchical` for the
        measurements); a search that stops early returns a J above ``beat``.
        """
        pos = np.array(positions, dtype=np.int32)
        passes = np.zeros(1, dtype=np.int32)
        found = _library().refine(len(self._w), len(self._costs), len(self._gid), self._w,
                                  self._gid, self._ngroups, self._costs, pos, beat,
                                  GIVE_UP_MARGIN, passes)
        if found < 0:
            raise RefinementError(f"out of memory refining the placement of {len(self._w)} threads")
        return pos.tolist()

    def cost(self, positions: list[int]) -> float:
        """J of thread i on slot ``positions[i]``, summed in C in one fixed order (O(N^2)).

        Integer weights give the exact J, so the same as
        :func:`pinbench.graph.objective.placement_cost`.
        """
        return _library().placement_cost(len(self._w), len(self._costs), self._w, self._costs,
                                         np.array(positions, dtype=np.int32))


def level_groups(costs: np.ndarray) -> list[np.ndarray]:
    """``groups[h - 2][x]``: the group (0, 1, ...) of slot x at level h = 2..H.

    The groups of level h are the classes of costs < h (level 1's are the
    slots themselves); each level's groups are unions of the level's below.
    """
    costs = np.asarray(costs)
    return [np.unique(np.argmax(costs < h, axis=1), return_inverse=True)[1].ravel()
            for h in range(2, int(costs.max(initial=0)) + 1)]


@functools.lru_cache(maxsize=1)
def _library() -> ctypes.CDLL:
    """``refinement.c`` as ``pinbench setup`` built it (:func:`pinbench.native.built`), loaded,
    its entry point typed."""
    lib = ctypes.CDLL(str(native.built("refinement")))
    ints, doubles = np.ctypeslib.ndpointer(np.int32), np.ctypeslib.ndpointer(np.float64)
    lib.refine.argtypes = [ctypes.c_int] * 3 + [doubles, ints, ints,
                                                np.ctypeslib.ndpointer(np.uint8), ints,
                                                ctypes.c_double, ctypes.c_double, ints]
    lib.refine.restype = ctypes.c_double
    lib.placement_cost.argtypes = [ctypes.c_int, ctypes.c_int, doubles,
                                   np.ctypeslib.ndpointer(np.uint8), ints]
    lib.placement_cost.restype = ctypes.c_double
    return lib
