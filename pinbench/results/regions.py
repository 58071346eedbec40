"""Per-region affinity: ``<machine>/affinity/<bench>/t<N>.regions.json``, beside ``t<N>.csv``.

A tracer run with ``pinbench trace --per-region`` (:mod:`pinbench.trace.regions`) writes,
besides the whole program's matrix, one matrix per OpenMP parallel region::

    {"format": 1, "threads": N, "unattributed_share": 0.0,
     "regions": [{"key": "phases+0x2757", "where": "phases.c:128 (main)", "instances": 1,
                  "access_share": 0.49, "time_share": 0.5, "time_s": 0.01,
                  "matrix": [[...], ...]}, ...]}

- ``key``: the region, ``<module basename>+0x<hex>``, the file address (as ``addr2line -e``
  takes it) of the return address of the program's call into the OpenMP runtime's parallel
  entry (``GOMP_parallel`` and friends); ``where``: that call resolved to ``file:line
  (function)`` where debug information allows, else the key;
- ``instances``: how often the region ran; ``access_share``: its counted accesses over the
  whole program's; ``time_share``: its time over all the regions' (the calling thread's wall
  time from the call to its return, under the tracer); ``time_s``: that time, in seconds;
- ``matrix``: its N x N affinity matrix, the same weight as the whole program's;
- ``unattributed_share``: the accesses counted outside every listed region.

The regions are in the order the program first ran them. The whole program's ``t<N>.csv``
stays what it was: the matrix of all counted accesses. This module reads and writes the file
and compares matrices without any numerical library.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from pinbench.errors import InputError

#: The regions file's version.
FORMAT = 1


class RegionsError(InputError):
    """A regions file that is missing or unusable (one line: which file, what is wrong)."""


@dataclass(frozen=True)
class Region:
    """One parallel region of a traced program."""

    key: str
    where: str
    instances: int
    access_share: float
    time_share: float
    time_s: float
    matrix: list[list[float]]


@dataclass(frozen=True)
class Regions:
    """The parallel regions of one trace (a regions file's content)."""

    threads: int
    regions: list[Region]
    unattributed_share: float = 0.0


def regions_path(matrix_csv: Path | str) -> Path:
    """The regions file of an affinity matrix file: ``t<N>.csv`` -> ``t<N>.regions.json``."""
    return Path(matrix_csv).with_suffix(".regions.json")


def region_key(module: str, address: int) -> str:
    """The key of the region whose fork call returns to file address ``address`` of ``module``.

    >>> region_key("/tmp/bin/phases", 0x2757)
    'phases+0x2757'
    """
    return f"{Path(module).name}+0x{address:x}"


def write_regions(regions: Regions, path: Path | str) -> None:
    """Write a regions file (through a temporary file renamed into place)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"format": FORMAT, **asdict(regions)}) + "\n")
    tmp.replace(path)


def read_regions(path: Path | str) -> Regions:
    """Read a regions file; RegionsError (one line) for a missing, unreadable or malformed one."""
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise RegionsError(f"{path}: no per-region trace (trace with --per-region; in a "
                           "campaign, list a per-region strategy)") from None
    except (OSError, ValueError) as exc:
        raise RegionsError(f"{path}: not a regions file ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, dict) else None
        raise RegionsError(f"{path}: not a regions file of format {FORMAT} (format {found})")
    try:
        threads = data["threads"]
        regions = [Region(**region) for region in data["regions"]]
        result = Regions(threads, regions, data.get("unattributed_share", 0.0))
    except (KeyError, TypeError) as exc:
        raise RegionsError(f"{path}: not a regions file (missing or unknown field {exc})") from None
    for region in regions:
        square = len(region.matrix) == threads and all(
            isinstance(row, list) and len(row) == threads for row in region.matrix)
        if not square:
            raise RegionsError(f"{path}: region {region.key}'s matrix is not {threads} x "
                               f"{threads}")
        if not 0 <= region.access_share <= 1 or not 0 <= region.time_share <= 1:
            raise RegionsError(f"{path}: region {region.key}'s shares are not between 0 and 1")
    return result


def distance(a: list[list[float]], b: list[list[float]]) -> float:
    """How differently two affinity matrices spread their weight: half the sum of the absolute
    differences of the two matrices, each divided by its total (0: the same shares, 1: no pair
    of threads in common); 1 when one is all zero and the other not, 0 when both are.

    >>> distance([[0, 2], [2, 0]], [[0, 5], [5, 0]])
    0.0
    >>> distance([[0, 1, 0], [1, 0, 0], [0, 0, 0]], [[0, 0, 1], [0, 0, 0], [1, 0, 0]])
    1.0
    """
    total_a = sum(map(sum, a))
    total_b = sum(map(sum, b))
    if not total_a or not total_b:
        return float(bool(total_a) != bool(total_b))
    return 0.5 * sum(abs(x / total_a - y / total_b)
                     for row_a, row_b in zip(a, b, strict=True)
                     for x, y in zip(row_a, row_b, strict=True))
