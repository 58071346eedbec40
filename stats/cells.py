"""One cell's runs described: the times that count, their statistics, and what was left out.

A cell is one (machine, benchmark, threads, strategy). Only runs that count
(:attr:`affinity.results.runs.RunRecord.counts`: successful, and not found
misplaced) enter the timing statistics; failures and placement verification
are counted beside them. :func:`describe_cells` is the one per-cell
description: the campaign's cell table (:mod:`stats.tables`), its printed
summary (:func:`cells_text`) and the report all take theirs from it.
"""
from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field

from affinity.results.runs import NOT_BOUND, VERIFIED, RunRecord

Key = tuple[str, str, int, str]  #: (machine, benchmark, threads, strategy)


@dataclass
class CellStats:
    """The runs of one cell: times that count, and counts of the others."""

    times: list[float] = field(default_factory=list)  #: in the order of the records
    failures: int = 0  #: runs that failed (crash, exit status, timeout, validation, no time)
    misplaced: int = 0  #: succeeded, but the placement was found wrong
    pinned: int = 0  #: runs with a placement to verify
    verified: int = 0  #: runs whose placement was found right

    @property
    def n(self) -> int:
        return len(self.times)

    @property
    def mean_s(self) -> float | None:
        return statistics.fmean(self.times) if self.times else None

    @property
    def median_s(self) -> float | None:
        return statistics.median(self.times) if self.times else None

    @property
    def min_s(self) -> float | None:
        return min(self.times) if self.times else None

    @property
    def variance(self) -> float | None:
        """The sample variance (n - 1 in the denominator); None below two times."""
        return statistics.variance(self.times) if len(self.times) > 1 else None

    def columns(self) -> dict:
        """n, the counts, mean, median, min and variance, as the cell table names them."""
        return {"n": self.n, "failures": self.failures, "misplaced": self.misplaced,
                "pinned": self.pinned, "verified": self.verified, "mean_s": self.mean_s,
                "median_s": self.median_s, "min_s": self.min_s, "variance": self.variance}


def describe_cells(records: list[RunRecord]) -> dict[Key, CellStats]:
    """Cell key -> the description of its runs, cells in the order they first appear.

    A run measured once for several strategies with one placement counts for each of them
    (its ``stands_for``), so every strategy of the campaign has its cell.
    """
    cells: dict[Key, CellStats] = {}
    for record in records:
        for strategy in [record.strategy, *record.stands_for.split()]:
            _count(cells.setdefault((*record.cell[:3], strategy), CellStats()), record)
    return cells


def _count(cell: CellStats, record: RunRecord) -> None:
    """Add one run to a cell's description."""
    cell.pinned += record.verification != NOT_BOUND
    cell.verified += record.verification == VERIFIED
    if not record.ok:
        cell.failures += 1
    elif record.misplaced:
        cell.misplaced += 1
    else:
        cell.times.append(record.time_s)


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def cells_text(records: list[RunRecord]) -> str:
    """The printed summary: one line per cell, then every kind of failure."""
    header = (f"{'machine':<12} {'benchmark':<14} {'thr':>4} {'strategy':<13} {'n':>4} "
              f"{'mean_s':>9} {'median_s':>9} {'variance':>10} {'failed':>6}  verified")
    lines = [header]
    for key, cell in sorted(describe_cells(records).items()):
        machine, bench, threads, strategy = key
        check = f"{cell.verified}/{cell.pinned}" if cell.pinned else "n/a"
        lines.append(f"{machine:<12} {bench:<14} {threads:>4} {strategy:<13} {cell.n:>4} "
                     f"{_num(cell.mean_s):>9} {_num(cell.median_s):>9} {_num(cell.variance):>10} "
                     f"{cell.failures:>6}  {check}")
    failures = Counter((r.machine, r.benchmark, r.threads, r.failure.split(": ")[0])
                       for r in records if not r.ok)
    misplaced = sum(r.misplaced for r in records)
    lines.append("")
    lines.append(f"{len(records)} runs; {sum(failures.values())} failed; "
                 f"{misplaced} pinned runs failed placement verification")
    for (machine, bench, threads, why), count in sorted(failures.items()):
        lines.append(f"  FAILED {count} x {machine}/{bench}/t{threads}: {why}")
    return "\n".join(lines) + "\n"
