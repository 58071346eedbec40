"""The explained runs table: one JSON object per line, written by a measurement job with
``explain`` (:mod:`pinbench.measure.job`), read by :mod:`pinbench.stats.explain`.

Each row holds the columns of a run record (:class:`pinbench.results.runs.RunRecord`) and
``kind``: ``explained`` (a strategy's run under the OMPT tool, ``ompt`` its record),
``t1`` (the benchmark at one thread: T_1, under the tool, ``ompt`` its record; rows
journaled by older versions ran uninstrumented) or ``sequential`` (the benchmark's
``sequential`` command, uninstrumented: T_s); ``runtime`` says which OpenMP runtime a run
under the tool used. These rows are never timing runs: no reader of runs tables sees them.
Each row holds its version (``format``: :mod:`pinbench.results.formats`).
"""
from __future__ import annotations

import json
from pathlib import Path

from pinbench.results import formats

KINDS = ("explained", "t1", "sequential")


def read_explained(paths: list[Path]) -> list[dict]:
    """Every row of one or more explained tables, in file order, in the current version
    (ValueError: not one; FormatError: a version this pinbench does not know)."""
    rows = []
    for path in paths:
        for number, line in enumerate(Path(path).read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise ValueError(f"{path}, line {number}: {exc}") from None
            row = formats.read("explained", row, f"{path}, line {number}")
            if row.get("kind") not in KINDS:
                raise ValueError(f"{path}, line {number}: not an explained run")
            rows.append(row)
    return rows
