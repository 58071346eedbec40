"""Every placement strategy a campaign may name, and the function that places threads for it.

This is the one home of strategy names: the campaign validation, the
placement files, the command line and the workflow all look names up here.

=================  ======================================================  ==========
name               places threads                                          needs W
=================  ======================================================  ==========
``os``             not at all: the OS decides (the study's baseline)       no
``random``         a fresh uniformly random placement per repetition       no
``compact``        ``KMP_AFFINITY=compact`` on the hwloc tree               no
``scatter``        ``KMP_AFFINITY=scatter`` on the hwloc tree               no
``lp-compact``     optimal pairs, laid compactly (Mazouz et al. 3.2)        yes
``lp-scatter``     optimal pairs, spread over the sockets                  yes
``gp``             threads partitioned over the sockets (METIS)            yes
``lpgp[-K]``       pairs, then pairs partitioned over (K) sockets          yes
``gplp[-K]``       threads partitioned over (K) sockets, then pairs        yes
``hierarchical``   every sharing level of the tree, refined on J           yes
``per-region[-B]`` each parallel region that pays on its own placement     yes, per region
``phase-weighted[-B]`` one placement for the regions' matrices by time     yes, per region
``<bind>-<places>`` the runtime binds, ``OMP_PROC_BIND`` x ``OMP_PLACES``     no
=================  ======================================================  ==========

W is the affinity matrix a tracer writes; the per-region strategies also need the matrix of
each parallel region (:mod:`pinbench.place.per_region`) and place on top of a graph strategy B,
``hierarchical`` unless named (``per-region-gp``). The runtimes' own policies, ``close-threads``,
``spread-cores``, ``primary-sockets`` ... (:mod:`pinbench.place.policies`), leave the binding
to the runtime and are verified against pinbench's prediction for it. A campaign's own placements (``placements:``: a
PU list, an ``OMP_PLACES`` string or a ``likwid-pin`` expression, :mod:`pinbench.place.user`)
are strategies too, under the names the campaign gives them. With ``oversubscribe: true`` in a campaign, the
strategies that need no W also place more threads than PUs (:attr:`Strategy.wraps`). ``lpgp-8`` is LPGP on the first 8
sockets (:func:`parse_strategy`).
"""
from __future__ import annotations

import dataclasses
import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

from pinbench.place.domains import PlacementError
from pinbench.place.independent import compact, random_placement, scatter
from pinbench.place.policies import NAMES as POLICY_NAMES, predict

if TYPE_CHECKING:
    from collections.abc import Mapping

    import numpy as np

    from pinbench.place.study import Memo
    from pinbench.place.user import UserPlacement
    from pinbench.topology import Topology

#: ``place(topology, threads, matrix, sockets, seed, memo)`` -> the PU of each thread; ``memo``
#: shares steps between the strategies placed for one matrix (:class:`pinbench.place.study.Memo`).
Placer = Callable[["Topology", int, "np.ndarray | None", int | None, int, "Memo"], list[int]]


def _graph(module: str) -> ModuleType:
    """The module of the graph strategies (``study``, ``hierarchical``), imported when one
    places threads: it loads NumPy, METIS and rustworkx, which looking a name up (reading a
    campaign) does not need."""
    return importlib.import_module(f"pinbench.place.{module}")


@dataclass(frozen=True)
class Strategy:
    """A strategy a campaign may name."""

    name: str
    place: Placer | None  #: None: threads are not bound (``os``)
    needs_matrix: bool = False  #: places threads by an affinity matrix
    takes_sockets: bool = False  #: may be named ``<name>-<K>`` to use K sockets
    per_repetition: bool = False  #: a fresh placement per repetition, from the seed
    #: may place more threads than placeable PUs: its placement of every PU, repeated
    #: cyclically (:func:`pinbench.place.record.make_placement`); ``os`` leaves it to the OS
    wraps: bool = False
    policy: bool = False  #: the runtime binds (``OMP_PROC_BIND`` x ``OMP_PLACES``)
    #: places by the per-region matrices (:mod:`pinbench.place.per_region`): ``"plan"``
    #: (``per-region``) or ``"weighted"`` (``phase-weighted``), on top of ``base``
    by_region: str | None = None
    base: str | None = None  #: the graph strategy that a per-region strategy places with


STRATEGIES: dict[str, Strategy] = {strategy.name: strategy for strategy in (
    Strategy("os", None, wraps=True),
    Strategy("random", lambda topo, n, matrix, sockets, seed, memo:
             random_placement(topo, n, seed), per_repetition=True, wraps=True),
    Strategy("compact", lambda topo, n, matrix, sockets, seed, memo: compact(topo, n),
             wraps=True),
    Strategy("scatter", lambda topo, n, matrix, sockets, seed, memo: scatter(topo, n),
             wraps=True),
    Strategy("lp-compact", lambda topo, n, matrix, sockets, seed, memo:
             _graph("study").lp_compact(topo, matrix, memo), needs_matrix=True),
    Strategy("lp-scatter", lambda topo, n, matrix, sockets, seed, memo:
             _graph("study").lp_scatter(topo, matrix, memo), needs_matrix=True),
    Strategy("gp", lambda topo, n, matrix, sockets, seed, memo:
             _graph("study").gp(topo, matrix, seed, memo), needs_matrix=True),
    Strategy("lpgp", lambda topo, n, matrix, sockets, seed, memo:
             _graph("study").lpgp(topo, matrix, sockets, seed, memo), needs_matrix=True,
             takes_sockets=True),
    Strategy("gplp", lambda topo, n, matrix, sockets, seed, memo:
             _graph("study").gplp(topo, matrix, sockets, seed, memo), needs_matrix=True,
             takes_sockets=True),
    Strategy("hierarchical", lambda topo, n, matrix, sockets, seed, memo:
             _graph("hierarchical").hierarchical(topo, matrix, seed, memo), needs_matrix=True),
    Strategy("per-region", None, needs_matrix=True, by_region="plan", base="hierarchical"),
    Strategy("phase-weighted", None, needs_matrix=True, by_region="weighted",
             base="hierarchical"),
    *(Strategy(name, lambda topo, n, matrix, sockets, seed, memo, name=name:
               [place[0] for place in predict(topo, name, n)["libgomp"]], policy=True)
      for name in POLICY_NAMES),
)}
#: Every name without a socket count, in the order above.
NAMES = tuple(STRATEGIES)
#: The application-sensitive strategies that place threads by one affinity matrix (the bases
#: of the per-region strategies, :data:`BY_REGION`, which need the matrix too).
GRAPH = tuple(name for name, strategy in STRATEGIES.items()
              if strategy.needs_matrix and not strategy.by_region)
#: The strategies that place by the per-region matrices.
BY_REGION = tuple(name for name, strategy in STRATEGIES.items() if strategy.by_region)
#: The strategies whose placements re-bind threads per region at run time (the shim's).
REBOUND = tuple(name for name, strategy in STRATEGIES.items() if strategy.by_region == "plan")


def rebound(name: str) -> bool:
    """Whether a campaign's strategy name re-binds threads at run time (``per-region[-B]``).

    >>> rebound("per-region-gp"), rebound("phase-weighted"), rebound("compact")
    (True, False, False)
    """
    return any(name == base or name.startswith(f"{base}-") for base in REBOUND)


#: The strategies that may place more threads than PUs.
WRAPPING = tuple(name for name, strategy in STRATEGIES.items() if strategy.wraps)


def user_strategy(name: str, placement: UserPlacement) -> Strategy:
    """A campaign's own placement as a strategy: thread i on the i-th PU it gives."""
    return Strategy(name, lambda topo, n, matrix, sockets, seed, memo: placement.place(topo, n))


def parse_strategy(name: str, placements: Mapping[str, UserPlacement] | None = None,
                   ) -> tuple[Strategy, int | None]:
    """A strategy name as (strategy, number of sockets or None); ``placements`` are the
    campaign's own (``placements:``), by name.

    Raises PlacementError for a name no campaign may use.

    >>> strategy, sockets = parse_strategy("lpgp-8")
    >>> strategy.name, strategy.needs_matrix, sockets
    ('lpgp', True, 8)
    >>> parse_strategy("compact")[0].needs_matrix, parse_strategy("compact")[1]
    (False, None)
    """
    if placements and name in placements:
        return user_strategy(name, placements[name]), None
    for by_region in BY_REGION:
        base = name.removeprefix(f"{by_region}-")
        if base != name and base in GRAPH:
            return dataclasses.replace(STRATEGIES[by_region], name=name, base=base), None
    base, _, suffix = name.rpartition("-")
    if base in STRATEGIES and STRATEGIES[base].takes_sockets and re.fullmatch("[1-9][0-9]*", suffix):
        return STRATEGIES[base], int(suffix)
    if name in STRATEGIES:
        return STRATEGIES[name], None
    variants = "/".join([*(f"{s.name}-<sockets>" for s in STRATEGIES.values()
                           if s.takes_sockets), *(f"{s}-<graph strategy>" for s in BY_REGION)])
    own = f", the campaign's placements ({', '.join(placements)})" if placements else ""
    raise PlacementError(f"unknown strategy {name!r}; known: {', '.join(NAMES)}, {variants}"
                         f"{own}, or a name given under placements:")


def is_own_name(name: str) -> bool:
    """Whether ``name`` is one of pinbench's strategies (then no placement may take it)."""
    try:
        parse_strategy(name)
    except PlacementError:
        return False
    return True


def needs_matrix(name: str, placements: Mapping[str, UserPlacement] | None = None) -> bool:
    """True when the strategy places threads by an affinity matrix (PlacementError if unknown)."""
    return parse_strategy(name, placements)[0].needs_matrix
