"""One cell's runs described: the times that count, their statistics, and what was left out.

A cell is one (machine, benchmark, threads, strategy). Only runs that count
(:attr:`pinbench.results.runs.RunRecord.counts`: successful, and not found
misplaced) enter the timing statistics; failures and placement verification
are counted beside them. :func:`describe_cells` is the one per-cell
description: the campaign's cell table (:mod:`pinbench.stats.tables`), its printed
summary (:func:`cells_text`) and the report all take theirs from it.
"""
from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field

from pinbench.results.runs import NOT_BOUND, VERIFIED, RunRecord
from pinbench.stats.sample_size import MIN_N

Key = tuple[str, str, int, str]  #: (machine, benchmark, threads, strategy)
#: A printed time's resolution is coarse beyond this share of the cell's median.
COARSE = 0.01
#: What can be wrong with a cell's runs: code -> (mark, what it means). The report's overview
#: marks cells with these, and its legend explains them; ``drift`` is a job's, not a cell's
#: (:mod:`pinbench.stats.drift`).
WARNINGS = {
    "failed": ("F", "runs failed (crash, exit status, timeout, validation, no time): left out"),
    "misplaced": ("M", "runs whose placement was found wrong: left out"),
    "few": ("n", f"fewer than {MIN_N} runs count: not tested"),
    "noisy": ("L", "runs during which other processes used more than the campaign's "
                   "quiet.threshold of the CPUs (a loaded machine)"),
    "coarse": ("C", f"the program prints its time coarser than {COARSE:.0%} of the median"),
    "drift": ("D", "the run times drift over the measurement job (Mann-Kendall's trend test, "
                   "corrected for autocorrelated runs, Holm over the report's jobs; marked on "
                   "the machine's first cell of the row)"),
    "printed": ("T", "the printed times lie above their runs' wall times, or below a small "
                     "share of them in every run: not the runs' times? (no verdict when none "
                     "is; marked on the machine's first cell of the row)"),
}


@dataclass
class CellStats:
    """The runs of one cell: times that count, and counts of the others."""

    times: list[float] = field(default_factory=list)  #: in the order of the records
    failures: int = 0  #: runs that failed (crash, exit status, timeout, validation, no time)
    misplaced: int = 0  #: succeeded, but the placement was found wrong
    pinned: int = 0  #: runs with a placement to verify
    verified: int = 0  #: runs whose placement was found right
    #: the coarsest resolution of a printed time that counts (None: wall times)
    resolution_s: float | None = None
    #: why runs did not count: failure reasons and misplacements, with their counts
    left_out: Counter = field(default_factory=Counter)
    #: per run, the share of the CPUs other processes used during it (None: not measured)
    other_cpu: list[float | None] = field(default_factory=list)

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

    @property
    def coarse(self) -> bool:
        """The program printed its time with a resolution coarser than 1% of the median:
        differences between strategies below that cannot show."""
        return (self.resolution_s is not None and bool(self.median_s)
                and self.resolution_s > COARSE * self.median_s)

    def noisy(self, threshold: float) -> int:
        """How many runs saw other processes use more than ``threshold`` of the CPUs."""
        return sum(share is not None and share > threshold for share in self.other_cpu)

    def warnings(self, threshold: float) -> list[str]:
        """The codes of :data:`WARNINGS` that apply to this cell (``threshold``: the
        campaign's ``quiet.threshold``), in the order of :data:`WARNINGS`.

        >>> CellStats(times=[1.0, 1.1], failures=1, other_cpu=[0.5, None, 0.0]).warnings(0.1)
        ['failed', 'few', 'noisy']
        """
        found = {"failed": self.failures > 0, "misplaced": self.misplaced > 0,
                 "few": self.n < MIN_N, "noisy": self.noisy(threshold) > 0,
                 "coarse": self.coarse}
        return [code for code in WARNINGS if found.get(code)]

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
    cell.other_cpu.append(record.other_cpu)
    cell.verified += record.verification == VERIFIED
    if not record.ok:
        cell.failures += 1
        cell.left_out[record.failure.split(": ")[0]] += 1
    elif record.misplaced:
        cell.misplaced += 1
        cell.left_out[f"verification {record.verification}"] += 1
    else:
        cell.times.append(record.time_s)
        if record.time_resolution_s is not None:
            cell.resolution_s = max(cell.resolution_s or 0.0, record.time_resolution_s)


def unusable_cells(records: list[RunRecord]) -> list[str]:
    """Every cell without one run that counts, as ``machine/bench/tN strategy (why)``."""
    def why(cell: CellStats) -> str:
        return ", ".join(f"{n} x {reason}" for reason, n in cell.left_out.most_common(2))
    return [f"{m}/{b}/t{t} {s} ({why(cell)})"
            for (m, b, t, s), cell in describe_cells(records).items() if not cell.times]


def coarse_text(key: Key, cell: CellStats) -> str:
    """The warning about a cell whose printed times are coarse."""
    machine, bench, threads, strategy = key
    return (f"{machine}/{bench}/t{threads} {strategy}: times printed to {cell.resolution_s:g} s, "
            f"{cell.resolution_s / cell.median_s:.0%} of the median {cell.median_s:.4g} s "
            f"(differences below that cannot show)")


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def cells_text(records: list[RunRecord]) -> str:
    """The printed summary: one line per cell, then every kind of failure."""
    header = (f"{'machine':<12} {'benchmark':<14} {'thr':>4} {'strategy':<13} {'n':>4} "
              f"{'mean_s':>9} {'median_s':>9} {'variance':>10} {'failed':>6}  verified")
    lines = [header]
    cells = describe_cells(records)
    for key, cell in sorted(cells.items()):
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
    lines += [f"  COARSE TIME {coarse_text(key, cell)}"
              for key, cell in sorted(cells.items()) if cell.coarse]
    return "\n".join(lines) + "\n"
