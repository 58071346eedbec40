"""Where strategies may put threads: placeable PUs, scatter order, slots, sockets, sharing domains.

Every strategy places threads on the placeable PUs (:func:`check_fits`), and
``scatter`` takes them in the order of :func:`scatter_order`. The study's
machines have one PU per core and caches shared by two cores; the graph
strategies work on any hwloc tree, through three further notions.

**Slots.** A slot is a PU a strategy may use. Hyperthreads of one core share
the core's pipelines, so a program gets a core to itself before it shares
one: when N threads fit on the cores that have a placeable PU, the slots are
the first placeable PU of every core (as ``OMP_PLACES=cores`` would give), and
no two threads share a core. When N exceeds the cores, every core gets one
thread and the others go to sibling PUs, the second PU of cores before any
third, cores taken in ``scatter`` order so that each socket gets its share. The
strategies then choose among exactly N slots, and the objective counts two
threads on one core as the cheapest sharing of all. A tree without Core
objects has one slot per placeable PU.

**Sockets.** The partitioning strategies split threads over sockets: the
Package objects, or, for a tree without Package, the children of the highest
object that has more than one child, unless those are cores or PUs (then the
whole machine is one socket).

**Sharing domains.** :func:`domain_tree` is the tree of objects restricted to
the slots, each chain of one-child objects collapsed into the lowest of them:
every domain is the lowest object holding its slots, and its children split
those slots. :func:`sharing_groups` lists, per domain, the slots that share
nothing smaller: the cores under one cache on the study's machines (the two
cores of a Core2 L2, the four of a Nehalem L3), the PUs of one core on an SMT
machine with more threads than cores. The pairing strategies put a pair of
threads onto two slots of one group, whatever the group's size.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from pinbench.errors import PinbenchError
from pinbench.topology import Node, Topology


class PlacementError(PinbenchError, ValueError):
    """No placement of the requested kind exists."""


def check_fits(topo: Topology, threads: int) -> list[int]:
    """The placeable PUs, or PlacementError when ``threads`` do not fit on them."""
    pus = topo.placeable
    if not 1 <= threads <= len(pus):
        raise PlacementError(
            f"{threads} threads do not fit on {len(pus)} placeable PUs "
            f"of {topo.source or 'this machine'}"
        )
    return pus


def scatter_order(topo: Topology, pus: list[int]) -> list[int]:
    """``pus`` sorted as ``scatter`` takes them: by their sub-ids, leaf level most significant."""
    return sorted(pus, key=lambda pu: tuple(reversed(topo.sub_ids(pu))))


def slots(topo: Topology, threads: int) -> list[int]:
    """The PUs (tree order) the graph strategies use for ``threads`` threads.

    Raises PlacementError when the threads do not fit on the placeable PUs.
    On ``Package:1 Core:2 PU:2`` (PUs 0 1 | 2 3): 2 threads -> [0, 2], 3 -> [0, 1, 2].
    """
    pus = check_fits(topo, threads)
    by_core: dict[Node, list[int]] = {}
    for pu in pus:
        by_core.setdefault(topo.core(pu), []).append(pu)
    chosen = {siblings[0] for siblings in by_core.values()}
    if threads > len(chosen):
        rank = {pu: k for siblings in by_core.values() for k, pu in enumerate(siblings)}
        seconds = [pu for pu in scatter_order(topo, pus) if pu not in chosen]
        seconds.sort(key=rank.__getitem__)  # stable: scatter order within each rank
        chosen.update(seconds[:threads - len(chosen)])
    return [pu for pu in pus if pu in chosen]


def socket_nodes(topo: Topology) -> list[Node]:
    """The sockets, in tree order: the Packages, else the first branching level above cores."""
    packages: list[Node] = []

    def walk(node: Node) -> None:
        if node.type == "Package":
            packages.append(node)
        else:
            for child in node.children:
                walk(child)

    walk(topo.root)
    if packages:
        return packages
    node = topo.root
    while len(node.children) == 1:
        node = node.children[0]
    if any(child.type in ("Core", "PU") for child in node.children):
        return [topo.root]
    return node.children or [node]


def socket_slots(topo: Topology, pus: list[int]) -> list[list[int]]:
    """``pus`` grouped by socket, sockets and PUs in tree order; sockets without any left out."""
    index = {node: k for k, node in enumerate(socket_nodes(topo))}
    groups: list[list[int]] = [[] for _ in index]
    for pu in pus:
        socket = next(node for node in topo.ancestors(pu) if node in index)
        groups[index[socket]].append(pu)
    return [group for group in groups if group]


def socket_groups(topo: Topology, pus: list[int], sockets: int | None,
                  n: int) -> list[list[int]]:
    """The slots of the sockets to use: all, or the first ``sockets`` in tree order.

    Raises PlacementError when the machine has fewer sockets (with slots among
    ``pus``) than asked for, or when ``n`` threads do not fit on them.
    """
    groups = socket_slots(topo, pus)
    if sockets is not None:
        if sockets > len(groups):
            raise PlacementError(f"{sockets} sockets asked for; {topo.source or 'the machine'} "
                                 f"has {len(groups)} with PUs to use")
        groups = groups[:sockets]
    if n > sum(map(len, groups)):
        raise PlacementError(f"{n} threads do not fit on {len(groups)} socket(s) "
                             f"({sum(map(len, groups))} slots)")
    return groups


@dataclass(eq=False)
class Domain:
    """The lowest object holding some slots, and how its children split them."""

    node: Node
    slots: list[int]  #: tree order
    children: list["Domain"] = field(default_factory=list)


def domain_tree(topo: Topology, pus: list[int]) -> Domain:
    """The sharing domains of ``pus``: one-child chains collapsed, leaves single slots.

    O(len(pus) x depth): only the objects above ``pus`` are visited.
    """
    wanted = set(pus) & set(topo.placeable)
    above = {node for pu in wanted for node in topo.ancestors(pu)}

    def build(node: Node) -> Domain | None:
        if not node.children:
            return Domain(node, [node.os_index]) if node.os_index in wanted else None
        below = [d for d in (build(child) for child in node.children if child in above)
                 if d is not None]
        if len(below) <= 1:
            return below[0] if below else None
        return Domain(node, [pu for d in below for pu in d.slots], below)

    root = build(topo.root)
    if root is None:
        raise ValueError("no slot in the tree")
    return root


def sharing_groups(root: Domain) -> list[tuple[Domain, list[int]]]:
    """Per domain (preorder), the slots of its leaf children: slots whose lowest shared object it is.

    A domain tree that is a single slot gives one group of one slot.
    """
    if not root.children:
        return [(root, root.slots)]
    groups = []
    leaves = [d.slots[0] for d in root.children if not d.children]
    if leaves:
        groups.append((root, leaves))
    for child in root.children:
        if child.children:
            groups.extend(sharing_groups(child))
    return groups


def rank_path(node: Node) -> tuple[int, ...]:
    """The object's rank among its siblings at each level, root first (``sub_ids`` of any object)."""
    ranks = []
    while node.parent is not None:
        ranks.append(node.parent.children.index(node))
        node = node.parent
    return tuple(reversed(ranks))
