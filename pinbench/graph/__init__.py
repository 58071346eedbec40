"""Affinity graphs and the algorithms on them; no knowledge of placement strategies.

- :mod:`~pinbench.graph.matrix`: the affinity matrix file (N x N CSV), as tracers write it;
- :mod:`~pinbench.graph.edges`: integer edge weights for the exact algorithms;
- :mod:`~pinbench.graph.matching`: optimal thread pairs (Edmonds' maximum-weight matching);
- :mod:`~pinbench.graph.partition`: k-way partition within capacities (METIS, repair, swaps);
- :mod:`~pinbench.graph.objective`: the objective J of a placement on an hwloc tree;
- :mod:`~pinbench.graph.refinement`: swap refinement of a placement on J.
"""
