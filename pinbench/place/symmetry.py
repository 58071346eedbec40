"""When two placements are one experiment: equal up to a symmetry of the machine's tree.

A symmetry (automorphism) of the hwloc tree permutes the children of an
object among themselves when their subtrees are alike: swapping two
identical sockets, two cores of one L2, the hyperthreads of a core. A
placement seen through such a permutation runs the same threads on
indistinguishable hardware, so it is the same experiment: on a machine of
two identical cores, [0, 1] and [1, 0] are one placement.

The test is labelled-tree isomorphism on the tree of placeable PUs
(:attr:`pinbench.topology.Topology.root`): every PU is labelled with the thread
placed on it, or as free, and :func:`canonical_form`
is the form of Aho, Hopcroft and Ullman ("The Design and Analysis of
Computer Algorithms", 1974, section 3.2): a leaf's form is its label, an
object's form is its type and the sorted forms of its children. Two
placements are equivalent exactly when their forms are equal. Objects are
compared by type and by whether a NUMA node hangs from them; cache sizes are
not in the tree (:mod:`pinbench.topology`), so two caches of one type count
as alike. O(objects x log) per placement.

The same symmetries say at which thread counts placements can differ at all: on a flat
machine (:func:`interchangeable`) no two can, and :func:`level_counts` are the counts at
which compact and scatter differ by what their threads share.
"""
from __future__ import annotations

from collections.abc import Hashable, Sequence

from pinbench.place.independent import compact, scatter
from pinbench.topology import Node, Topology, pus_below, subtree

FREE = ()  #: the label of a PU without a thread; one with threads: their numbers
#: What to do on a flat machine (:func:`interchangeable`) to see placements differ.
ELSEWHERE = ("to compare placements, run on a machine whose PUs share unequally (sockets, SMT, "
             "NUMA nodes, caches of some cores), or plan one: "
             "pinbench plan config/campaigns/study-plan.yaml")


def _form(node: Node, thread_on: dict[int, tuple[int, ...]]) -> tuple:
    """The canonical form of the subtree of ``node``, its PUs labelled by ``thread_on``."""
    if not node.children:
        return node.type, node.numa, (), thread_on.get(node.os_index, FREE)
    return (node.type, node.numa, tuple(sorted(_form(child, thread_on)
                                               for child in node.children)), FREE)


def canonical_form(topo: Topology, pus: list[int]) -> tuple:
    """A value equal for two placements iff a symmetry of the tree maps one onto the other.

    >>> from pinbench.topology import load
    >>> two_cores = load("Package:1 Core:2 PU:1")
    >>> canonical_form(two_cores, [0, 1]) == canonical_form(two_cores, [1, 0])
    True
    >>> smt = load("Package:1 Core:2 PU:2")  # cores {0, 1} and {2, 3}
    >>> canonical_form(smt, [0, 1]) == canonical_form(smt, [0, 2])
    False
    """
    thread_on: dict[int, tuple[int, ...]] = {}  # more than one thread when oversubscribed
    for thread, pu in enumerate(pus):
        thread_on[pu] = thread_on.get(pu, ()) + (thread,)
    return _form(topo.root, thread_on)


def experiment_key(topo: Topology | None, pus: Sequence[int]) -> Hashable:
    """What identifies the experiment of a placement that runs thread i on ``pus[i]`` in every
    run: its :func:`canonical_form` on the machine's tree ``topo``; without a tree, the list.

    >>> from pinbench.topology import load
    >>> two_cores = load("Package:1 Core:2 PU:1")
    >>> experiment_key(two_cores, [0, 1]) == experiment_key(two_cores, [1, 0])
    True
    >>> experiment_key(None, [0, 1]) == experiment_key(None, [1, 0])
    False
    """
    return canonical_form(topo, list(pus)) if topo is not None else tuple(pus)


def same_as(keys: dict[str, Hashable | None]) -> dict[str, str]:
    """Identical placements are one experiment: strategy -> the first strategy (in the order of
    ``keys``, the campaign's) of its experiment, for every strategy that is not the first.
    ``keys``: each strategy's :func:`experiment_key`, or None for a strategy without one
    fixed placement (``os``, not bound; ``random``, a draw per run), never merged.

    >>> same_as({"os": None, "compact": (0, 1), "random": None, "scatter": (0, 1)})
    {'scatter': 'compact'}
    """
    first: dict[Hashable, str] = {}
    for strategy, key in keys.items():
        if key is not None:
            first.setdefault(key, strategy)
    return {strategy: first[key] for strategy, key in keys.items()
            if key is not None and first[key] != strategy}


def interchangeable(topo: Topology) -> bool:
    """Whether every placement of n threads on n distinct PUs is one experiment, for every n:
    the machine is flat. So it is when its tree, chains of single children shortened, is one
    object whose children are alike PUs (no two PUs share more, a core, a cache, a socket or a
    NUMA node, than any other two), and its CPUs are of one kind: a symmetry then maps any PU
    list onto any other. So do placements of more threads than PUs (thread i where thread
    i mod P goes).

    >>> from pinbench.topology import load
    >>> interchangeable(load("Package:1 L3Cache:1 L2Cache:2 Core:1 PU:1"))
    True
    >>> interchangeable(load("Package:1 Core:2 PU:2")), interchangeable(load("Package:2 Core:1 PU:1"))
    (False, True)
    """
    node = topo.root
    while len(node.children) == 1:
        node = node.children[0]
    return (not topo.hybrid and all(len(pus_below(child)) == 1 for child in node.children)
            and len({_form(child, {}) for child in node.children}) <= 1)


def level_counts(topo: Topology) -> list[int]:
    """The thread counts at which placements differ by what their threads share: the PUs of
    one object of each level that groups PUs (an SMT core, an L2, an L3 or a package, a NUMA
    node...), strictly between 1 and all, ascending, each kept where compact (filling one
    object) and scatter (spreading over them), ``KMP_AFFINITY``'s two ends, are different
    experiments (:func:`experiment_key`). No count on a flat machine (:func:`interchangeable`).

    >>> from pinbench.topology import load
    >>> level_counts(load("Package:2 Core:4 PU:2")), level_counts(load("Package:1 Core:16 PU:1"))
    ([2, 8], [])
    """
    pus = len(topo.placeable)
    sizes = sorted({len(pus_below(node)) for node in subtree(topo.root)} - {1, pus})
    return [n for n in sizes
            if experiment_key(topo, compact(topo, n)) != experiment_key(topo, scatter(topo, n))]


def flat_machine(topo: Topology) -> str:
    """What a flat machine (:func:`interchangeable`) is, in words; "" for any other machine.

    >>> from pinbench.topology import load
    >>> flat_machine(load("Package:1 Core:2 PU:1"))
    'flat (Package:1 Core:2 PU:2; 2 of 2 PUs placeable): every pinned strategy is one placement up to symmetry at every thread count'
    """
    if not interchangeable(topo):
        return ""
    return (f"flat ({topo.summary()}): every pinned strategy is one placement up to symmetry at "
            "every thread count")
