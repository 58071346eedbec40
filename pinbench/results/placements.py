"""Placement files: ``placements/<bench>/t<N>/<strategy>.json``, written by the place stage.

One JSON object per (machine, benchmark, threads, strategy), read by the
measuring process, the plan and the report. Its fields:

- ``strategy``, ``threads``, ``topology`` (the spec it was made for), ``placeable``
  (the PUs a placement may use);
- ``pus``: entry i is thread i's PU (OS index); None for ``os`` (not bound) and ``random``;
- ``omp_places``: the ``OMP_PLACES`` value that pins thread i to ``pus[i]``;
- ``J``: the objective the placement reaches (None without an affinity matrix, and for ``os``);
- strategies with one list: ``shared_level`` (N x N: type of the lowest hwloc object
  holding the PUs of threads i and j), and ``seed`` (METIS's) for the graph strategies;
- ``random``: ``seed``, ``pus_by_repetition`` (one list per repetition) and
  ``J_by_repetition`` (``J`` is then their mean).

This module reads and writes the files and nothing more, so the measuring
process can read them without loading any placement algorithm.
"""
from __future__ import annotations

import json
from pathlib import Path


def omp_places(pus: list[int]) -> str:
    """The ``OMP_PLACES`` value that puts thread i on ``pus[i]`` under ``OMP_PROC_BIND=close``.

    >>> omp_places([3, 0, 5])
    '{3},{0},{5}'
    """
    return ",".join(f"{{{pu}}}" for pu in pus)


def pus_for(record: dict, repetition: int) -> list[int] | None:
    """The thread -> PU list a placement prescribes for one repetition (None for ``os``)."""
    if "pus_by_repetition" in record:
        return record["pus_by_repetition"][repetition]
    return record["pus"]


def example_pus(record: dict) -> list[int] | None:
    """The list to show for a placement: its own, the first repetition's for ``random``."""
    return pus_for(record, 0)


def placement_line(record: dict) -> str:
    """One human-readable line: strategy, its thread -> PU list, and J when known.

    >>> placement_line({"strategy": "compact", "pus": [0, 2], "J": 1.5})
    '   compact: 0 2 (J 1.5)'
    >>> placement_line({"strategy": "os", "pus": None})
    '        os: not bound (the OS decides)'
    """
    name = f"{record['strategy']:>10}"
    if record.get("pus"):
        line, objective_label = f"{name}: {' '.join(map(str, record['pus']))}", "J"
    elif "pus_by_repetition" in record:
        first = record["pus_by_repetition"][0]
        line = (f"{name}: fresh per repetition (seed {record['seed']}), "
                f"e.g. {' '.join(map(str, first))}")
        objective_label = "mean J"
    else:
        return f"{name}: not bound (the OS decides)"
    return line if record.get("J") is None else f"{line} ({objective_label} {record['J']:.6g})"


def write_placement(record: dict, path: Path | str) -> None:
    """Write one placement file."""
    Path(path).write_text(json.dumps(record, indent=1) + "\n")


def read_placement(path: Path | str) -> dict:
    """Read one placement file."""
    return json.loads(Path(path).read_text())
