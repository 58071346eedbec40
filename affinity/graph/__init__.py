"""Affinity graphs and the algorithms on them; no knowledge of placement strategies.

- :mod:`~affinity.graph.matrix`: the affinity matrix file (N x N CSV), as tracers write it;
- :mod:`~affinity.graph.edges`: integer edge weights for the exact algorithms;
- :mod:`~affinity.graph.matching`: optimal thread pairs (Edmonds' maximum-weight matching);
- :mod:`~affinity.graph.partition`: k-way partition within capacities (METIS, repair, swaps);
- :mod:`~affinity.graph.objective`: the objective J of a placement on an hwloc tree;
- :mod:`~affinity.graph.refinement`: swap refinement of a placement on J.
"""
