"""The machine's processing-unit tree, read from hwloc.

One parser serves the three sources a campaign may name: the real machine
(``lstopo-no-graphics --restrict binding --of xml``), a user's hwloc XML file
and an hwloc synthetic description. Files and synthetic strings are first
loaded by hwloc itself (``lstopo-no-graphics --if xml|synthetic --input ...
--disallowed --of xml -``), so that every format hwloc reads (hwloc 1.x XML,
where NUMA nodes are parents of packages, and 2.x XML) reaches the parser as
hwloc 2 XML, and what hwloc cannot load stops with one line naming the input.
Only the CPU side of the tree is kept (Machine, Group, Package, Die, caches,
Core, PU); NUMA nodes, which hwloc 2 attaches as memory children, are
recorded as a flag on the object they hang from.

A PU is placeable when hwloc lists it as allowed (the root's
``allowed_cpuset``: ``hwloc-calc -i FILE --po -I pu all`` lists the same PUs)
and, for ``auto``, when this process's CPU affinity holds it. Offline PUs are
no objects of an hwloc 2 tree at all. Like LLVM's libomp, which only sees the
OS procs of its affinity mask (``openmp/runtime/src/kmp_affinity.cpp``), the
strategies work on the tree restricted to the placeable PUs
(:attr:`Topology.root`): an object with no placeable PU below it is left out,
so a PU's rank among its siblings (:meth:`Topology.sub_ids`) counts placeable
siblings only.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from pinbench.errors import PinbenchError

LSTOPO = "lstopo-no-graphics"
#: The most PUs a topology may have: planning a campaign reads its machines on every call
#: (``-n`` too), which takes 4 s at 8,192 PUs, 53 s at 32,768 and grows faster than the PUs
#: (230 s and 5 GB at 100,000). ``PINBENCH_MAX_PUS`` sets another limit.
MAX_PUS = 8192
#: The largest topology XML file read, in bytes per PU of the limit (64 MiB for 8,192 PUs):
#: hwloc writes 700 bytes per PU at 8,192 PUs, more on wider machines (longer cpusets).
XML_BYTES_PER_PU = 8192
#: hwloc object types that are not part of the processing-unit tree.
NON_CPU_TYPES = frozenset(
    {"NUMANode", "MemCache", "Bridge", "PCIDev", "OSDev", "Misc"}
)


class TopologyError(PinbenchError):
    """The topology could not be obtained or makes no sense."""


@dataclass(eq=False)
class Node:
    """One object of the CPU tree."""

    type: str
    os_index: int | None
    children: list["Node"] = field(default_factory=list)
    parent: "Node | None" = field(default=None, repr=False)
    numa: bool = False  #: a NUMA node is attached to this object


#: One word of an hwloc bitmap string: up to 32 bits in hex, ``0x`` optional, empty for 0.
_CPUSET_WORD = re.compile(r"(?:0[xX])?([0-9a-fA-F]{0,8})")


def parse_cpuset(text: str) -> frozenset[int]:
    """Decode an hwloc bitmap string, as ``hwloc_bitmap_sscanf`` does.

    The words are 32 bits each, most significant first, and an empty word is
    32 zero bits:

    >>> sorted(parse_cpuset("0x00000001,,0x00000003"))
    [0, 1, 64]
    """
    words = text.strip().split(",")
    if words[0].startswith("0xf...f"):
        raise TopologyError(f"infinite cpuset {text!r} is not supported")
    bits: set[int] = set()
    for shift, word in enumerate(reversed(words)):
        match = _CPUSET_WORD.fullmatch(word)
        if match is None:
            raise TopologyError(f"cpuset {text!r}: {word!r} is not a 32-bit hex word")
        value = int(match.group(1) or "0", 16)
        bits.update(32 * shift + bit for bit in range(32) if value >> bit & 1)
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


def _pus(node: Node) -> list[Node]:
    """The PUs below ``node``, in tree (logical) order."""
    if node.type == "PU":
        return [node]
    return [pu for child in node.children for pu in _pus(child)]


def subtree(node: Node) -> list[Node]:
    """Every object of the subtree, ``node`` first, in tree order."""
    return [node, *(below for child in node.children for below in subtree(child))]


def pus_below(node: Node) -> list[int]:
    """The OS indexes of the PUs below ``node``, in tree (logical) order."""
    return [pu.os_index for pu in _pus(node)]


def _restricted(node: Node, allowed: frozenset[int], parent: Node | None) -> Node | None:
    """A copy of the subtree holding only the ``allowed`` PUs, or None when it holds none."""
    copy = Node(node.type, node.os_index, parent=parent, numa=node.numa)
    if node.type == "PU":
        return copy if node.os_index in allowed else None
    copy.children = [kept for child in node.children
                     if (kept := _restricted(child, allowed, copy)) is not None]
    return copy if copy.children else None


@dataclass(frozen=True)
class CpuKind:
    """One kind of CPU of a hybrid machine (hwloc's ``cpukind``): a name and its PUs."""

    name: str  #: hwloc's ``CoreType`` (``IntelCore``, ``IntelAtom``), else its frequency or rank
    pus: frozenset[int]


def _kinds(root_el: ET.Element) -> tuple[CpuKind, ...]:
    """The ``cpukind`` elements of an hwloc 2 XML, in hwloc's order (least efficient first)."""
    kinds = []
    for rank, element in enumerate(root_el.findall("cpukind")):
        info = {i.get("name"): i.get("value") for i in element.findall("info")}
        name = info.get("CoreType") or (f"{info['FrequencyMaxMHz']} MHz"
                                        if "FrequencyMaxMHz" in info else f"kind {rank}")
        kinds.append(CpuKind(name, parse_cpuset(element.get("cpuset", ""))))
    return tuple(kinds)


class Topology:
    """The CPU tree of one machine and the PUs a process may use on it.

    ``whole`` is the tree as hwloc describes it; ``root`` is that tree
    restricted to the placeable PUs (objects without a placeable PU below
    them left out), the tree every strategy, the labelling and the objective
    work on. On an unrestricted machine both hold the same objects.

    ``kinds``: the CPU kinds of a hybrid machine, least efficient first, as hwloc ranks them
    (none, or one, on other machines).
    """

    def __init__(self, whole: Node, allowed: frozenset[int] | None = None,
                 source: str = "", xml: str = "", kinds: tuple[CpuKind, ...] = ()):
        self.whole = whole
        self.source = source
        self.xml = xml
        self.kinds = kinds
        name = source or "topology"
        leaves = _pus(whole)
        if not leaves:
            raise TopologyError(f"{name}: no PU in the tree")
        ids = [pu.os_index for pu in leaves]
        if None in ids or len(set(ids)) != len(ids):
            raise TopologyError(f"{name}: PUs without unique OS indexes")
        self._all = ids
        everything = frozenset(ids)
        self.allowed = everything if allowed is None else everything & allowed
        root = _restricted(whole, self.allowed, None)
        if root is None:
            raise TopologyError(f"{name}: no PU may be used (all disallowed, or outside "
                                "this process's CPU affinity)")
        self.root = root
        self._leaves = _pus(root)
        self._by_index = {pu.os_index: pu for pu in self._leaves}
        self._sub_ids: dict[int, tuple[int, ...]] = {}  # filled by the first sub_ids call
        self._on_kind: dict[frozenset[int], Topology] = {}  # on_best_kind's, made once

    @property
    def pus(self) -> list[int]:
        """OS indexes of every PU of the whole tree, placeable or not, in tree (logical) order."""
        return list(self._all)

    @property
    def placeable(self) -> list[int]:
        """OS indexes of the PUs a placement may use, in tree order."""
        return [pu.os_index for pu in self._leaves]

    def ancestors(self, pu: int) -> list[Node]:
        """The placeable PU's node and its ancestors in :attr:`root`, leaf first, root last."""
        node: Node | None = self._by_index[pu]
        chain = []
        while node is not None:
            chain.append(node)
            node = node.parent
        return chain

    def sub_ids(self, pu: int) -> tuple[int, ...]:
        """The placeable PU's rank among its siblings at each level of :attr:`root`, root first.

        This is the labelling of LLVM's ``kmp_affinity.cpp`` (``_set_sub_ids``),
        which ranks over the OS procs of libomp's mask only: compact sorts PUs
        by these ids root first, scatter leaf first.
        """
        if not self._sub_ids:  # every PU's at once, in one walk of the tree
            def label(node: Node, ids: tuple[int, ...]) -> None:
                if not node.children:
                    self._sub_ids[node.os_index] = ids
                for rank, child in enumerate(node.children):
                    label(child, (*ids, rank))

            label(self.root, ())
        return self._sub_ids[pu]

    def core(self, pu: int) -> Node:
        """The PU's Core ancestor, or the PU itself when the tree has no Core above it."""
        chain = self.ancestors(pu)
        return next((node for node in chain if node.type == "Core"), chain[0])

    def lowest_shared(self, a: int, b: int) -> Node:
        """The lowest object of :attr:`root` that holds both placeable PUs."""
        above_a = {id(n): n for n in self.ancestors(a)}
        for node in self.ancestors(b):
            if id(node) in above_a:
                return node
        raise TopologyError(f"PUs {a} and {b} share no ancestor")

    @property
    def hybrid(self) -> bool:
        """Whether the machine has more than one kind of CPU with placeable PUs."""
        return sum(1 for kind in self.kinds if kind.pus & self.allowed) > 1

    def kind_of(self, pu: int) -> str:
        """The name of the PU's CPU kind ("" on a machine of one kind)."""
        return next((kind.name for kind in self.kinds if pu in kind.pus), "")

    def off_best_kind(self, pus: list[int]) -> int:
        """How many of ``pus`` are not on the most efficient kind (0 on a machine of one kind)."""
        if not self.hybrid:
            return 0
        best = self.kinds[-1].pus
        return sum(1 for pu in pus if pu not in best)

    def on_best_kind(self, threads: int) -> Topology:
        """This machine restricted to its most efficient kind when ``threads`` fit on its
        placeable PUs there (so a strategy fills P-cores, hardware threads included, before an
        E-core); itself otherwise, and on a machine of one kind."""
        if not self.hybrid:
            return self
        best = self.allowed & self.kinds[-1].pus
        if threads > len(best):
            return self
        if best not in self._on_kind:
            self._on_kind[best] = Topology(self.whole, best, self.source, self.xml, self.kinds)
        return self._on_kind[best]

    def kinds_line(self) -> str:
        """The kinds and their placeable PUs, most efficient first ("" on a machine of one
        kind): ``CPU kinds: IntelCore 12 PUs (most efficient), IntelAtom 8 PUs``."""
        if not self.hybrid:
            return ""
        parts = [f"{kind.name} {len(kind.pus & self.allowed)} PUs"
                 + (" (most efficient)" if rank == 0 else "")
                 for rank, kind in enumerate(reversed(self.kinds)) if kind.pus & self.allowed]
        return "CPU kinds: " + ", ".join(parts)

    @cached_property
    def level_names(self) -> list[str]:
        """Object types from the root down along the first placeable PU's branch."""
        return [n.type for n in reversed(self.ancestors(self.placeable[0]))]

    def summary(self) -> str:
        """A one-line description: objects per level of the whole tree, and placeable PUs.

        Nested levels of one type (Groups in Groups) are counted apart.
        """
        counts: dict[tuple[str, int], int] = {}  # (type, ancestors of that type): objects

        def walk(node: Node, nesting: dict[str, int]) -> None:
            key = (node.type, nesting.get(node.type, 0))
            counts[key] = counts.get(key, 0) + 1
            inside = nesting | {node.type: key[1] + 1}
            for child in node.children:
                walk(child, inside)

        walk(self.whole, {})
        levels: list[str] = []
        seen: dict[str, int] = {}
        for name in self.level_names:
            seen[name] = seen.get(name, -1) + 1
            if name != "Machine":
                levels.append(f"{name}:{counts[name, seen[name]]}")
        kinds = f"; {self.kinds_line()}" if self.hybrid else ""
        return f"{' '.join(levels)}; {len(self.placeable)} of {len(self.pus)} PUs placeable{kinds}"


def parse_xml(text: str, source: str = "", restrict_to: frozenset[int] | None = None) -> Topology:
    """Parse hwloc 2 XML, as hwloc writes it, into a :class:`Topology`.

    The placeable PUs are those of the root's ``allowed_cpuset`` (all PUs
    when it is absent), further restricted to ``restrict_to`` when given.
    Other XML (hwloc 1.x) goes through :func:`load`, which lets hwloc convert it.
    """
    name = source or "topology"
    try:
        root_el = ET.fromstring(text)
    except ET.ParseError as exc:
        raise TopologyError(f"{name}: not valid XML ({exc})") from None
    machine = root_el.find("object")
    if root_el.tag != "topology" or machine is None:
        raise TopologyError(f"{name}: not an hwloc topology XML")
    version = root_el.get("version", "1.x")
    if not version.startswith("2."):
        raise TopologyError(f"{name}: hwloc XML version {version}, not 2.x "
                            "(load() converts any XML hwloc reads)")
    allowed = machine.get("allowed_cpuset") or machine.get("cpuset")
    allowed_set = parse_cpuset(allowed) if allowed else None
    if restrict_to is not None:
        allowed_set = restrict_to if allowed_set is None else allowed_set & restrict_to
    return Topology(_build(machine, None), allowed_set, source, text, _kinds(root_el))


def _hwloc_version() -> str:
    """The installed hwloc's version, e.g. ``2.9.0``."""
    proc = subprocess.run([LSTOPO, "--version"], capture_output=True, text=True, check=False)
    return proc.stdout.split()[-1] if proc.stdout.strip() else "(unknown version)"


def _lstopo(args: list[str], subject: str, input_name: str = "") -> str:
    """hwloc 2 XML of what ``lstopo-no-graphics ARGS`` loads.

    When hwloc cannot load it, one TopologyError line names ``subject``, the
    installed hwloc's version and hwloc's reason: its messages about the file
    ``input_name`` (hwloc and libxml2 start those with the file's path or
    name), else its first message.
    """
    if shutil.which(LSTOPO) is None:
        raise TopologyError(f"{LSTOPO} not found: install Debian's hwloc-nox (or hwloc)")
    proc = subprocess.run([LSTOPO, *args, "--of", "xml", "-"], capture_output=True,
                          text=True, errors="replace", check=False)
    if proc.returncode == 0:
        return proc.stdout
    lines = [line.strip() for line in proc.stderr.splitlines() if line.strip()]
    names = sorted({input_name, Path(input_name).name}, key=len, reverse=True) if input_name else []
    about = []
    for line in lines:
        name = next((n for n in names if line.startswith(f"{n}:")), None)
        if name is not None:
            about.append(line[len(name) + 1:].strip())
    about = about or lines[:1] or [f"exit status {proc.returncode}"]
    reason = "; ".join(about[:3]) + (f" (and {len(about) - 3} more)" if len(about) > 3 else "")
    raise TopologyError(f"{LSTOPO} failed on {subject} (hwloc {_hwloc_version()}): {reason}")


def is_synthetic(spec: str) -> bool:
    """True when a topology spec is an hwloc synthetic description."""
    return ":" in spec and not spec.endswith(".xml")


def max_pus() -> int:
    """The most PUs a topology may have (:data:`MAX_PUS`, or ``PINBENCH_MAX_PUS``)."""
    value = os.environ.get("PINBENCH_MAX_PUS", str(MAX_PUS))
    if not value.isdigit() or int(value) < 1:
        raise TopologyError(f"PINBENCH_MAX_PUS={value!r} is not a positive whole number")
    return int(value)


def _too_large(subject: str, size: str, limit: str) -> TopologyError:
    """The one line refusing a topology of ``size`` (its PUs or its bytes) over ``limit``."""
    return TopologyError(f"{subject} has {size}, more than pinbench reads ({limit}; "
                         "PINBENCH_MAX_PUS sets another limit)")


def _check_pus(subject: str, pus: int) -> None:
    """TopologyError when a topology of ``pus`` PUs exceeds :func:`max_pus`."""
    if pus > max_pus():
        raise _too_large(subject, f"{pus:,} PUs", f"{max_pus():,} PUs")


def synthetic_pus(spec: str) -> int:
    """The PUs of an hwloc synthetic description: the product of its levels' arities (its
    memory children ``[...]`` and attributes ``(...)`` left out), without loading it.

    >>> synthetic_pus("Package:2 [NUMANode] Core:4(indexes=0:4) PU:2"), synthetic_pus("pu:1")
    (16, 1)
    """
    levels = re.sub(r"\[[^\]]*\]|\([^)]*\)", " ", spec).split()
    pus = 1
    for level in levels:
        arity = level.rpartition(":")[2]
        if arity.isdigit():
            pus *= int(arity)
    return pus


def _check_text_file(path: str) -> None:
    """TopologyError unless ``path`` is a readable file whose start is text (UTF-8, no NUL byte).

    hwloc would report binary data as dozens of libxml2 errors: one line says it instead.
    """
    try:
        if not Path(path).is_file():  # not open(): a FIFO would block
            raise TopologyError(f"topology file {path} does not exist")
        with open(path, "rb") as handle:
            head = handle.read(1 << 16)
    except OSError as exc:
        raise TopologyError(f"topology file {path} cannot be read ({exc.strerror})") from None
    nul = head.find(b"\0")
    if nul >= 0:
        raise TopologyError(f"topology file {path} is binary data, not hwloc XML text "
                            f"(a NUL byte at offset {nul})")
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 3 or exc.reason != "unexpected end of data":
            raise TopologyError(f"topology file {path} is binary data, not hwloc XML text "
                                f"(byte {head[exc.start]:#04x} at offset {exc.start})") from None


def topology_xml(spec: str) -> str:
    """hwloc 2 XML for ``auto`` (this machine), an XML file, or a synthetic string.

    Files and synthetic strings are loaded by hwloc with their disallowed PUs
    (``--disallowed``): the XML keeps the whole machine and marks what is
    allowed in the root's ``allowed_cpuset``. A topology of more than :func:`max_pus`
    PUs is refused in one line, before hwloc loads it where its size can be known first
    (a synthetic string's arities, a file's bytes and PU objects).
    """
    limit = max_pus()  # a bad PINBENCH_MAX_PUS is said before anything is read
    if spec == "auto":
        subject, args = "this machine", ["--restrict", "binding"]
    elif is_synthetic(spec):
        subject = f"synthetic topology {spec!r}"
        _check_pus(subject, synthetic_pus(spec))
        args = ["--if", "synthetic", "--input", spec, "--disallowed"]
    else:
        subject = f"topology file {spec}"
        _check_text_file(spec)
        size = os.path.getsize(spec)
        if size > limit * XML_BYTES_PER_PU:
            raise _too_large(subject, f"{size:,} bytes",
                             f"{limit * XML_BYTES_PER_PU:,} bytes for {limit:,} PUs")
        _check_pus(subject, Path(spec).read_bytes().count(b'type="PU"'))
        args = ["--if", "xml", "--input", spec, "--disallowed"]
    xml = _lstopo(args, subject, "" if spec == "auto" or is_synthetic(spec) else spec)
    _check_pus(subject, xml.count('type="PU"'))
    return xml


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
