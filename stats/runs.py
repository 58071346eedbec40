"""The campaign's tidy runs table and its per-cell summary.

A cell is one (machine, benchmark, threads, strategy). Only successful runs
(exit status 0, validated, timed) enter the timing statistics; failures and
placement verification are counted beside them.
"""
from __future__ import annotations

import csv
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

CELL_KEYS = ("machine", "benchmark", "threads", "strategy")


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
    verified: int
    pinned: int


def summarise(rows: list[dict]) -> dict[tuple, Cell]:
    """Cell key -> statistics, in the order cells first appear."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        groups[tuple(row[k] for k in CELL_KEYS)].append(row)
    cells = {}
    for key, group in groups.items():
        times = [r["time_s"] for r in group if r["ok"]]
        pinned = [r for r in group if r["verification"] != "n/a"]
        cells[key] = Cell(
            n=len(times),
            mean=statistics.fmean(times) if times else None,
            median=statistics.median(times) if times else None,
            variance=statistics.variance(times) if len(times) > 1 else None,
            failures=len(group) - len(times),
            verified=sum(r["verification"] == "ok" for r in pinned),
            pinned=len(pinned),
        )
    return cells


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def summary_text(rows: list[dict]) -> str:
    """The printed summary: one line per cell, then every kind of failure."""
    header = (f"{'machine':<12} {'benchmark':<14} {'thr':>4} {'strategy':<10} {'n':>4} "
              f"{'mean_s':>9} {'median_s':>9} {'variance':>10} {'failed':>6}  verified")
    lines = [header]
    for key, cell in sorted(summarise(rows).items()):
        machine, bench, threads, strategy = key
        check = f"{cell.verified}/{cell.pinned}" if cell.pinned else "n/a"
        lines.append(f"{machine:<12} {bench:<14} {threads:>4} {strategy:<10} {cell.n:>4} "
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
