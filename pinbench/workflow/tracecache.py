"""The trace rule, the traces it keeps by what was traced, to reuse them, and those that failed."""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

from pinbench import events
from pinbench.measure import workdir
from pinbench.place.registry import parse_strategy
from pinbench.results import traces
from pinbench.results.layout import Layout, sidecar_path
from pinbench.results.regions import regions_path
from pinbench.trace.build import TraceError
from pinbench.workflow import campaign


def traced_build_log(config: dict, machine: str, bench: str) -> str:
    """The log of a benchmark's traced build (the build_traced rule's ``log``)."""
    return Layout.of(config["campaign"]).log(machine, "build", f"{bench}.traced")


def trace_cell(config: dict, wildcards, binary: str, matrix: str, log: str) -> None:
    """The trace rule: one traced run of a benchmark with N threads, its matrix and sidecar.

    A trace of the same binary bytes with the same command, environment and settings is
    not run again: its matrix is reused (:meth:`Layout.trace_cache`), because tracer counts
    vary a little from run to run, and a placement made from another matrix could move
    threads and so set measurements aside for nothing.

    A trace that fails, because its traced build did (an empty ``binary``; the build's log
    says why) or the tracer refused the program or it failed under it, is recorded in the
    matrix's place, in one line also said here (:mod:`pinbench.results.traces`): only the
    strategies that need the matrix are left out. So is a trace whose matrix has no line
    shared by two threads: it cannot rank placements by what threads share (the traced
    program ran no OpenMP code of its own, or not the campaign's problem); the traced
    matrix stays in the trace cache.
    """
    why = traces.failed_build(binary, traced_build_log(config, wildcards.machine,
                                                       wildcards.bench))
    if why is None:
        try:
            _trace(config, wildcards, binary, matrix, log)
            why = _unshared(matrix, int(wildcards.n))
        except TraceError as exc:
            why = str(exc)
        if why is None:
            return
    traces.record_failure(matrix, why)
    Path(log).write_text(why + "\n")
    events.tell(events.warning(f"trace {wildcards.bench} t{wildcards.n}", f"failed: {why}; the "
                               "strategies that need its affinity matrix are left out there, "
                               "the others measured"), sys.stdout)


def per_region(config: dict) -> bool:
    """Whether the campaign's traces are made per parallel region too: it lists a per-region
    strategy (:mod:`pinbench.place.per_region`) and traces with a tracer that can, tsan or
    valgrind (with pin, those strategies are left out: no regions file)."""
    own = campaign.own_placements(config["placements"])
    return config["tracing"]["tracer"] in ("tsan", "valgrind") and any(
        parse_strategy(name, own)[0].by_region for name in config["strategies"])


def _unshared(matrix: str, threads: int) -> str | None:
    """Why the traced ``matrix`` of ``threads`` threads cannot rank placements: no cache
    line shared by two of them (every weight off its diagonal zero); None when one was."""
    import numpy as np  # imported by the rule, not by the Snakefile

    from pinbench.graph.matrix import read_matrix

    weights = read_matrix(matrix)
    if threads < 2 or np.count_nonzero(weights) > np.count_nonzero(np.diag(weights)):
        return None
    return (f"no cache line was shared by two of the {threads} threads (an all-zero matrix): "
            "it cannot rank placements by what threads share; is the traced program the "
            "OpenMP program itself, on the campaign's input?")


def _trace(config: dict, wildcards, binary: str, matrix: str, log: str) -> None:
    """The trace of :func:`trace_cell`, or its reuse; TraceError when it fails. The traced run
    starts where the timed runs start (:mod:`pinbench.measure.workdir`): what the program
    reads from its folder, and writes there, is the campaign's problem, not the project's."""
    from pinbench.trace.run import trace  # NumPy: imported by the rule, not by the Snakefile

    tracing, layout = config["tracing"], Layout.of(config["campaign"])
    argv = campaign.run_argv(config, wildcards.bench, binary, int(wildcards.n), traced=True)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")} | \
        campaign.run_env(config, wildcards.bench)
    cwd = config["benchmarks"][wildcards.bench].get("cwd")  # else a scratch folder, as runs
    regions = per_region(config)
    key = hashlib.sha256(json.dumps(
        [hashlib.sha256(Path(binary).read_bytes()).hexdigest(), argv[1:], env, wildcards.n,
         tracing, *([cwd] if cwd is not None else []), *(["by region"] if regions else [])],
        sort_keys=True).encode()).hexdigest()[:16]
    cached = Path(layout.trace_cache(wildcards.machine, wildcards.bench, wildcards.n, key))
    # the files of a trace: its matrix, sidecar and, per region, its regions file
    kept = [sidecar_path, *([regions_path] if regions else [])]
    with open(log, "w") as out:
        if all(path(cached).is_file() for path in [Path, *kept]):
            print(f"same binary, command and tracer settings as the trace in {cached}: "
                  "its matrix is reused", file=out)
        else:
            # where the timed runs start: the benchmark's cwd, or an empty folder of its own
            # (the project's relative paths in the command made absolute)
            folder = contextlib.nullcontext(cwd) if cwd is not None else workdir.scratch(
                layout.trace_scratch(wildcards.machine, wildcards.bench, wildcards.n))
            with folder as start:
                sidecar = trace(argv if cwd is not None else workdir.project_paths(argv),
                                int(wildcards.n), matrix, tracing["tracer"],
                                tracing["weight"], tracing["line_bytes"], env=env, stdout=out,
                                stderr=out, timeout=tracing["timeout_s"], cwd=start,
                                exit_status=config["benchmarks"][wildcards.bench]["exit_status"],
                                regions=regions_path(matrix) if regions else None)
            for warning in sidecar.get("warnings", []):
                events.tell(events.warning(f"trace {wildcards.bench} t{wildcards.n}:",
                                           f"WARNING: {warning}"), sys.stdout)
            cached.parent.mkdir(parents=True, exist_ok=True)
            for path in [Path, *kept]:
                shutil.copyfile(path(matrix), path(cached))
            return
    for path in [Path, *kept]:
        shutil.copyfile(path(cached), path(matrix))
