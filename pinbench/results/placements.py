"""Placement files: ``placements/<bench>/t<N>/<strategy>.json``, written by the place stage.

One JSON object per (machine, benchmark, threads, strategy), read by the measuring process,
the plan and the report as a :class:`Placement`. Its fields:

- ``strategy``, ``threads``, ``topology`` (the spec it was made for), ``placeable``
  (the PUs a placement may use);
- ``pus``: entry i is thread i's PU (OS index); None for ``os`` (not bound) and ``random``;
- ``omp_places``: the ``OMP_PLACES`` value that pins thread i to ``pus[i]`` (made from
  ``pus``, written for readers of the file);
- ``J``: the objective the placement reaches (None without an affinity matrix, and for ``os``);
- ``seed``: METIS's, for the graph strategies;
- ``random``: ``seed``, ``pus_by_repetition`` (one list per repetition) and
  ``J_by_repetition`` (None without a matrix; ``J`` is then their mean);
- ``oversubscribed``: true when threads outnumber the placeable PUs (absent otherwise);
- a runtime's own policy (``close-threads``, ... :mod:`pinbench.place.policies`): ``policy``,
  the settings the run gets (``OMP_PROC_BIND``, ``OMP_PLACES``) in place of pinbench's
  binding, and ``places_by_runtime``, the PUs each runtime binds each thread to (``pus``:
  the first PU of each thread's place under libgomp, for drawings and J);
- ``regions``: the per-region strategies' (``per-region``, :mod:`pinbench.place.per_region`)
  parallel regions placed on their own, each ``{"key", "where", "pus"}`` (the region's key
  and source location, :mod:`pinbench.results.regions`, and thread i's PU while it runs);
  ``pus`` is then the whole program's placement, kept outside these regions (absent for
  every other strategy, and in files written before regions existed);
- ``left_out``: where the cell's trace failed, a strategy that needs the affinity matrix has no
  placement (``pus`` None) but this one line saying why, and is not measured there
  (:mod:`pinbench.results.traces`; absent otherwise);
- ``regions`` (``per-region``): the parallel regions placed on their own, each
  ``{"key": ..., "where": ..., "pus": [...]}`` (``key``: the region's call site,
  ``<module>+0x<file address>``; ``where``: its source location in words; ``pus``: thread
  i's PU in that region); ``pus`` is then the placement of everything else. Measured with
  the re-binding shim (:mod:`pinbench.measure.rebind`); absent otherwise;
- ``format``: the file's version (:mod:`pinbench.results.formats`).

The lowest object each pair of threads shares is not stored (N x N strings: 445 MB for a
cell of 2,048 threads, files of format 2 had it) but derived from the topology when needed
(:func:`shared_levels`). This module reads and writes the files and derives what they imply
without loading any placement algorithm or numerical library, so that the measuring process
can use it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pinbench.results import formats
from pinbench.topology import Topology


def omp_places(pus: list[int]) -> str:
    """The ``OMP_PLACES`` value that puts thread i on ``pus[i]`` under ``OMP_PROC_BIND=close``.

    >>> omp_places([3, 0, 5])
    '{3},{0},{5}'
    """
    return ",".join(f"{{{pu}}}" for pu in pus)


def shared_levels(topo: Topology, pus: list[int]) -> list[list[str]]:
    """``m[i][j]``: the type of the lowest object of ``topo`` that holds the PUs of threads i
    and j (``pus[i]``, ``pus[j]``; the PU itself when they share it), as
    :meth:`~pinbench.topology.Topology.lowest_shared` finds it for one pair. O(N^2); each
    distinct row is computed once, each object's threads filled from the root down.
    """
    chains = {pu: topo.ancestors(pu)[::-1] for pu in pus}  # root first
    below: dict[int, list[int]] = {}  # id of an object -> the threads on its PUs
    for thread, pu in enumerate(pus):
        for node in chains[pu]:
            below.setdefault(id(node), []).append(thread)
    rows: dict[int, list[str]] = {}
    for pu, chain in chains.items():
        row = [chain[0].type] * len(pus)
        for node in chain[1:]:
            for thread in below[id(node)]:
                row[thread] = node.type
        rows[pu] = row
    return [list(rows[pu]) for pu in pus]


@dataclass(frozen=True)
class Placement:
    """One strategy's placement of a benchmark's threads (a placement file's content)."""

    strategy: str
    threads: int
    topology: str
    placeable: list[int]
    pus: list[int] | None  #: thread i's PU; None: not bound (``os``), or one per repetition
    J: float | None
    seed: int | None = None
    pus_by_repetition: list[list[int]] | None = None  #: ``random``: a list per repetition
    J_by_repetition: list[float] | None = None
    oversubscribed: bool = False
    policy: dict[str, str] | None = None  #: a runtime's policy: its settings, not pinbench's
    places_by_runtime: dict[str, list[list[int]]] | None = None  #: a policy's, per runtime
    #: why the strategy has no placement in this cell (its trace failed: it needs the
    #: matrix), so is not measured there (:mod:`pinbench.results.traces`); None: placed
    left_out: str | None = None
    #: ``per-region``: the regions placed on their own (``key``, ``where``, ``pus``); None:
    #: every other strategy
    regions: list[dict] | None = None

    @property
    def per_repetition(self) -> bool:
        """Whether each repetition has a list of its own (``random``)."""
        return self.pus_by_repetition is not None

    def pus_for(self, repetition: int) -> list[int] | None:
        """The thread -> PU list of one repetition (None: not bound)."""
        return self.pus_by_repetition[repetition] if self.per_repetition else self.pus

    @property
    def example_pus(self) -> list[int] | None:
        """The list to show: its own, the first repetition's for ``random``."""
        return self.pus_for(0)

    @property
    def omp_places(self) -> str | None:
        """The ``OMP_PLACES`` value of :attr:`pus` (None when there is no one list)."""
        return None if self.pus is None else omp_places(self.pus)

    def line(self) -> str:
        """One human-readable line: strategy, its thread -> PU list, and J when known.

        >>> Placement("compact", 2, "t.xml", [0, 2], [0, 2], 1.5).line()
        '   compact: 0 2 (J 1.5)'
        >>> Placement("os", 2, "t.xml", [0, 2], None, None).line()
        '        os: not bound (the OS decides)'
        >>> Placement("mine", 2, "t.xml", [0, 2], None, None, left_out="trace failed").line()
        '      mine: left out (trace failed)'
        >>> Placement("regions", 2, "t.xml", [0, 2], [0, 2], 1.0,
        ...           regions=[{"key": "x+0x1", "where": "x.c:3 (f)", "pus": [2, 0]}]).line()
        '   regions: 0 2 (J 1), and x.c:3 (f) on 2 0'
        """
        name = f"{self.strategy:>10}"
        if self.left_out:
            return f"{name}: left out ({self.left_out})"
        if self.pus:
            line, objective_label = f"{name}: {' '.join(map(str, self.pus))}", "J"
        elif self.per_repetition:
            line = (f"{name}: fresh per repetition (seed {self.seed}), "
                    f"e.g. {' '.join(map(str, self.pus_by_repetition[0]))}")
            objective_label = "mean J"
        else:
            return f"{name}: not bound (the OS decides)"
        line = line if self.J is None else f"{line} ({objective_label} {self.J:.6g})"
        return "".join([line, *(f", and {region['where']} on {' '.join(map(str, region['pus']))}"
                                for region in self.regions or [])])

    def to_json(self) -> dict:
        """The file's object (without its version), keys in the order the files have them:
        the optional fields only where the strategy has them."""
        data = {"strategy": self.strategy, "threads": self.threads, "topology": self.topology,
                "placeable": self.placeable, "pus": self.pus, "omp_places": self.omp_places,
                "J": self.J}
        if self.seed is not None:
            data["seed"] = self.seed
        if self.per_repetition:
            data.update(pus_by_repetition=self.pus_by_repetition,
                        J_by_repetition=self.J_by_repetition)
        if self.oversubscribed:
            data["oversubscribed"] = True
        if self.policy is not None:
            data.update(policy=self.policy, places_by_runtime=self.places_by_runtime)
        if self.left_out:
            data["left_out"] = self.left_out
        if self.regions is not None:
            data["regions"] = self.regions
        return data

    @classmethod
    def from_json(cls, data: dict) -> Placement:
        """The placement of a file's object (current version; ``omp_places`` is made from
        ``pus``). TypeError for a missing or unknown field."""
        return cls(**{name: value for name, value in data.items() if name != "omp_places"})


def write_placement(placement: Placement, path: Path | str) -> None:
    """Write one placement file."""
    Path(path).write_text(json.dumps(formats.stamp("placement", placement.to_json()),
                                     indent=1) + "\n")


def read_placement(path: Path | str) -> Placement:
    """Read one placement file, of any version (:mod:`pinbench.results.formats`; FormatError
    for one this pinbench does not know, or no placement)."""
    content = formats.read("placement", json.loads(Path(path).read_text()), path)
    try:
        return Placement.from_json(content)
    except TypeError as exc:
        raise formats.FormatError(f"{path}: not a placement file ({exc})") from None
