"""Compilers (and so OpenMP runtimes) side by side: each compiler's cells against the first's.

A campaign with ``compilers: {gcc: {cc: gcc}, clang: {cc: clang}}`` measures every benchmark X
once per compiler, as ``X-gcc`` and ``X-clang``
(:func:`pinbench.workflow.campaign.expand_compilers`). Here the cells of ``X-clang`` are
compared with those of ``X-gcc`` (same machine, threads and strategy) with the comparison of
two campaigns (:func:`pinbench.stats.regression.compare`: the median ratio with its interval,
Brunner and Munzel's test each way, Holm over every cell of every compiler pair at once), so a
"slower" or "faster" holds its family-wise error over the whole table. The table is
``stats/runtimes.csv`` (:data:`COLUMNS`), its lines ``stats/runtimes.txt``.
"""
from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from pathlib import Path

from pinbench.results.runs import RunRecord
from pinbench.stats.cells import describe_cells
from pinbench.stats.regression import COLUMNS as COMPARED, SAME, compare

#: The table's columns: the compiler pair, then the comparison's (``benchmark``: X without
#: the compiler's suffix).
COLUMNS = ["compiler", "against", *COMPARED]


def compare_compilers(records: list[RunRecord], compiled: Mapping[str, tuple[str, str]],
                      compilers: list[str], alpha: float = 0.05) -> list[dict]:
    """Each compiler's cells against the first compiler's (rows of :data:`COLUMNS`).

    ``compiled``: each measured benchmark name -> (the benchmark as written, its compiler);
    ``compilers``: their names, the first the reference. Holm runs over every row at once.
    """
    times: dict[str, dict[tuple, list[float]]] = {name: {} for name in compilers}
    for (machine, bench, threads, strategy), cell in describe_cells(records).items():
        if bench in compiled:
            written, compiler = compiled[bench]
            times[compiler][(machine, written, threads, strategy)] = cell.times
    reference = compilers[0]
    # one comparison over every pair's cells, so that Holm covers the whole table
    a = {(other, *key): times[reference][key] for other in compilers[1:]
         for key in times[reference]}
    b = {(other, *key): cell for other in compilers[1:] for key, cell in times[other].items()}
    rows, _, _ = compare({(k[0] + "\0" + k[1], *k[2:]): v for k, v in a.items()},
                         {(k[0] + "\0" + k[1], *k[2:]): v for k, v in b.items()},
                         alpha=alpha)
    for row in rows:
        compiler, row["machine"] = row["machine"].split("\0")
        row.update(compiler=compiler, against=reference)
    return [{name: row[name] for name in COLUMNS} for row in rows]


def lines(rows: list[dict]) -> str:
    """The table in words, one line per cell that differs, and a count of the others."""
    out, same = [], 0
    for row in rows:
        if row["verdict"] != SAME and row["ratio"] is not None and row["verdict"] != "not tested":
            out.append(f"{row['compiler']} vs {row['against']}: {row['machine']} "
                       f"{row['benchmark']} t{row['threads']} {row['strategy']}: "
                       f"{row['verdict']} (time ratio {row['ratio']:.3f}, "
                       f"[{row['ratio_low']:.3f}; {row['ratio_high']:.3f}])")
        else:
            same += 1
    head = (f"compilers side by side: {len(rows)} cells, {len(out)} with a measurable "
            f"difference (Holm over all {len(rows)} at once), {same} without")
    return "\n".join([head, *out]) + "\n"


#: The columns read back as numbers.
NUMBERS = ("ratio", "ratio_low", "ratio_high", "p_report", "detectable_ratio")


def read(table: Path) -> list[dict]:
    """The table :func:`write` wrote (ratios and p-values as numbers, None when empty)."""
    with table.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        row.update({name: float(row[name]) if row[name] else None for name in NUMBERS})
    return rows


def write(rows: list[dict], table: Path, text: Path) -> None:
    """The table (CSV) and its lines."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: "" if v is None else v for k, v in row.items()} for row in rows)
    table.write_text(buffer.getvalue())
    text.write_text(lines(rows))
