"""Placements the user gives: a PU list, an ``OMP_PLACES`` string or a ``likwid-pin`` expression.

A campaign defines them under ``placements:`` and names them in ``strategies:`` like the
study's strategies::

    placements:
      mine:   {pus: "3,1,0,2"}             # thread i on the i-th PU (OS indexes, ranges)
      places: {omp_places: "{1},{0}"}      # OpenMP places of one PU each, intervals allowed
      s0:     {likwid: "S0:0-1@S1:0-1"}    # likwid-pin's -c expression

Each resolves, on a machine's topology, to a list of PUs; thread i of an N-thread run goes
to the i-th, so N may not exceed the list. The placements are bound, verified and measured
as any other (``OMP_PLACES`` of one PU per thread).

``likwid-pin`` expressions follow likwid 5.2 (``likwid-pin -c``; checked against the real
``likwid-pin -c EXPR -p`` on faked topologies in ``tests/test_user_placements.py``):

- a list of OS processor ids, ``0,2,4-6``;
- ``D:list``, the ``list``-th (indexes, ranges) hardware threads of the affinity domain D:
  ``N`` (the node), ``S<i>`` (socket), ``D<i>`` (die; the sockets when there are no dies),
  ``C<i>`` (last-level cache), ``M<i>`` (NUMA domain). A domain's threads are numbered
  physical cores first: the first hardware thread of every core, in tree order, then the
  second ones, ...;
- ``E:D:count[:chunk:stride]``: ``count`` threads from D's threads in tree order (the
  hardware threads of a core together): ``chunk`` consecutive ones, then ``stride`` on from
  the chunk's start, back to the first when that passes the end; at most as many as the machine has;
- ``T:scatter`` (T one of ``N S D C M``): round robin over the domains of that type, each
  in its numbering;
- several of these joined by ``@``.

Domains hold the PUs a process may use (likwid reads the process's affinity mask); those
without any stay numbered (an empty ``S1`` is still ``S1``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from pinbench.place.domains import PlacementError
from pinbench.topology import Node, Topology, pus_below, subtree

#: The kinds of definition a ``placements:`` entry may have, and what each holds.
KINDS = {
    "pus": "a list of OS PU indexes (\"0,2,4-6\"), thread i on the i-th",
    "omp_places": "an OMP_PLACES list of one-PU places (\"{1},{0}\", \"{0}:4:2\")",
    "likwid": "a likwid-pin -c expression (\"S0:0-1@S1:0-1\", \"E:N:4:1:2\")",
}
#: Cache types from the last level down: likwid's ``C`` domains are the last level's.
_CACHES = ("L5Cache", "L4Cache", "L3Cache", "L2Cache", "L1Cache")


@dataclass(frozen=True)
class UserPlacement:
    """One entry of a campaign's ``placements:``: its kind (a key of :data:`KINDS`) and text."""

    kind: str
    text: str

    @classmethod
    def of(cls, name: str, entry: dict) -> UserPlacement:
        """The placement of a ``placements:`` entry (a mapping with one key of :data:`KINDS`).

        >>> UserPlacement.of("mine", {"likwid": "S0:0-1"})
        UserPlacement(kind='likwid', text='S0:0-1')
        """
        if not isinstance(entry, dict) or len(entry) != 1 or next(iter(entry)) not in KINDS:
            raise PlacementError(f"placements.{name}: one of {', '.join(KINDS)}")
        kind, text = next(iter(entry.items()))
        if isinstance(text, list) and kind == "pus":
            text = ",".join(map(str, text))
        if not isinstance(text, (str, int)) or isinstance(text, bool):
            raise PlacementError(f"placements.{name}.{kind}: a string, not {text!r}")
        return cls(kind, str(text))

    def pus(self, topo: Topology) -> list[int]:
        """The PUs this definition gives on ``topo``, in thread order (PlacementError if it
        names a PU the machine does not have or a process may not use)."""
        if self.kind == "pus":
            pus = cpu_list(self.text)
        elif self.kind == "omp_places":
            pus = omp_places_pus(self.text)
        else:
            pus = likwid_pus(topo, self.text)
        placeable = set(topo.placeable)
        stranger = next((pu for pu in pus if pu not in placeable), None)
        if stranger is not None:
            raise PlacementError(f"{self.kind} {self.text!r}: PU {stranger} is not a placeable PU "
                                 f"of {topo.source or 'this machine'}")
        return pus

    def place(self, topo: Topology, threads: int) -> list[int]:
        """The PUs of threads 0..``threads``-1: the first ``threads`` of :meth:`pus`, no two
        on one PU."""
        pus = self.pus(topo)
        if threads > len(pus):
            raise PlacementError(f"{self.kind} {self.text!r} gives {len(pus)} PUs, fewer than "
                                 f"{threads} threads")
        chosen = pus[:threads]
        if len(set(chosen)) < threads:
            twice = next(pu for pu in chosen if chosen.count(pu) > 1)
            raise PlacementError(f"{self.kind} {self.text!r} puts two of {threads} threads on "
                                 f"PU {twice}")
        return chosen


def _number(text: str, what: str) -> int:
    if not re.fullmatch(r"-?[0-9]+", text.strip()):
        raise PlacementError(f"{what}: {text!r} is not a number")
    return int(text)


def cpu_list(text: str) -> list[int]:
    """``"3,0-2"`` -> [3, 0, 1, 2]: indexes and increasing ranges, in the order given.

    >>> cpu_list("3,0-2"), cpu_list("5")
    ([3, 0, 1, 2], [5])
    """
    out: list[int] = []
    for part in text.split(","):
        match = re.fullmatch(r"\s*([0-9]+)\s*(?:-\s*([0-9]+)\s*)?", part)
        if match is None:
            raise PlacementError(f"{text!r}: {part!r} is not an index or a range a-b")
        low, high = int(match.group(1)), int(match.group(2) or match.group(1))
        if high < low:
            raise PlacementError(f"{text!r}: the range {part.strip()} decreases")
        out.extend(range(low, high + 1))
    return out


def _split_top(text: str) -> list[str]:
    """``text`` split at the commas outside braces."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth not in (0, 1):
            raise PlacementError(f"OMP_PLACES {text!r}: unbalanced braces")
        if char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if depth:
        raise PlacementError(f"OMP_PLACES {text!r}: unbalanced braces")
    return [*parts, text[start:]]


def _interval(parts: list[str], what: str) -> tuple[int, int]:
    """The length and stride of ``:len[:stride]`` (stride 1 by default)."""
    if len(parts) > 2:
        raise PlacementError(f"{what}: at most :length:stride")
    length = _number(parts[0], what)
    stride = _number(parts[1], what) if len(parts) == 2 else 1
    if length < 1:
        raise PlacementError(f"{what}: a length of at least 1")
    return length, stride


def omp_places_pus(text: str) -> list[int]:
    """The PU of each place of an ``OMP_PLACES`` list whose places hold one PU each
    (OpenMP 5.2, 6.5: ``{res}``, ``{res:len:stride}``, ``place:len:stride``).

    >>> omp_places_pus("{1},{0}"), omp_places_pus("{0}:4:2"), omp_places_pus("{3:1},{7}:2:-1")
    ([1, 0], [0, 2, 4, 6], [3, 7, 6])
    """
    if re.fullmatch(r"\s*[a-z_]+(\(.*\))?\s*", text):
        raise PlacementError(f"OMP_PLACES {text!r}: an abstract name binds a thread to a set of "
                             "PUs; give places of one PU each")
    pus: list[int] = []
    for item in _split_top(text):
        match = re.fullmatch(r"\s*\{([^{}]*)\}\s*((?::\s*-?[0-9]+\s*)*)", item)
        if match is None or "!" in item:
            raise PlacementError(f"OMP_PLACES {text!r}: {item.strip()!r} is not a place "
                                 "{...} (exclusions ! are not supported)")
        inside = [part.strip() for part in match.group(1).split(",")]
        members: list[int] = []
        for res in inside:
            numbers = res.split(":")
            start = _number(numbers[0], f"OMP_PLACES {text!r}")
            length, stride = _interval(numbers[1:], f"OMP_PLACES {text!r}") \
                if len(numbers) > 1 else (1, 1)
            members.extend(start + k * stride for k in range(length))
        if len(set(members)) != 1:
            raise PlacementError(f"OMP_PLACES {text!r}: the place {{{match.group(1)}}} holds "
                                 f"{len(set(members))} PUs; pinbench binds each thread to one")
        suffix = [part for part in match.group(2).split(":")[1:]]
        length, stride = _interval(suffix, f"OMP_PLACES {text!r}") if suffix else (1, 1)
        pus.extend(members[0] + k * stride for k in range(length))
    if any(pu < 0 for pu in pus):
        raise PlacementError(f"OMP_PLACES {text!r}: a negative PU")
    return pus


def _tree_pus(topo: Topology, node: Node) -> list[int]:
    """The PUs of ``node`` a process may use, in tree order."""
    return [pu for pu in pus_below(node) if pu in topo.allowed]


def _numbered(topo: Topology, pus: list[int]) -> list[int]:
    """likwid's numbering of a domain: the first hardware thread of every core, then the
    second ones, ... (cores in tree order)."""
    def rank(pu: int) -> int:  # the PU's place among its core's hardware threads
        return pus_below(topo.core(pu)).index(pu)

    return sorted(pus, key=rank)  # stable: tree order within a rank


def likwid_domains(topo: Topology) -> dict[str, list[int]]:
    """likwid's affinity domains of ``topo`` (``N``, ``S0``..., ``D0``..., ``C0``...,
    ``M0``...), each its PUs in tree order (the hardware threads of a core together), but the
    NUMA domains ``M`` in the order of their OS indexes (as likwid reads them from Linux).

    >>> from pinbench.topology import load
    >>> domains = likwid_domains(load("Package:2 Core:2 PU:2"))
    >>> domains["N"], domains["S1"], domains["M0"]
    ([0, 1, 2, 3, 4, 5, 6, 7], [4, 5, 6, 7], [0, 1, 2, 3, 4, 5, 6, 7])
    """
    objects = subtree(topo.whole)
    found = {"N": [_tree_pus(topo, topo.whole)]}
    packages = [n for n in objects if n.type == "Package"] or [topo.whole]
    found["S"] = [_tree_pus(topo, n) for n in packages]
    found["D"] = [_tree_pus(topo, n) for n in objects if n.type == "Die"] or found["S"]
    last = next((kind for kind in _CACHES if any(n.type == kind for n in objects)), None)
    found["C"] = [_tree_pus(topo, n) for n in objects if n.type == last] or found["S"]
    found["M"] = [sorted(_tree_pus(topo, n)) for n in objects if n.numa] or [sorted(found["N"][0])]
    return {("N" if tag == "N" else f"{tag}{i}"): pus
            for tag, lists in found.items() for i, pus in enumerate(lists)}


def _domain(domains: dict[str, list[int]], name: str, expr: str) -> list[int]:
    if name not in domains:
        known = ", ".join(domains)
        raise PlacementError(f"likwid {expr!r}: no affinity domain {name!r} here ({known})")
    return domains[name]


def _likwid_part(topo: Topology, domains: dict[str, list[int]], part: str,
                 expr: str) -> list[int]:
    fields = part.split(":")
    if len(fields) == 1:
        return cpu_list(part)
    if fields[0] == "E":
        if len(fields) not in (3, 5):
            raise PlacementError(f"likwid {expr!r}: E:domain:count[:chunk:stride]")
        pool = _domain(domains, fields[1], expr)
        count, chunk, stride = (_number(f, f"likwid {expr!r}") for f in
                                (fields[2], *(fields[3:] or ["1", "1"])))
        if min(count, chunk, stride) < 1 or not pool:
            raise PlacementError(f"likwid {expr!r}: count, chunk and stride of at least 1, "
                                 "in a domain with PUs")
        # likwid's list holds at most as many as the machine's hardware threads
        picked, start, count = [], 0, min(count, len(domains["N"]))
        while len(picked) < count:  # likwid's walk: a chunk, then stride on, back to 0 at the end
            picked += [pool[(start + k) % len(pool)] for k in range(min(chunk, count - len(picked)))]
            start = start + stride if start + stride < len(pool) else 0
        return picked
    if len(fields) == 2 and fields[1] == "scatter":
        tag = fields[0]
        groups = [_numbered(topo, pus) for name, pus in domains.items()
                  if re.fullmatch(rf"{re.escape(tag)}[0-9]*", name) and pus]
        if not groups or tag not in "NSDCM":
            raise PlacementError(f"likwid {expr!r}: T:scatter with T one of N S D C M")
        return [group[i] for i in range(max(map(len, groups))) for group in groups
                if i < len(group)]
    if len(fields) == 2:
        pool = _numbered(topo, _domain(domains, fields[0], expr))
        picked = []
        for index in cpu_list(fields[1]):
            if index >= len(pool):
                raise PlacementError(f"likwid {expr!r}: domain {fields[0]} has {len(pool)} "
                                     f"hardware threads, no index {index}")
            picked.append(pool[index])
        return picked
    raise PlacementError(f"likwid {expr!r}: {part!r} is not a list, D:list, E:D:count[:chunk:"
                         "stride] or T:scatter")


def likwid_pus(topo: Topology, expr: str) -> list[int]:
    """The PUs of a ``likwid-pin -c`` expression on ``topo``, in thread order.

    >>> from pinbench.topology import load
    >>> topo = load("Package:2 Core:2 PU:2")
    >>> likwid_pus(topo, "S0:0-2"), likwid_pus(topo, "S0:0@S1:0"), likwid_pus(topo, "E:N:3:1:2")
    ([0, 2, 1], [0, 4], [0, 2, 4])
    >>> likwid_pus(topo, "S:scatter")
    [0, 4, 2, 6, 1, 5, 3, 7]
    """
    if not expr.strip():
        raise PlacementError("likwid: an empty expression")
    domains = likwid_domains(topo)
    return [pu for part in expr.strip().split("@")
            for pu in _likwid_part(topo, domains, part.strip(), expr)]
