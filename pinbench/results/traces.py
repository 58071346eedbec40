"""A trace that failed, as the workflow records it: no affinity matrix, and why, in one line.

A failed trace fails only the strategies that need its matrix (the graph strategies,
:data:`pinbench.place.registry.GRAPH`): the others are placed and measured. So neither the
traced build nor the trace step fails as a Snakemake job:

- a traced build that fails leaves an empty binary (:func:`record_failed_build`), its log
  saying why;
- the trace step, given an empty binary or a program the tracer refuses or that fails under
  it (:class:`pinbench.trace.build.TraceError`), writes an empty matrix file and a sidecar
  holding ``failed``, the one line (:func:`record_failure`);
- the placement step reads it (:func:`failure`) and writes the graph strategies' placements as
  left out (:attr:`pinbench.results.placements.Placement.left_out`); the measurement job
  measures the other strategies; the campaign's closing lines and the report name what was
  left out (:func:`left_out`).

A failed trace is not tried again while what it depends on (the benchmark's sources, its
``trace_build``, the traced command, the tracer's settings) stays as it is.
"""
from __future__ import annotations

import json
from pathlib import Path

from pinbench.results import formats
from pinbench.results.layout import Layout, sidecar_path
from pinbench.results.placements import read_placement


def record_failed_build(binary: Path | str) -> None:
    """Leave an empty file as the traced binary of a build that failed."""
    Path(binary).write_bytes(b"")


def failed_build(binary: Path | str, log: Path | str) -> str | None:
    """Why the traced build of ``binary`` failed (the last two lines its log holds: a
    compiler's error and its summary), or None: it did not (the binary is not empty)."""
    if Path(binary).stat().st_size:
        return None
    try:
        said = [line.strip() for line in Path(log).read_text(errors="replace").splitlines()]
    except OSError:
        said = []
    last = " / ".join(line[:200] for line in [line for line in said if line][-2:])
    return f"the traced build failed{': ' + last if last else ''} (log: {log})"


def record_failure(matrix: Path | str, why: str) -> None:
    """Record a failed trace at ``matrix``: an empty matrix file, a sidecar saying why."""
    Path(matrix).parent.mkdir(parents=True, exist_ok=True)
    Path(matrix).write_text("")
    sidecar_path(matrix).write_text(json.dumps(formats.stamp("sidecar", {"failed": why})) + "\n")


def failure(matrix: Path | str) -> str | None:
    """Why the trace whose matrix is ``matrix`` failed, or None: it did not (or is not there)."""
    try:
        if Path(matrix).stat().st_size:
            return None
        sidecar = sidecar_path(matrix)
        return formats.read("sidecar", json.loads(sidecar.read_text()), sidecar).get("failed")
    except (OSError, ValueError):
        return None


def left_out(layout: Layout, machine: str, strategies: list[str]) -> list[dict]:
    """Every cell of a machine whose trace failed, in path order: ``benchmark``, ``threads``,
    ``why`` and the ``strategies`` left out there (of ``strategies``, the campaign's, in its
    order, as their placement files say)."""
    found = []
    for bench, matrix in layout.matrix_files(machine):
        why = failure(matrix)
        if not why:
            continue
        threads = int(matrix.stem[1:])
        files = [Path(layout.placement(machine, bench, threads, s)) for s in strategies]
        found.append({"machine": machine, "benchmark": bench, "threads": threads, "why": why,
                      "strategies": [path.stem for path in files
                                     if path.is_file() and read_placement(path).left_out]})
    return found
