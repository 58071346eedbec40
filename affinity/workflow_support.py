"""Small functions the Snakefile calls: job specs, wildcard patterns, plans, stale locks."""
from __future__ import annotations

import fcntl
import json
import os
import re
from pathlib import Path

from affinity import campaign, trace
from affinity.placement import describe, write_placements

_SESSION_LOCK: list[int] = []  # the open descriptor, held for the life of the process


def alternatives(names) -> str:
    """A wildcard constraint matching exactly the given names."""
    return "|".join(re.escape(name) for name in names)


def measure_spec(config: dict, machine: str, bench: str, threads: int, binary: str) -> str:
    """The JSON job description that ``python -m affinity.measure --spec`` reads."""
    entry = config["benchmarks"][bench]
    return json.dumps({
        "machine": machine, "benchmark": bench, "threads": threads,
        "argv": campaign.run_argv(config, bench, binary),
        "env": config["env"] | entry["env"],
        "validate": entry["validate"], "time_regex": entry["time_regex"],
        "timeout_s": entry["timeout_s"], "repetitions": config["repetitions"],
        "seed": config["seed"], "order": config["order"], "strategies": config["strategies"],
    }, sort_keys=True)


def place(inputs, wildcards, params, first_output: str, log: str) -> None:
    """The placement rule: every strategy's file for one (machine, benchmark, threads)."""
    matrix = Path(inputs.matrix) if hasattr(inputs, "matrix") else None
    write_placements(inputs.topology, int(wildcards.n), params.strategies,
                     Path(first_output).parent, params.seed, params.repetitions, Path(log), matrix)


def traced_build_command(config: dict, bench: str, output: str) -> str:
    """The build command of a benchmark's tsan-traced variant (builds the tracer if needed)."""
    return campaign.build_command(config, bench, output, trace.traced_build_flags())


def trace_cell(config: dict, wildcards, binary: str, matrix: str, log: str) -> None:
    """The trace rule: one traced run of a benchmark with N threads, its matrix and sidecar."""
    tracing = config["tracing"]
    argv = campaign.run_argv(config, wildcards.bench, binary, traced=True)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")} | config["env"] | \
        config["benchmarks"][wildcards.bench]["env"]
    with open(log, "w") as out:
        trace.trace(argv, int(wildcards.n), matrix, tracing["tracer"], tracing["weight"],
                    tracing["line_bytes"], env=env, stdout=out, stderr=out,
                    timeout=tracing["timeout_s"])


def analyse_options(config: dict) -> dict:
    """The campaign settings the analyse rule passes to ``stats.tables.analyse``."""
    return {"campaign": config["campaign"], "baseline": config["baseline"],
            "confidence": config["confidence"], "weights": config["weights"],
            "seed": config["seed"]}


def write_plan(placement_files, output: str) -> None:
    """A readable list of every placement of a machine, grouped by benchmark and threads."""
    lines, last = [], None
    for path in map(Path, placement_files):
        group = f"{path.parent.parent.name}, {path.parent.name[1:]} threads"
        if group != last:
            lines.append(f"{group}:")
            last = group
        lines.append("  " + describe(json.loads(path.read_text())))
    Path(output).write_text("\n".join(lines) + "\n")


def clear_stale_locks(state_dir: str = ".snakemake") -> bool:
    """Remove Snakemake's directory locks left by a killed run, so the next call resumes.

    A Snakemake killed with SIGKILL leaves its locks behind, and the next call
    would refuse to start until ``--unlock``. Every pinbench Snakemake holds an
    ``flock`` on ``.snakemake/pinbench-session.lock`` for its whole life (the
    kernel drops it when the process dies), so when this process can take it,
    no other pinbench Snakemake is alive here and any lock left is stale.
    Returns True when locks were removed.
    """
    lock_dir = Path(state_dir) / "locks"
    Path(state_dir).mkdir(exist_ok=True)
    fd = os.open(Path(state_dir) / "pinbench-session.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return False
    _SESSION_LOCK.append(fd)
    stale = list(lock_dir.glob("*.lock")) if lock_dir.is_dir() else []
    for path in stale:
        path.unlink(missing_ok=True)
    return bool(stale)
