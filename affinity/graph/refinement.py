"""Swap refinement of a placement on the objective J: a 2-exchange local search.

Given the threads' slots and the cost matrix between slots
(:func:`affinity.graph.objective.cost_matrix`), repeatedly exchange the slots of two
threads, or move a thread to a free slot, whenever that lowers J, until no
single exchange or move does. This is the refinement step of graph mappers
(Kernighan and Lin's exchanges, as Scotch and TreeMatch apply them after
mapping), here on J itself rather than on the cut of one level.

With S[a][x] = sum_k W[a][k] * C[slot(k)][x], the cost thread a would pay at
slot x, the changes of J are

    move a to a free slot x:  S[a][x] - S[a][slot(a)]
    exchange a and b:         S[a][slot(b)] - S[a][slot(a)] + S[b][slot(a)] - S[b][slot(b)]
                              + 2 W[a][b] C[slot(a)][slot(b)]

(the last term puts back the pair a-b, whose cost an exchange does not change).
S costs one matrix product, O(N^2 M) for N threads and M slots. Each pass
evaluates every exchange and move at once (O(N^2)), then applies the best one
of every thread in decreasing order of gain, each re-checked exactly against
the current placement, and brings S up to date with one product; passes stop
when none applies. Every applied step lowers J by more than a
relative tolerance, so the search ends.
"""
from __future__ import annotations

import numpy as np


def refine(matrix: np.ndarray, costs: np.ndarray, positions: list[int]) -> list[int]:
    """Slots after local search: ``positions[i]`` is thread i's index into the M x M ``costs``.

    ``costs`` holds the integer level costs of :func:`affinity.graph.objective.cost_matrix`;
    ``matrix`` is the N x N affinity (diagonal ignored), N <= M. The result
    has J no higher than the input's, and no single exchange of two threads
    or move to a free slot lowers it further.
    """
    search = _Search(matrix, costs, positions)
    while search.one_pass():
        pass
    return search.pos.tolist()


class _Search:
    """A placement under local search and the cost S[a][x] of each thread at each slot.

    Within a pass, S stays as it was at the start of the pass, and the
    threads moved since are kept as a list of (thread, cost change of its
    slot): the current S[a][x] is S[a][x] + sum over moves of
    W[a][thread] * change[x], a dot product per re-check. The pass ends by
    adding the net move of every thread to S in one matrix product, instead
    of one rank-one update (O(N M)) per applied exchange.
    """

    def __init__(self, matrix: np.ndarray, costs: np.ndarray, positions: list[int]):
        self.w = np.array(matrix, dtype=float)
        np.fill_diagonal(self.w, 0.0)
        self.twice_w = 2 * self.w
        self.c = np.asarray(costs, dtype=float)
        self.c_small = np.asarray(costs, dtype=np.int16)  # levels: cheaper to gather N^2 of
        self.pos = np.array(positions, dtype=np.int64)
        self.owner = np.full(len(self.c), -1)
        self.owner[self.pos] = np.arange(len(self.pos))
        self.s = self.w @ self.c[self.pos]
        self.tolerance = 1e-12 * self.w.sum() * max(self.c.max(initial=0.0), 1.0)
        # The moves of the current pass: a pass visits N threads, each moving at most 2.
        self.moved = np.zeros(2 * len(self.pos), dtype=np.int64)  # the thread of move k
        self.changes = np.zeros((len(self.c), 2 * len(self.pos)))  # column k: its cost change
        self.count = 0

    def one_pass(self) -> bool:
        """Apply the best exchange or move of every thread that still pays; False if none did."""
        items = np.arange(len(self.pos))
        start = self.pos.copy()
        own = self.s[items, self.pos]
        join = self.s[:, self.pos]
        join -= own[:, None]  # [a, b]: change if a alone took b's slot
        swap = join + join.T
        swap += self.twice_w * self.c_small[np.ix_(self.pos, self.pos)]
        np.fill_diagonal(swap, np.inf)
        partner = swap.argmin(axis=1)
        swap_delta = swap[items, partner]
        free = np.flatnonzero(self.owner < 0)
        if free.size:
            moves = self.s[:, free] - own[:, None]
            target = free[moves.argmin(axis=1)]
            move_delta = moves.min(axis=1)
        else:
            target, move_delta = partner, np.full(len(items), np.inf)
        delta = np.minimum(swap_delta, move_delta)
        for a in np.argsort(delta, kind="stable"):
            if delta[a] >= -self.tolerance:
                break
            if move_delta[a] <= swap_delta[a]:
                self._move(a, target[a])
            else:
                self._swap(a, partner[a])
        applied, self.count = self.count, 0
        changed = np.flatnonzero(self.pos != start)
        self.s += self.w[:, changed] @ (self.c[self.pos[changed]] - self.c[start[changed]])
        return applied > 0

    def _current(self, threads: tuple[int, int], slots: tuple[int, int]) -> np.ndarray:
        """S[threads][:, slots] (2 x 2) as it is now, the moves of this pass included."""
        now = np.array([[self.s[t, x] for x in slots] for t in threads])
        if self.count:
            moved = self.moved[:self.count]
            now += np.stack([self.w[t, moved] for t in threads]) @ \
                self.changes[slots, :self.count].T
        return now

    def _record(self, thread: int, source: int, target: int) -> None:
        self.changes[:, self.count] = self.c[target] - self.c[source]
        self.moved[self.count] = thread
        self.count += 1
        self.pos[thread] = target
        self.owner[target] = thread

    def _move(self, a: int, slot: int) -> None:
        here = self.pos[a]
        if self.owner[slot] >= 0:
            return
        now = self._current((a, a), (here, slot))
        if now[0, 1] - now[0, 0] < -self.tolerance:
            self.owner[here] = -1
            self._record(a, here, slot)

    def _swap(self, a: int, b: int) -> None:
        p, q = self.pos[a], self.pos[b]
        now = self._current((a, b), (p, q))
        change = now[0, 1] - now[0, 0] + now[1, 0] - now[1, 1] + 2 * self.w[a, b] * self.c[p, q]
        if change < -self.tolerance:
            self._record(a, p, q)
            self._record(b, q, p)
