"""What the Snakefile's rules call: each rule's body is one function here (or in a stage package).

The rules (``rules/*.smk``) hold the file patterns, taken from
:class:`affinity.results.layout.Layout`; these functions turn a job's wildcards,
inputs and the campaign config into a call of the stage that does the work.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
from pathlib import Path

from affinity.place.record import write_placements
from affinity.place.symmetry import canonical_form
from affinity.results.layout import Layout, placement_key, sidecar_path
from affinity.results.placements import placement_line, read_placement
from affinity.results.runs import read_runs, write_runs
from affinity.topology import parse_xml
from affinity.trace.build import traced_build_flags
from affinity.trace.run import trace
from affinity.workflow import building as build_stage, campaign
from stats import analyse as stats_analysis
from stats.cells import cells_text, unusable_cells
from stats.models import models as scalability_models


def alternatives(names) -> str:
    """A wildcard constraint matching exactly the given names."""
    return "|".join(re.escape(name) for name in names)


def same_experiments(strategies: list[str], placement_files: list[str],
                     topology_xml: str) -> dict[str, str]:
    """strategy -> the earlier strategy (campaign order) whose placement it has, equal or equal
    up to a symmetry of the machine (:func:`affinity.place.symmetry.canonical_form`).

    Only strategies with one fixed placement are merged: never ``os`` or ``random``.
    """
    topo = parse_xml(Path(topology_xml).read_text(), topology_xml)
    first: dict[tuple, str] = {}
    same_as = {}
    records = {record["strategy"]: record for record in map(read_placement, placement_files)}
    for strategy in strategies:
        pus = records[strategy]["pus"]
        if not pus or "pus_by_repetition" in records[strategy]:
            continue
        form = canonical_form(topo, pus)
        if form in first:
            same_as[strategy] = first[form]
        else:
            first[form] = strategy
    return same_as


def measure_spec(config: dict, machine: str, bench: str, threads: int, binary: str,
                 placement_files: list[str], topology_xml: str) -> str:
    """The JSON job description that ``python -m affinity.measure --spec`` reads."""
    entry = config["benchmarks"][bench]
    return json.dumps({
        "machine": machine, "benchmark": bench, "threads": threads,
        "argv": campaign.run_argv(config, bench, binary, threads),
        "binary": os.path.abspath(binary),
        "env": config["env"] | entry["env"],
        "validate": entry["validate"], "time_regex": entry["time_regex"],
        "exit_status": entry["exit_status"], "metrics": entry["metrics"],
        "timeout_s": entry["timeout_s"], "repetitions": config["repetitions"],
        "seed": config["seed"], "order": config["order"], "strategies": config["strategies"],
        "same_as": same_experiments(config["strategies"], placement_files, topology_xml),
        "quiet": config["quiet"],
        "stopping": config["stopping"] and config["stopping"] | {"confidence": config["confidence"]},
    }, sort_keys=True)


def run_command(config: dict, bench: str, binary: str, threads: int) -> str:
    """One run's command line as a shell would read it (for the plan that ``-n`` prints)."""
    return shlex.join(campaign.run_argv(config, bench, binary, threads))


def place(inputs, wildcards, params, outputs, log: str) -> None:
    """The placement rule: every strategy's file for one (machine, benchmark, threads)."""
    matrix = Path(inputs.matrix) if hasattr(inputs, "matrix") else None
    write_placements(inputs.topology, int(wildcards.n), params.strategies,
                     [Path(path) for path in outputs], params.seed, params.repetitions,
                     Path(log), matrix, params.oversubscribe)


def building(config: dict, wildcards, output: str, traced: bool = False):
    """Around a build rule's command: its tree's lock, and a note of what it wrote there;
    the traced variant of a benchmark with a ``tree`` builds in a copy of it."""
    bench, tree = wildcards.bench, campaign.build_tree(config, wildcards.bench)
    record = Layout.of(config["campaign"]).generated(wildcards.machine, tree)
    copy = campaign.traced_tree(output) if traced and "tree" in config["benchmarks"][bench] \
        else None
    return build_stage.building(tree, record,
                                lambda: campaign.build_sources(config, bench),
                                lambda line: print(f"build {bench}: {line}", flush=True), copy)


def traced_build_command(config: dict, bench: str, output: str) -> str:
    """The build command of a benchmark's tsan-traced variant (builds the tracer if needed)."""
    return campaign.build_command(config, bench, output, traced_build_flags())


def trace_cell(config: dict, wildcards, binary: str, matrix: str, log: str) -> None:
    """The trace rule: one traced run of a benchmark with N threads, its matrix and sidecar.

    A trace of the same binary bytes with the same command, environment and settings is
    not run again: its matrix is reused (:meth:`Layout.trace_cache`), because tracer counts
    vary a little from run to run, and a placement made from another matrix could move
    threads and so set measurements aside for nothing.
    """
    tracing = config["tracing"]
    argv = campaign.run_argv(config, wildcards.bench, binary, int(wildcards.n), traced=True)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")} | config["env"] | \
        config["benchmarks"][wildcards.bench]["env"]
    key = hashlib.sha256(json.dumps(
        [hashlib.sha256(Path(binary).read_bytes()).hexdigest(), argv[1:], env, wildcards.n,
         tracing], sort_keys=True).encode()).hexdigest()[:16]
    cached = Path(Layout.of(config["campaign"]).trace_cache(
        wildcards.machine, wildcards.bench, wildcards.n, key))
    with open(log, "w") as out:
        if cached.is_file() and sidecar_path(cached).is_file():
            print(f"same binary, command and tracer settings as the trace in {cached}: "
                  "its matrix is reused", file=out)
        else:
            sidecar = trace(argv, int(wildcards.n), matrix, tracing["tracer"], tracing["weight"],
                            tracing["line_bytes"], env=env, stdout=out, stderr=out,
                            timeout=tracing["timeout_s"],
                            exit_status=config["benchmarks"][wildcards.bench]["exit_status"])
            for warning in sidecar.get("warnings", []):
                print(f"trace {wildcards.bench} t{wildcards.n}: WARNING: {warning}", flush=True)
            cached.parent.mkdir(parents=True, exist_ok=True)
            for source, target in ((matrix, cached), (sidecar_path(matrix), sidecar_path(cached))):
                shutil.copyfile(source, target)
            return
    for source, target in ((cached, matrix), (sidecar_path(cached), sidecar_path(matrix))):
        shutil.copyfile(source, target)


def runs_table(job_tables, table: str, summary: str) -> str:
    """The runs_table rule: the jobs' runs tables concatenated, and the summary of every cell."""
    records = read_runs([Path(path) for path in job_tables])
    write_runs(records, Path(table))
    text = cells_text(records)
    Path(summary).write_text(text)
    return text


def analyse_options(config: dict) -> dict:
    """The campaign settings the analyse rule passes to ``stats.analyse.analyse``."""
    return {"campaign": config["campaign"], "baseline": config["baseline"],
            "confidence": config["confidence"], "benchmark_weights": config["weights"],
            "seed": config["seed"], "order": config["strategies"],
            "quiet_threshold": config["quiet"]["threshold"]}


def analyse(inputs, outputs, options: dict, machines: list[str]) -> None:
    """The analyse rule: every file of the analysis, with the measured machines' trees."""
    trees = {machine: parse_xml(Path(xml).read_text(), xml)
             for machine, xml in zip(machines, inputs.topologies, strict=True)}
    stats_analysis.analyse(Path(inputs.runs), {kind: Path(path) for kind, path in outputs.items()},
                           topologies=trees, **options)


def models(runs: str, table: str, summary: str, extrap: str, horizon: int,
           pus: dict[str, int], log: str) -> None:
    """The models rule: Extra-P's scalability models of the campaign's runs
    (:func:`stats.models.models`); without a working Extra-P, one line says so and the
    campaign goes on without models."""
    text = scalability_models(read_runs([Path(runs)]), Path(extrap), horizon, pus,
                              Path(table), Path(summary))
    Path(log).write_text(text)
    if text.startswith("no scalability models"):
        print(f"WARNING: {text.splitlines()[0]}", flush=True)


def write_plan(placement_files, output: str) -> None:
    """A readable list of every placement of a machine, grouped by benchmark and threads."""
    lines, last = [], None
    for path in placement_files:
        key = placement_key(path)
        group = f"{key.benchmark}, {key.threads} threads"
        if group != last:
            lines.append(f"{group}:")
            last = group
        lines.append("  " + placement_line(read_placement(path)))
    Path(output).write_text("\n".join(lines) + "\n")


def set_aside(layout: Layout, machines: list[str]) -> list[str]:
    """One line per journal set aside in the campaign: where, how many runs, what changed."""
    return [f"{n['machine']}/{n['benchmark']}/t{n['threads']}: {n['runs']} runs set aside "
            f"({n['changed']}): {n['path']}"
            for machine in machines for n in layout.set_aside_journals(machine)]


def failed_cells(layout: Layout) -> list[str]:
    """The cells of the campaign's runs table without one run that counts."""
    table = Path(layout.all_runs)
    return unusable_cells(read_runs([table])) if table.is_file() else []
