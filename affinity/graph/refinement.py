"""Swap refinement of a placement on the objective J: a 2-exchange local search.

Given the threads' slots and the cost matrix between slots
(:func:`affinity.graph.objective.cost_matrix`), repeatedly exchange the slots of two
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
O(N^2) plus O(H N) per applied step (before issue 16: a product O(N^2 M) over
the M slots per pass and dot products over the pass's moves per re-check; the
steps taken are the same). With integer weights every sum is exact. J is kept
up to date by the applied changes, so a search racing another placement
(``beat``) can give up early: the racing of candidates that stops those that
cannot win (Maron and Moore, "Hoeffding races: accelerating model selection
search for classification and function approximation", NIPS 1994), here with
a geometric extrapolation of the search's own gains instead of a statistical
bound.
"""
from __future__ import annotations

import numpy as np


#: Give up on a search whose J, after its passes' decreases extrapolated as a geometric
#: series, would stay above the J to beat by more than this many times that extrapolation.
GIVE_UP_MARGIN = 4.0


def refine(matrix: np.ndarray, costs: np.ndarray, positions: list[int],
           beat: float = np.inf) -> list[int]:
    """Slots after local search: ``positions[i]`` is thread i's index into the M x M ``costs``.

    ``costs`` holds the integer level costs of :func:`affinity.graph.objective.cost_matrix`;
    ``matrix`` is the N x N affinity (diagonal ignored), N <= M. The
    result has J no higher than the input's. Without ``beat``, no single
    exchange of two threads or move to a free slot lowers it further. With
    ``beat`` (the J of the best placement found elsewhere), the search stops
    early once it looks unable to reach it: after each pass from the second
    on, when the last two passes' decreases d1 > d2 > 0, continued as a
    geometric series (d2 q / (1 - q), q = d2 / d1, what the remaining passes
    would gain), fall more than :data:`GIVE_UP_MARGIN` times short of the gap
    between J and ``beat``. The decreases of a local search's passes shrink
    roughly geometrically (see :mod:`affinity.place.hierarchical` for the
    measurements); a search that stops early returns a J above ``beat``.
    """
    search = _Search(matrix, costs, positions)
    history = [search.cost]
    while search.one_pass():
        history.append(search.cost)
        if len(history) >= 3 and _hopeless(history[-3:], beat):
            break
    return search.pos.tolist()


def _hopeless(last: list[float], beat: float) -> bool:
    """True when J's last three values (one per pass) extrapolate to a J far above ``beat``."""
    first, second = last[0] - last[1], last[1] - last[2]
    if not 0 < second < first or last[2] <= beat:
        return False
    ratio = second / first
    return last[2] - beat > GIVE_UP_MARGIN * second * ratio / (1 - ratio)


def level_groups(costs: np.ndarray) -> list[np.ndarray]:
    """``groups[h - 2][x]``: the group (0, 1, ...) of slot x at level h = 2..H.

    The groups of level h are the classes of costs < h (level 1's are the
    slots themselves); each level's groups are unions of the level's below.
    """
    costs = np.asarray(costs)
    return [np.unique(np.argmax(costs < h, axis=1), return_inverse=True)[1].ravel()
            for h in range(2, int(costs.max(initial=0)) + 1)]


class _Search:
    """A placement under local search and A_h (h >= 2) transposed, one row per group (module doc).

    ``near[first[h] + g][a]`` is thread a's affinity to the threads in group g
    of level h + 2, ``row[h][x]`` the row of slot x's group; level 1's term is W.
    """

    def __init__(self, matrix: np.ndarray, costs: np.ndarray, positions: list[int]):
        self.w = np.array(matrix, dtype=float)
        np.fill_diagonal(self.w, 0.0)
        self.c = np.asarray(costs, dtype=np.int64)
        groups = level_groups(self.c)
        sizes = [int(group.max()) + 1 for group in groups]
        first = np.cumsum([0, *sizes])
        self.bounds = list(zip(first[:-1], first[1:]))
        self.row = np.array([first[h] + group for h, group in enumerate(groups)],
                            dtype=np.int64).reshape(len(groups), len(self.c))
        self.parent = [self.row[h + 1][np.argmax(self.row[h][:, None] == np.arange(lo, hi),
                                                  axis=0)]
                       for h, (lo, hi) in enumerate(self.bounds[:-1])]
        self.pos = np.array(positions, dtype=np.int64)
        self.owner = np.full(len(self.c), -1)
        self.owner[self.pos] = np.arange(len(self.pos))
        self.near = np.zeros((first[-1], len(self.pos)))
        below, members = self.w, self.row[0][self.pos] if groups else None
        for h, (lo, hi) in enumerate(self.bounds):  # each level from the one below
            order = np.argsort(members, kind="stable")
            starts = np.flatnonzero(np.r_[True, members[order][1:] != members[order][:-1]])
            self.near[members[order][starts]] = np.add.reduceat(below[order], starts, axis=0)
            if h + 1 < len(self.bounds):
                below, members = self.near[lo:hi], self.parent[h]
        self.twice_wc = 2 * self.w * self.c[np.ix_(self.pos, self.pos)]
        self.moved: list[int] = []  # threads whose row and column of twice_wc are out of date
        self.tolerance = 1e-12 * self.w.sum() * max(self.c.max(initial=0), 1)
        self.cost = float(self.twice_wc.sum()) / 4  #: J of the placement, kept up to date

    def _above(self) -> np.ndarray:
        """Rows of level 2's groups: a's affinity summed over the levels >= 2 of each group."""
        lo, hi = self.bounds[-1]
        total = self.near[lo:hi]
        for (lo, hi), parent in zip(reversed(self.bounds[:-1]), reversed(self.parent)):
            total = self.near[lo:hi] + total[parent - hi]
        return total

    def one_pass(self) -> bool:
        """Apply the best exchange or move of every thread that still pays; False if none did."""
        items = np.arange(len(self.pos))
        if self.moved:
            moved = np.unique(self.moved)
            self.twice_wc[moved] = 2 * self.w[moved] * self.c[np.ix_(self.pos[moved], self.pos)]
            self.twice_wc[:, moved] = self.twice_wc[moved].T
            self.moved.clear()
        above = self._above() if self.bounds else np.zeros((1, len(self.pos)))
        first = self.bounds[0][0] if self.bounds else 0
        lowest = self.row[0] - first if self.bounds else np.zeros(len(self.c), dtype=np.int64)
        there = above[lowest[self.pos]]  # [b, a]: a's affinity near b's slot
        there += self.w
        own = there[items, items].copy()  # a's affinity near its own slot
        swap = self.twice_wc - there
        swap -= there.T
        swap += own[:, None]
        swap += own[None, :]
        np.fill_diagonal(swap, np.inf)
        partner = swap.argmin(axis=1)
        swap_delta = swap[items, partner]
        free = np.flatnonzero(self.owner < 0)
        if free.size:
            moves = own[:, None] - above[lowest[free]].T
            target = free[moves.argmin(axis=1)]
            move_delta = moves.min(axis=1)
        else:
            target, move_delta = partner, np.full(len(items), np.inf)
        delta = np.minimum(swap_delta, move_delta)
        applied = False
        for a in np.argsort(delta, kind="stable"):
            if delta[a] >= -self.tolerance:
                break
            if move_delta[a] <= swap_delta[a]:
                applied |= self._move(a, target[a])
            else:
                applied |= self._swap(a, partner[a])
        return applied

    def _relocate(self, thread: int, slot: int) -> None:
        source, target = self.row[:, self.pos[thread]], self.row[:, slot]
        changed = source != target
        self.near[source[changed]] -= self.w[thread]
        self.near[target[changed]] += self.w[thread]
        self.pos[thread] = slot
        self.owner[slot] = thread
        self.moved.append(thread)

    def _move(self, a: int, slot: int) -> bool:
        here = self.pos[a]
        if self.owner[slot] >= 0:
            return False
        near = self.near[self.row[:, [here, slot]], a].sum(axis=0)
        change = near[0] - near[1]
        if change < -self.tolerance:
            self.owner[here] = -1
            self._relocate(a, slot)
            self.cost += change
            return True
        return False

    def _swap(self, a: int, b: int) -> bool:
        p, q = self.pos[a], self.pos[b]
        # Per level: a near p's group, b near q's (kept), a near q's, b near p's (taken).
        near = self.near[self.row[:, [p, q, q, p]], [a, b, a, b]].sum(axis=0)
        change = near[0] + near[1] - near[2] - near[3] + 2 * self.w[a, b] * (self.c[p, q] - 1)
        if change < -self.tolerance:
            self._relocate(a, q)
            self._relocate(b, p)
            self.cost += change
            return True
        return False
