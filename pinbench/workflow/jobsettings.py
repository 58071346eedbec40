"""A measurement job's settings, made from the campaign for the measuring process
(``python -m pinbench.measure --spec``), and the strategies that are one experiment."""
from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

from pinbench.measure.progress import cell_name
from pinbench.native import NotBuilt
from pinbench.place.symmetry import canonical_form
from pinbench.results.placements import read_placement
from pinbench.topology import parse_xml
from pinbench.trace.build import ompt_tool
from pinbench.workflow import campaign
from pinbench.workflow.places import check_on_node


def same_experiments(strategies: list[str], placement_files: list[str],
                     topology_xml: str) -> dict[str, str]:
    """strategy -> the earlier strategy (campaign order) whose placement it has, equal or equal
    up to a symmetry of the machine (:func:`pinbench.place.symmetry.canonical_form`).

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
                 placement_files: list[str], topology_xml: str,
                 thread_counts: tuple[int, ...] = ()) -> str:
    """The JSON job description that ``python -m pinbench.measure --spec`` reads
    (``thread_counts``: the machine's; with ``explain``, T_1 is measured by the job only
    when 1 is not among them). The OMPT tool is added at run time (:func:`with_ompt_tool`)."""
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
        "explain": config["explain"] and {
            "repetitions": config["explain"]["repetitions"],
            "t1_argv": None if 1 in thread_counts else campaign.run_argv(config, bench, binary, 1),
            "sequential_argv": campaign.sequential_argv(config, bench, binary)},
    }, sort_keys=True)


def with_ompt_tool(spec: str, machine: campaign.Machine, say=print) -> str:
    """A measure spec with the OMPT tool that its explained runs need (checked on the
    measured machine: :func:`check_on_node`); when it is not built, one line says why and
    the job measures without explained runs."""
    check_on_node(machine)
    job = json.loads(spec)
    if not job.get("explain"):
        return spec
    try:
        job["explain"]["tool"] = ompt_tool()
    except NotBuilt as exc:
        say(f"explain {job['benchmark']} t{job['threads']}: no explained runs: {exc}")
        job["explain"] = None
    return json.dumps(job, sort_keys=True)


def cell_names(jobs) -> str:
    """The campaign's measurement jobs as ``python -m pinbench.measure --cells`` takes them."""
    return " ".join(shlex.quote(cell_name(*job)) for job in jobs)


def run_command(config: dict, bench: str, binary: str, threads: int) -> str:
    """One run's command line as a shell would read it (for the plan that ``-n`` prints)."""
    return shlex.join(campaign.run_argv(config, bench, binary, threads))
