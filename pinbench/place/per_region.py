"""Placement per parallel region (``per-region``) and its fair single rival (``phase-weighted``).

A program whose parallel regions share data differently (one pairs thread i with i + N/2,
the next neighbours) has no single best placement. From the regions file of its trace
(:mod:`pinbench.results.regions`) these strategies place threads on top of a graph strategy
(the *base*: ``hierarchical`` unless the name says another, ``per-region-gp``):

- ``phase-weighted``: one placement, the base's for the regions' matrices weighted by time
  (:func:`phase_weighted`);
- ``per-region``: the whole program's placement (the base's for the whole program's matrix,
  as today), kept outside the chosen regions and for the regions not chosen, and, for each
  chosen region, the base's placement for that region's matrix, to which the threads are
  re-bound at each of its starts (:func:`plan`).

**Weights.** A region's matrix counts accesses; to weigh regions by the time they take, a
region's matrix is scaled by its time share over its access share (:func:`time_weighted`):
where every region makes accesses at the same rate the scaled matrices add up to the whole
program's, so J stays in pinbench's units (:mod:`pinbench.graph.objective`: W times levels).

**Which regions.** A region is a candidate when the program has more than one region and it
takes at least :data:`MIN_TIME_SHARE` of the regions' time. Its own placement gains
``g = 1 - J(own) / J(whole program's placement)`` of its (time-weighted) J. That gain is worth
``g x`` the region's time in a run without the tracer (its traced time divided by
:data:`TRACER_SLOWDOWN`, the upper end of the measured slowdown, so the estimate errs low);
re-binding costs ``2 x threads x`` :func:`rebind_cost_s` per instance (into the region's
placement and back). A region is chosen when the gain is worth more than the re-binding; a
program with one region, or whose gains do not pay, gets the whole program's placement and
no region: the same placement as the base strategy.

**J of the plan.** ``J(whole program's placement) - sum over the chosen regions of
(J_r(whole program's placement) - J_r(own))``, with J_r the region's time-weighted J: the
whole program's J less what re-binding saves, comparable with every other strategy's J.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from pinbench.graph.objective import objective
from pinbench.measure.rebind import rebind_cost_s
from pinbench.results.regions import Regions
from pinbench.topology import Topology

#: The least share of the regions' time that a region must take to be placed on its own.
MIN_TIME_SHARE = 0.05
#: How much slower a traced run is than a plain one, at most (docs/performance.md, tracer
#: slowdown: 20 to 30 times): a region's time without the tracer is estimated from its
#: traced time divided by this.
TRACER_SLOWDOWN = 30.0
def time_weighted(regions: Regions) -> list[np.ndarray]:
    """Each region's matrix scaled by its time share over its access share (zero for a
    region that counted no access)."""
    return [np.asarray(region.matrix, dtype=float)
            * (region.time_share / region.access_share if region.access_share else 0.0)
            for region in regions.regions]


def phase_weighted(regions: Regions) -> np.ndarray:
    """The regions' matrices weighted by time (:func:`time_weighted`), summed."""
    return sum(time_weighted(regions), np.zeros((regions.threads, regions.threads)))


@dataclass(frozen=True)
class Plan:
    """A per-region plan: the whole program's placement and the chosen regions' own."""

    pus: list[int]  #: the whole program's placement
    regions: list[dict]  #: the chosen regions: ``key``, ``where``, ``pus``
    J: float  #: the plan's J (see the module's docstring)


def plan(topo: Topology, matrix: np.ndarray, regions: Regions, whole: list[int],
         place: Callable[[np.ndarray], list[int]], cost_per_call_s: float) -> Plan:
    """The per-region plan for the whole program's ``matrix`` and placement ``whole`` (the
    base strategy's), placing a region's matrix with ``place`` (the base strategy's), each
    re-binding of one thread costing ``cost_per_call_s`` seconds."""
    chosen: list[dict] = []
    saved = 0.0
    candidates = len(regions.regions) > 1  # one region: the whole program's placement
    for region, weighted in zip(regions.regions, time_weighted(regions), strict=True):
        if not candidates or region.time_share < MIN_TIME_SHARE:
            continue
        own = place(np.asarray(region.matrix, dtype=float))
        at_whole, at_own = objective(topo, weighted, whole), objective(topo, weighted, own)
        gain_s = (1 - at_own / at_whole) * region.time_s / TRACER_SLOWDOWN if at_whole else 0.0
        cost_s = 2 * regions.threads * cost_per_call_s * region.instances
        if at_own < at_whole and gain_s > cost_s:
            chosen.append({"key": region.key, "where": region.where, "pus": own})
            saved += at_whole - at_own
    return Plan(whole, chosen, objective(topo, matrix, whole) - saved)
