"""hierarchical: threads grouped level by level over every sharing level of the tree, refined on J.

The study's LPGP and GPLP use two levels of the machine (a cache shared by
two cores, the socket). This strategy uses all of them, at any arity: NUMA
groups, sockets, dies, L3s of any number of cores, L2 pairs, the hyperthreads
of a core. It minimises the objective J of :mod:`pinbench.graph.objective` in
three steps.

1. **Top-down tree mapping**, as Scotch maps a process graph onto a
   tree-shaped architecture by recursive partitioning (Pellegrini and Roman,
   "Experimental analysis of the dual recursive bipartitioning algorithm for
   static mapping", 1996); TreeMatch (Jeannot, Mercier, Tessier, IEEE TPDS
   2014) and EagerMap (Cruz et al., 2015) build the same groups bottom-up.
   Starting at the root domain with every thread, each sharing domain
   (:func:`pinbench.place.domains.domain_tree`) splits its threads among its
   children with :func:`pinbench.graph.partition.partition`, one part per child,
   each within the child's slots. A domain uses the fewest children that hold
   its threads (the largest first), since threads kept under one child never
   pay the domain's cost. A domain whose children are single slots places its
   threads in order: every pair there costs the same.
2. **Portfolio.** The study's five strategies on every socket
   (:func:`pinbench.place.study.study_placements`) and ``compact`` and
   ``scatter`` over the slots are taken as further starting points.
3. **Swap refinement on J** (:meth:`pinbench.graph.refinement.Refinement.refine`) of the
   top-down placement and of the :data:`REFINED_STARTS` - 1 other starting
   points of lowest J, in that order; the refined placement of lowest J is
   returned (the top-down one on ties, then the others in the order above).
   The others race against the best found so far: a search whose shrinking
   gains per pass, extrapolated, fall far short of reaching it gives up
   (``beat`` of :meth:`~pinbench.graph.refinement.Refinement.refine`).

Why the portfolio: top-down partitioning decides the upper levels first and
cannot undo a poor early cut; bottom-up pairing (LPGP) fixes pairs that may
split sockets badly; a local search ends in the local optimum of its start.
Refining structurally different starts and keeping the best makes the result
no worse than any of them (refinement never raises J, and the start of lowest
J is always among those refined), so hierarchical's J is
never above that of lp-compact, lp-scatter, gp, lpgp or gplp with their
default sockets, nor compact's on a tree without SMT. Refinement is the costly
step (O(N^2) per pass, tens of passes on a dense matrix), and starts far
above the best rarely refine to the best. Measured on 180 random matrices of
8 threads per machine, the share of brute-force optima found when refining
the top-down start and the k - 1 best others: k = 1: 88% (Core2) and 98%
(Nehalem); k = 3: 98% and 99%; k = 5 and all eight: 100%.

Why the race: on a dense matrix the top-down start usually wins and the
others spent 20-30 passes each refining to a J they never beat (100 passes
in all at 1,024 threads); their gaps to the best close geometrically, so
after two passes the extrapolation already shows it. Giving up when the
extrapolated remaining gain is under a quarter of the gap
(:data:`~pinbench.graph.refinement.GIVE_UP_MARGIN`) takes 15-25 passes in all
and reached the same J as refining every start to its end on all 48 cases of
perf/eagermap_compare.py and on 56 more seeds (margin 1 did too on the 48;
1/4 did not on two of them). A start that gives up still has J no higher than where it
began, so the bounds above hold.

Cost: the five strategies' (METIS partitions and the matching; shared with
them through ``memo`` when they were placed for the same matrix), plus one
partition per domain of the tree and, per refined start, O(N^2) to build the
per-level affinity sums and O(N^2) per refinement pass for N threads (the
search runs in C, ``refinement.c``: a few milliseconds per pass at 1,024
threads). For 1,024 threads on this shared 2-core machine (load about 3):
0.3-0.85 s with planted, stencil and sparse matrices, 0.9-1.4 s with dense
ones, now nearly all of it METIS (the study's partitions and the top-down
ones), the partitions' Python swap refinement and the matching
(perf/eagermap_compare.py).
"""
from __future__ import annotations

import numpy as np

from pinbench.graph.objective import cost_matrix
from pinbench.graph.partition import partition
from pinbench.graph.refinement import Refinement
from pinbench.place.domains import Domain, domain_tree, scatter_order, slots
from pinbench.place.study import Memo, study_placements
from pinbench.topology import Topology

#: How many starting points are refined: the top-down one and the best others.
REFINED_STARTS = 5


def hierarchical(topo: Topology, matrix: np.ndarray, seed: int = 0,
                 memo: Memo | None = None) -> list[int]:
    """The PU of each thread: the best refined placement among the top-down mapping and the portfolio.

    ``matrix`` is the N x N affinity matrix; ``seed`` is METIS's. The same
    arguments give the same placement. ``memo`` (:class:`pinbench.place.study.Memo`)
    holds the study's placements when they were computed for this matrix already.
    """
    n = len(matrix)
    pus = slots(topo, n)
    index = {pu: k for k, pu in enumerate(pus)}
    search = Refinement(matrix, cost_matrix(topo, pus))
    own, *others = [[index[pu] for pu in start] for start in (
        top_down(topo, matrix, seed), *study_placements(topo, matrix, seed, memo),
        pus[:n], scatter_order(topo, pus)[:n])]
    others.sort(key=search.cost)  # stable: ties keep the order above
    best = search.refine(own)
    best_j = search.cost(best)
    for start in others[:REFINED_STARTS - 1]:  # each may give up once it cannot beat the best
        found = search.refine(start, beat=best_j)
        if (found_j := search.cost(found)) < best_j:  # ties keep the earlier
            best, best_j = found, found_j
    return [pus[k] for k in best]


def top_down(topo: Topology, matrix: np.ndarray, seed: int = 0) -> list[int]:
    """The PU of each thread by recursive partitioning down every level of the tree (step 1)."""
    n = len(matrix)
    placed: dict[int, int] = {}

    def descend(domain: Domain, threads: list[int]) -> None:
        if not threads:
            return
        if all(not child.children for child in domain.children):
            placed.update(zip(threads, domain.slots))
            return
        by_size = sorted(domain.children, key=lambda child: -len(child.slots))
        used = next(k for k in range(1, len(by_size) + 1)
                    if sum(len(child.slots) for child in by_size[:k]) >= len(threads))
        chosen = [child for child in domain.children if child in by_size[:used]]
        parts = partition(matrix[np.ix_(threads, threads)], [len(c.slots) for c in chosen],
                          seed=seed)
        for k, child in enumerate(chosen):
            descend(child, [t for t, part in zip(threads, parts) if part == k])

    descend(domain_tree(topo, slots(topo, n)), list(range(n)))
    return [placed[t] for t in range(n)]
