"""The OpenMP runtimes' own binding policies as strategies: ``OMP_PROC_BIND`` x ``OMP_PLACES``.

``close-threads``, ``spread-cores``, ``primary-sockets``, ... run a program with
``OMP_PROC_BIND=<bind> OMP_PLACES=<places>``, as users set them, and let the runtime bind its
threads. pinbench predicts where each runtime puts each thread, and the measuring process
compares the binding the runtime reports with the prediction for the runtime the program
loads (a verified run, or a mismatch). The predictions follow the runtimes' sources and are
checked against the real runtimes on faked machines (``tests/test_policies.py``):

- the places (OpenMP 5.2, 6.5). GCC's libgomp (``config/linux/affinity.c``) walks the CPUs of
  the process's mask in ascending order and, at each CPU not yet placed, makes the places of
  its core (``threads``: one per hardware thread, the core's siblings in ascending order;
  ``cores``: the core's allowed PUs) or of its package (``sockets``). LLVM's libomp sorts its
  places as its topology (package, core, thread: the tree's order);
- the primary thread on the first place (both bind the initial thread there);
- ``close``: thread i on place i; ``primary``: every thread on place 0; ``spread``: the places
  split into T subpartitions of P/T places rounded down or up, thread i on the first place of
  the i-th. libgomp (``team.c``) gives the first P mod T subpartitions the extra place; libomp
  (``kmp_runtime.cpp``, ``__kmp_partition_places``) starts thread i at place
  floor(i (P + 1) / T) (its spacing summed in floating point): with 6 places and 4 threads,
  libgomp binds threads to places 0 2 4 5, libomp to 0 1 3 5.

More threads than places is left to each runtime's own rules and refused here.
"""
from __future__ import annotations

from pinbench.place.domains import PlacementError
from pinbench.topology import Node, Topology, pus_below

BINDS = ("close", "spread", "primary")
PLACES = ("threads", "cores", "sockets")
RUNTIMES = ("libgomp", "libomp")
#: Every policy strategy's name: ``<bind>-<places>``.
NAMES = tuple(f"{bind}-{places}" for bind in BINDS for places in PLACES)


def environment(name: str) -> dict[str, str]:
    """The runtime settings of a policy strategy.

    >>> environment("spread-cores")
    {'OMP_PROC_BIND': 'spread', 'OMP_PLACES': 'cores'}
    """
    bind, _, places = name.partition("-")
    return {"OMP_PROC_BIND": bind, "OMP_PLACES": places}


def _group(topo: Topology, pu: int, places: str) -> list[int]:
    """The allowed PUs of the PU's core (``threads``, ``cores``) or package (``sockets``), in
    ascending order."""
    kind = "Core" if places in ("threads", "cores") else "Package"
    node: Node | None = next((n for n in topo.ancestors(pu) if n.type == kind), None)
    if node is None:
        return [pu] if kind == "Core" else sorted(topo.placeable)
    return sorted(pus_below(node))


def places(topo: Topology, kind: str, runtime: str) -> list[frozenset[int]]:
    """The places ``OMP_PLACES=<kind>`` makes on ``topo`` under ``runtime``, in order.

    >>> from pinbench.topology import load
    >>> topo = load("Package:2 Core:2 PU:2(indexes=0,4,1,5,2,6,3,7)")
    >>> [sorted(p) for p in places(topo, "threads", "libgomp")][:4]
    [[0], [4], [1], [5]]
    >>> [sorted(p) for p in places(topo, "cores", "libomp")]
    [[0, 4], [1, 5], [2, 6], [3, 7]]
    """
    if kind not in PLACES or runtime not in RUNTIMES:
        raise PlacementError(f"no places {kind!r} for runtime {runtime!r}")
    if runtime == "libgomp":
        order, seen = [], set()
        for pu in sorted(topo.placeable):
            if pu not in seen:
                group = _group(topo, pu, kind)
                seen.update(group)
                order.append(group)
    else:
        order = []
        for pu in sorted(topo.placeable, key=topo.sub_ids):
            group = sorted(_group(topo, pu, kind), key=topo.sub_ids)
            if group not in order:
                order.append(group)
    if kind == "threads":
        return [frozenset({pu}) for group in order for pu in group]
    return [frozenset(group) for group in order]


def assignment(n_places: int, threads: int, bind: str, runtime: str) -> list[int]:
    """The place of each of ``threads`` threads among ``n_places``, the primary on place 0.

    >>> assignment(6, 4, "spread", "libgomp"), assignment(6, 4, "spread", "libomp")
    ([0, 2, 4, 5], [0, 1, 3, 5])
    >>> assignment(5, 3, "close", "libomp"), assignment(5, 3, "primary", "libgomp")
    ([0, 1, 2], [0, 0, 0])
    """
    if threads > n_places and bind != "primary":
        raise PlacementError(f"{threads} threads on {n_places} places: more threads than "
                             f"places is left to each runtime (OMP_PROC_BIND={bind})")
    if bind == "primary":
        return [0] * threads
    if bind == "close":
        return list(range(threads))
    size, rest = divmod(n_places, threads)
    if runtime == "libgomp":
        return [i * size + min(i, rest) for i in range(threads)]
    starts, current, spacing = [], 0.0, (n_places + 1) / threads
    for _ in range(threads):  # __kmp_partition_places, spread over the whole place list
        starts.append(int(current))
        current += spacing
    return starts


def predict(topo: Topology, name: str, threads: int) -> dict[str, list[list[int]]]:
    """For each runtime, the PUs each thread is bound to under policy ``name``."""
    bind, _, kind = name.partition("-")
    found = {}
    for runtime in RUNTIMES:
        ordered = places(topo, kind, runtime)
        found[runtime] = [sorted(ordered[k]) for k in assignment(len(ordered), threads, bind,
                                                                 runtime)]
    return found
