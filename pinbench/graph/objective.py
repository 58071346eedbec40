"""The objective J of a placement: affinity weighted by how far apart the tree puts threads.

    J(placement) = sum over thread pairs i < j of  W[i][j] * cost(lca(PU(i), PU(j)))

where lca is the lowest object of the hwloc tree holding both PUs
(:meth:`Topology.lowest_shared`) and the cost of an object is its *height in
the tree of sharing domains*:

- a PU costs 0 (never the lca of two threads, which run on distinct PUs);
- an object with one child costs what its child costs (it holds exactly the
  same PUs, so it is the same sharing domain: a Package with one L3, an L2
  above a single core);
- any other object costs one more than its most expensive child.

So the cheapest object two threads can share is the lowest one that holds
several PUs, and every level of the tree that splits PUs apart adds one. On
the study's machines:

============  =========================================================
Core2         L2 (2 cores) 1, Package 2, Machine 3
Nehalem       L3 = Package (4 cores) 1, Machine 2
ccNUMA96      L2 (2 cores) 1, L3 = Package 2, Group (NUMA node) 3, Machine 4
SMT machines  Core (its hyperthreads) 1, the L2 above several cores 2, ...
============  =========================================================

With this scale, on a tree whose levels are uniform, J is the sum over the
levels of the tree of the affinity *cut* at that level (the weight between
threads placed under different objects of the level): it is exactly what the
study's strategies minimise one level at a time (pairs at the shared cache,
parts at the socket). J is in units of W times levels; lower is better; it
depends only on the tree, never on the OS numbering of PUs, and permuting
threads together with the matrix leaves it unchanged.

**Hardware threads.** J is a cost of communication: two threads on the
hardware threads of one core share all its caches, so that is the cheapest
sharing of all. But they also share the core's pipelines, a cost of
computation that no affinity matrix shows. :func:`core_pairs` counts it, and
placements are compared by ``(core_pairs, J)``, core pairs first
(:func:`pinbench.place.record.ranked`): the order of the graph strategies' slot policy (a
core to every thread before any core takes a second, as ``OMP_PLACES=cores``
and Linux's SMT scheduling domain do), so that J only ever ranks placements
that load the cores alike. On trees without SMT every placement has 0 core
pairs and the order is J's.
"""
from __future__ import annotations

import functools

import numpy as np

from pinbench.topology import Node, Topology


def node_costs(topo: Topology) -> dict[Node, int]:
    """The cost of every object of the tree (see the module's docstring). O(objects)."""
    costs: dict[Node, int] = {}

    def height(node: Node) -> int:
        below = [height(child) for child in node.children]
        costs[node] = 0 if not below else max(below) + (len(below) > 1)
        return costs[node]

    height(topo.root)
    return costs


def lowest_shared_matrix(topo: Topology, pus: list[int]) -> tuple[np.ndarray, list[Node]]:
    """The lowest object holding each pair of PUs: ``nodes[index[a][b]]`` for ``pus[a]``, ``pus[b]``.

    The same as :meth:`Topology.lowest_shared` for every pair (a PU with
    itself gives the PU). The matrix of every placeable PU is computed once
    per topology (:func:`_placeable_lowest_shared`), then each call takes its
    rows and columns: O(N^2) time and memory.
    """
    index, nodes, position = _placeable_lowest_shared(topo)
    at = np.array([position[pu] for pu in pus], dtype=np.int64)
    return index[np.ix_(at, at)], nodes


@functools.lru_cache(maxsize=8)
def _placeable_lowest_shared(topo: Topology) -> tuple[np.ndarray, list[Node], dict[int, int]]:
    """:func:`lowest_shared_matrix` of all the placeable PUs, and each PU's row.

    Vectorised over the depth of the tree: O(P^2 * depth) time, O(P^2) memory.
    """
    pus = topo.placeable
    chains = [list(reversed(topo.ancestors(pu))) for pu in pus]  # root first
    depth = max(map(len, chains))
    nodes = list({node: None for chain in chains for node in chain})
    number = {node: k for k, node in enumerate(nodes)}
    ids = -1 - np.tile(np.arange(len(pus))[:, None], depth)  # padding never matches another row
    for row, chain in enumerate(chains):
        ids[row, :len(chain)] = [number[node] for node in chain]
    common = np.zeros((len(pus), len(pus)), dtype=np.int64)  # ancestors in common, root included
    for level in range(depth):
        common += ids[:, level, None] == ids[None, :, level]
    lengths = np.array([len(chain) for chain in chains])
    deepest = np.minimum(common, lengths[:, None]) - 1
    return (np.take_along_axis(ids, deepest, axis=1), nodes,
            {pu: k for k, pu in enumerate(pus)})


def cost_matrix(topo: Topology, pus: list[int]) -> np.ndarray:
    """``C[a][b]``: cost of the lowest object holding ``pus[a]`` and ``pus[b]``; 0 on the diagonal."""
    costs = node_costs(topo)
    index, nodes = lowest_shared_matrix(topo, pus)
    return np.array([costs[node] for node in nodes], dtype=np.int64)[index]


def objective(topo: Topology, matrix: np.ndarray, pus: list[int]) -> float:
    """J of the placement thread i -> ``pus[i]`` under the affinity ``matrix`` (N x N).

    >>> from pinbench.topology import load
    >>> core2 = load("Package:2 L2Cache:2 Core:1 PU:1")
    >>> objective(core2, np.array([[0, 5, 1], [5, 0, 0], [1, 0, 0]]), [0, 1, 2])
    7.0
    """
    return placement_cost(np.asarray(matrix, dtype=float), cost_matrix(topo, pus))


def placement_cost(matrix: np.ndarray, costs: np.ndarray) -> float:
    """J from the matrix and the cost matrix between the threads' PUs (diagonals ignored)."""
    return float(np.sum(np.triu(matrix * costs, 1)))


def core_pairs(topo: Topology, pus: list[int]) -> int:
    """How many pairs of threads run on hardware threads of one core.

    >>> from pinbench.topology import load
    >>> smt = load("Package:1 Core:2 PU:2")  # cores {0, 1} and {2, 3}
    >>> core_pairs(smt, [0, 1, 2]), core_pairs(smt, [0, 2, 1])
    (1, 1)
    >>> core_pairs(smt, [0, 2])
    0
    """
    per_core: dict[Node, int] = {}
    for pu in pus:
        core = topo.core(pu)
        per_core[core] = per_core.get(core, 0) + 1
    return sum(k * (k - 1) // 2 for k in per_core.values())
