"""The machine's processing-unit tree, read from hwloc.

One parser serves the three sources a campaign may name: the real machine
(``lstopo-no-graphics --of xml``), a user's hwloc XML file, and an hwloc
synthetic description (``lstopo-no-graphics --input "<string>" --of xml -``).
Only the CPU side of the tree is kept (Machine, Group, Package, Die, caches,
Core, PU); NUMA nodes, which hwloc 2 attaches as memory children, are
recorded as a flag on the object they hang from.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

LSTOPO = "lstopo-no-graphics"
#: hwloc object types that are not part of the processing-unit tree.
NON_CPU_TYPES = frozenset(
    {"NUMANode", "MemCache", "Bridge", "PCIDev", "OSDev", "Misc"}
)


class TopologyError(Exception):
    """The topology could not be obtained or makes no sense."""


@dataclass(eq=False)
class Node:
    """One object of the CPU tree."""

    type: str
    os_index: int | None
    children: list["Node"] = field(default_factory=list)
    parent: "Node | None" = field(default=None, repr=False)
    numa: bool = False  #: a NUMA node is attached to this object


def parse_cpuset(text: str) -> frozenset[int]:
    """Decode an hwloc bitmap string (``0x00000003`` or ``0xff,0xffffffff``)."""
    words = [w for w in text.strip().split(",") if w]
    bits: set[int] = set()
    for shift, word in enumerate(reversed(words)):
        if word.startswith("0xf...f"):
            raise TopologyError(f"infinite cpuset {text!r} is not supported")
        value = int(word, 16)
        base = 32 * shift
        while value:
            low = value & -value
            bits.add(base + low.bit_length() - 1)
            value ^= low
    return frozenset(bits)


def _build(element: ET.Element, parent: Node | None) -> Node:
    os_index = element.get("os_index")
    node = Node(element.get("type", "?"), int(os_index) if os_index is not None else None,
                parent=parent)
    for child in element.findall("object"):
        ctype = child.get("type")
        if ctype == "NUMANode":
            node.numa = True
        elif ctype not in NON_CPU_TYPES:
            node.children.append(_build(child, node))
    return node


class Topology:
    """The CPU tree of one machine and the PUs a process may use on it."""

    def __init__(self, root: Node, allowed: frozenset[int] | None = None,
                 source: str = "", xml: str = ""):
        self.root = root
        self.source = source
        self.xml = xml
        self._leaves: list[Node] = []
        self._collect(root)
        if not self._leaves:
            raise TopologyError(f"{source or 'topology'}: no PU in the tree")
        ids = [pu.os_index for pu in self._leaves]
        if None in ids or len(set(ids)) != len(ids):
            raise TopologyError(f"{source or 'topology'}: PUs without unique OS indexes")
        self._by_index = {pu.os_index: pu for pu in self._leaves}
        all_pus = frozenset(self._by_index)
        self.allowed = all_pus if allowed is None else all_pus & allowed
        if not self.allowed:
            raise TopologyError(f"{source or 'topology'}: no PU may be used by this process")

    def _collect(self, node: Node) -> None:
        if node.type == "PU":
            self._leaves.append(node)
        for child in node.children:
            self._collect(child)

    @property
    def pus(self) -> list[int]:
        """OS indexes of every PU, in tree (logical) order."""
        return [pu.os_index for pu in self._leaves]

    @property
    def placeable(self) -> list[int]:
        """OS indexes of the PUs a placement may use, in tree order."""
        return [pu.os_index for pu in self._leaves if pu.os_index in self.allowed]

    def ancestors(self, pu: int) -> list[Node]:
        """The PU's node and its ancestors, leaf first, root last."""
        node: Node | None = self._by_index[pu]
        chain = []
        while node is not None:
            chain.append(node)
            node = node.parent
        return chain

    def sub_ids(self, pu: int) -> tuple[int, ...]:
        """The PU's rank among its siblings at each level, root first.

        This is the labelling of LLVM's ``kmp_affinity.cpp``: compact sorts PUs
        by these ids root first, scatter leaf first.
        """
        chain = self.ancestors(pu)
        return tuple(
            node.parent.children.index(node) for node in reversed(chain) if node.parent
        )

    def lowest_shared(self, a: int, b: int) -> Node:
        """The lowest object of the tree that holds both PUs."""
        above_a = {id(n): n for n in self.ancestors(a)}
        for node in self.ancestors(b):
            if id(node) in above_a:
                return node
        raise TopologyError(f"PUs {a} and {b} share no ancestor")

    @cached_property
    def level_names(self) -> list[str]:
        """Object types from the root down along the first PU's branch."""
        return [n.type for n in reversed(self.ancestors(self.pus[0]))]

    def summary(self) -> str:
        """A one-line description: counts per level and placeable PUs."""
        counts: dict[str, int] = {}

        def walk(node: Node) -> None:
            counts[node.type] = counts.get(node.type, 0) + 1
            for child in node.children:
                walk(child)

        walk(self.root)
        levels = " ".join(f"{t}:{counts[t]}" for t in self.level_names if t != "Machine")
        return f"{levels}; {len(self.placeable)} of {len(self.pus)} PUs placeable"


def parse_xml(text: str, source: str = "", restrict_to: frozenset[int] | None = None) -> Topology:
    """Parse hwloc XML (v2 format) into a :class:`Topology`."""
    try:
        root_el = ET.fromstring(text)
    except ET.ParseError as exc:
        raise TopologyError(f"{source or 'topology'}: not valid XML ({exc})") from None
    machine = root_el.find("object")
    if root_el.tag != "topology" or machine is None:
        raise TopologyError(f"{source or 'topology'}: not an hwloc topology XML")
    allowed = machine.get("allowed_cpuset") or machine.get("cpuset")
    allowed_set = parse_cpuset(allowed) if allowed else None
    if restrict_to is not None:
        allowed_set = restrict_to if allowed_set is None else allowed_set & restrict_to
    return Topology(_build(machine, None), allowed_set, source, text)


def _lstopo(args: list[str]) -> str:
    if shutil.which(LSTOPO) is None:
        raise TopologyError(f"{LSTOPO} not found: install Debian's hwloc-nox (or hwloc)")
    proc = subprocess.run([LSTOPO, *args, "--of", "xml", "-"],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        msg = proc.stderr.strip().splitlines()
        raise TopologyError(f"{LSTOPO} failed: {msg[-1] if msg else proc.returncode}")
    return proc.stdout


def is_synthetic(spec: str) -> bool:
    """True when a topology spec is an hwloc synthetic description."""
    return ":" in spec and not spec.endswith(".xml")


def topology_xml(spec: str) -> str:
    """hwloc XML for ``auto`` (this machine), an XML file, or a synthetic string."""
    if spec == "auto":
        return _lstopo(["--restrict", "binding"])
    if is_synthetic(spec):
        return _lstopo(["--input", spec])
    path = Path(spec)
    if not path.is_file():
        raise TopologyError(f"topology file {spec} does not exist")
    return path.read_text()


def load(spec: str) -> Topology:
    """The topology named by a campaign's ``topology`` value.

    For ``auto`` the placeable PUs are further restricted to this process's
    CPU affinity (cgroup cpusets and ``taskset`` alike).
    """
    restrict = frozenset(os.sched_getaffinity(0)) if spec == "auto" else None
    return parse_xml(topology_xml(spec), spec, restrict)


def save(topo: Topology, path: Path, log: Path | None = None) -> None:
    """Write a topology's hwloc XML, so later stages read exactly what was measured.

    ``log``, when given, receives the one-line :meth:`Topology.summary`.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(topo.xml)
    if log:
        log.write_text(topo.summary() + "\n")


def main(argv: list[str] | None = None) -> int:
    """``python -m affinity.topology SPEC [--out FILE]``: save or describe a topology."""
    parser = argparse.ArgumentParser(prog="python -m affinity.topology", description=main.__doc__)
    parser.add_argument("spec", help='"auto", an hwloc XML file, or a synthetic description')
    parser.add_argument("--out", type=Path, help="write the hwloc XML here")
    args = parser.parse_args(argv)
    try:
        topo = load(args.spec)
    except TopologyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.out:
        save(topo, args.out)
    print(topo.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
