"""The campaign's tidy runs table and its per-cell summary.

A cell is one (machine, benchmark, threads, strategy). Only successful runs
(exit status 0, validated, timed) whose placement was not found wrong enter
the timing statistics; failures and placement verification are counted beside them.
"""
from __future__ import annotations

import csv
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

CELL_KEYS = ("machine", "benchmark", "threads", "strategy")
FAILED_VERIFICATION = ("mismatch", "missing")


def read_runs(paths: list[Path]) -> list[dict]:
    """Rows of one or more runs tables, types restored."""
    rows = []
    for path in paths:
        with Path(path).open(newline="") as handle:
            for row in csv.DictReader(handle):
                row["threads"] = int(row["threads"])
                row["ok"] = row["ok"] == "True"
                row["time_s"] = float(row["time_s"]) if row["time_s"] else None
                rows.append(row)
    return rows


@dataclass
class Cell:
    """Descriptive statistics of one cell's successful runs."""

    n: int
    mean: float | None
    median: float | None
    variance: float | None
    failures: int
    misplaced: int
    verified: int
    pinned: int


def samples(rows: list[dict]) -> tuple[dict[tuple, list[float]], dict[tuple, dict[str, int]]]:
    """Cell key -> the times that count, and cell key -> counts of runs.

    The counts are ``failures``, ``misplaced`` (succeeded, but the placement
    was found wrong: verification ``mismatch`` or ``missing``), ``pinned``
    (runs with a placement to verify) and ``verified`` (found right). A run's
    time counts when it succeeded and was not misplaced.
    """
    times: dict[tuple, list[float]] = defaultdict(list)
    dropped: dict[tuple, dict[str, int]] = {}
    for row in rows:
        key = tuple(row[k] for k in CELL_KEYS)
        counts = dropped.setdefault(key, dict.fromkeys(("failures", "misplaced", "pinned",
                                                        "verified"), 0))
        counts["pinned"] += row["verification"] != "n/a"
        counts["verified"] += row["verification"] == "ok"
        if not row["ok"]:
            counts["failures"] += 1
        elif row["verification"] in FAILED_VERIFICATION:
            counts["misplaced"] += 1
        else:
            times[key].append(row["time_s"])
    return times, dropped


def summarise(rows: list[dict]) -> dict[tuple, Cell]:
    """Cell key -> statistics of the runs that count."""
    times, dropped = samples(rows)
    cells = {}
    for key, counts in dropped.items():
        sample = times.get(key, [])
        cells[key] = Cell(
            n=len(sample),
            mean=statistics.fmean(sample) if sample else None,
            median=statistics.median(sample) if sample else None,
            variance=statistics.variance(sample) if len(sample) > 1 else None,
            **counts,
        )
    return cells


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def summary_text(rows: list[dict]) -> str:
    """The printed summary: one line per cell, then every kind of failure."""
    header = (f"{'machine':<12} {'benchmark':<14} {'thr':>4} {'strategy':<13} {'n':>4} "
              f"{'mean_s':>9} {'median_s':>9} {'variance':>10} {'failed':>6}  verified")
    lines = [header]
    for key, cell in sorted(summarise(rows).items()):
        machine, bench, threads, strategy = key
        check = f"{cell.verified}/{cell.pinned}" if cell.pinned else "n/a"
        lines.append(f"{machine:<12} {bench:<14} {threads:>4} {strategy:<13} {cell.n:>4} "
                     f"{_num(cell.mean):>9} {_num(cell.median):>9} {_num(cell.variance):>10} "
                     f"{cell.failures:>6}  {check}")
    failures = Counter((r["machine"], r["benchmark"], r["threads"], r["failure"].split(": ")[0])
                       for r in rows if not r["ok"])
    unverified = sum(r["verification"] in ("mismatch", "missing") for r in rows)
    lines.append("")
    lines.append(f"{len(rows)} runs; {sum(failures.values())} failed; "
                 f"{unverified} pinned runs failed placement verification")
    for (machine, bench, threads, why), count in sorted(failures.items()):
        lines.append(f"  FAILED {count} x {machine}/{bench}/t{threads}: {why}")
    return "\n".join(lines) + "\n"


def collect(inputs: list[Path], table: Path, summary: Path) -> str:
    """Merge per-job runs tables into the campaign's table and write its summary."""
    rows = read_runs(inputs)
    with Path(inputs[0]).open(newline="") as handle:
        columns = next(csv.reader(handle))
    table.parent.mkdir(parents=True, exist_ok=True)
    with table.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(columns)
        for path in inputs:
            with Path(path).open(newline="") as handle:
                reader = csv.reader(handle)
                next(reader)
                writer.writerows(reader)
    text = summary_text(rows)
    summary.write_text(text)
    return text
