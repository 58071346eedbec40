"""What the Snakefile's rules call: each rule's body is one function here (or in a stage package).

The rules (``rules/*.smk``) hold the file patterns, taken from
:class:`pinbench.results.layout.Layout`; these functions turn a job's wildcards,
inputs and the campaign config into a call of the stage that does the work. Beside them:
:mod:`~pinbench.workflow.jobsettings` (a measurement job's settings),
:mod:`~pinbench.workflow.tracecache` (the trace rule), :mod:`~pinbench.workflow.accounting`
and :mod:`~pinbench.workflow.outcome` (what a call prints at its end).

The Snakefile imports these modules at every call, so a stage that loads NumPy or SciPy is
imported by the function that runs it (tests/test_architecture.py).
"""
from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterator
from pathlib import Path

from pinbench import events
from pinbench.measure import environment
from pinbench.measure.system import Snapshot
from pinbench.native import NotBuilt
from pinbench.results.layout import Layout, placement_key
from pinbench.results.placements import read_placement
from pinbench.results import traces
from pinbench.results.runs import read_runs, write_runs
from pinbench.results.explained import read_explained
from pinbench.topology import load, parse_xml, save
from pinbench.trace.build import traced_build_flags
from pinbench.workflow import building as build_stage, campaign, jobsettings
from pinbench.workflow.places import check_on_node
from pinbench.workflow.tracecache import traced_build_log
from pinbench.stats import analyse as stats_analysis, explain as explain_stats
from pinbench.stats.cells import cells_text
from pinbench.stats.explain_readings import write_readings
from pinbench.stats.models import models as scalability_models


def save_topology(machine: campaign.Machine, xml: str, log: str) -> None:
    """The topology rule: the machine's tree as the campaign resolved it, or, for a SLURM
    machine, as its node reads it now (run there)."""
    check_on_node(machine)
    save(machine.topology or load("auto"), Path(xml), Path(log))


def write_environment(machine: campaign.Machine, compiler: str, binary: str, out: str,
                      since: Snapshot) -> None:
    """The environment rule, on the measured machine (:func:`check_on_node`): the machine and
    its toolchain, with other processes' CPU use since ``since`` (the call's start)."""
    check_on_node(machine)
    environment.write(compiler, binary, Path(out), since)


def alternatives(names) -> str:
    r"""A wildcard constraint matching exactly the given names (none: nothing at all; Snakemake
    reads an empty constraint as none).

    >>> alternatives(["a.b", "c"]), alternatives([])
    ('a\\.b|c', '(?!)')
    """
    return "|".join(re.escape(name) for name in names) or "(?!)"


def place(inputs, wildcards, params, outputs, log: str) -> None:
    """The placement rule: every strategy's file for one (machine, benchmark, threads); the
    graph strategies left out where the cell's trace failed, or the campaign's tracer is
    missing here (``params.untraced``: why). Per region (``inputs.traced``), the regions'
    keys are carried from the traced binary to the measured one
    (:func:`pinbench.trace.callsites.carry`)."""
    from pinbench.place.record import write_placements  # NumPy, and the graph strategies'

    matrix = Path(inputs.matrix) if hasattr(inputs, "matrix") else None
    failed = (matrix and traces.failure(matrix)) or params.untraced
    binaries = (inputs.traced, inputs.binary) if hasattr(inputs, "traced") else None
    write_placements(inputs.topology, int(wildcards.n), params.strategies,
                     [Path(path) for path in outputs], params.seed, params.repetitions,
                     Path(log), None if failed else matrix, params.oversubscribe,
                     campaign.own_placements(params.placements), failed, binaries)


def place_planned(topology: str, machine: str, params, layout: Layout, plan: str) -> None:
    """The place_planned rule: every cell of a planned machine placed in one job (its
    topology loaded once; ``params.cells``: (benchmark, threads, seed of ``random``) each,
    ``params.traced``: whether each cell has an affinity matrix, ``params.untraced``: why
    not when the campaign's tracer is missing), then its plan."""
    from pinbench.place.record import write_placements  # NumPy, and the graph strategies'

    topo, own = load(topology), campaign.own_placements(params.placements)
    files = []
    for bench, threads, seed in params.cells:
        outputs = [Path(layout.placement(machine, bench, threads, strategy))
                   for strategy in params.strategies]
        matrix = Path(layout.matrix(machine, bench, threads)) if params.traced else None
        failed = (matrix and traces.failure(matrix)) or params.untraced
        write_placements(topo, threads, params.strategies, outputs, seed, params.repetitions,
                         None, None if failed else matrix, params.oversubscribe, own, failed)
        files += outputs
    write_plan(files, plan)


@contextlib.contextmanager
def building(config: dict, machine: campaign.Machine, wildcards, output: str,
             traced: bool = False) -> Iterator[None]:
    """Around a build rule's command, on the measured machine (:func:`check_on_node`): its
    tree's lock, and a note of what it wrote there; the traced variant of a benchmark with a
    ``tree`` builds in a copy of it, and one that wrote no binary failed
    (:func:`traced_build_done`)."""
    check_on_node(machine)
    bench, tree = wildcards.bench, campaign.build_tree(config, wildcards.bench)
    layout = Layout.of(config["campaign"])
    copy = campaign.traced_tree(output) if traced and "tree" in config["benchmarks"][bench] \
        else None
    with build_stage.building(tree, layout.generated(wildcards.machine, tree),
                              lambda: campaign.build_sources(config, bench),
                              lambda line: events.tell(f"build {bench}: {line}", sys.stdout),
                              copy):
        yield
    if traced:
        traced_build_done(bench, output, traced_build_log(config, wildcards.machine, bench))


def tsan_flags() -> tuple[str, str]:
    """The compile and link flags of a tsan-traced build. Without the tsan runtime the
    campaign ends in one line (Snakemake would add a traceback to the exception of the rule
    parameter that asks)."""
    try:
        return traced_build_flags()
    except NotBuilt as exc:
        sys.exit(f"pinbench: {exc}")


def traced_build_command(config: dict, bench: str, output: str) -> str:
    """The build command of a benchmark's tsan-traced variant."""
    return campaign.build_command(config, bench, output, tsan_flags())


def traced_build_done(bench: str, output: str, log: str) -> None:
    """After a traced build: when it failed (it wrote no binary; the rule removes a failed
    command's), its log's last lines and one line on stderr, and an empty binary, which its
    traces read as their failure (:mod:`pinbench.results.traces`): the benchmark's other
    strategies are still placed and measured."""
    if Path(output).exists():
        return
    said = Path(log).read_text(errors="replace").splitlines()
    events.tell("\n".join(said[-20:]), sys.stderr)
    events.tell(events.warning(f"build {bench} for tracing", "failed: the strategies that need "
                               f"its affinity matrix are left out, the others measured (log: "
                               f"{log})"), sys.stderr)
    traces.record_failed_build(output)


def runs_table(job_tables, table: str, summary: str) -> str:
    """The runs_table rule: the jobs' runs tables concatenated, and the summary of every cell."""
    records = read_runs([Path(path) for path in job_tables])
    write_runs(records, Path(table))
    text = cells_text(records)
    Path(summary).write_text(text)
    return text


def analyse_options(config: dict) -> dict:
    """The campaign settings the analyse rule passes to ``pinbench.stats.analyse.analyse``
    (the sequential design's tests are counted from the runs, as its jobs counted them)."""
    return {"campaign": config["campaign"], "baseline": config["baseline"],
            "confidence": config["confidence"], "benchmark_weights": config["weights"],
            "seed": config["seed"], "order": config["strategies"],
            "quiet_threshold": config["quiet"]["threshold"], "metric": config["metric"],
            "report_decision": config["report_decision"],
            "sequential": jobsettings.sequential_design(config, maximum=True),
            "time_shares": {name: bench["time_share_expected"]
                            for name, bench in config["benchmarks"].items()
                            if "time_share_expected" in bench}}


def analyse(inputs, outputs, options: dict, machines: list[str]) -> None:
    """The analyse rule: every file of the analysis, with the measured machines' trees."""
    trees = {machine: parse_xml(Path(xml).read_text(), xml)
             for machine, xml in zip(machines, inputs.topologies, strict=True)}
    stats_analysis.analyse(Path(inputs.runs), {kind: Path(path) for kind, path in outputs.items()},
                           topologies=trees, **options)


def runtimes(runs: str, outputs, params) -> None:
    """The runtimes rule: each compiler's cells against the first's
    (:mod:`pinbench.stats.runtimes`), its lines printed too."""
    from pinbench.stats.runtimes import compare_compilers, write as write_runtimes  # NumPy

    rows = compare_compilers(read_runs([Path(runs)]), params.compiled, params.compilers,
                             params.alpha)
    write_runtimes(rows, Path(outputs.table), Path(outputs.text))
    events.tell(Path(outputs.text).read_text().rstrip("\n"), sys.stdout)


def explain(inputs, outputs, baseline: str, confidence: float) -> None:
    """The explain rule: the work-inflation decomposition of every explained cell, and the
    reading of each cell's timing verdict (the terminal's; the report's too)."""
    rows = read_explained([Path(path) for path in inputs.explained])
    table = explain_stats.explain_table(rows, read_runs([Path(inputs.runs)]), baseline,
                                        confidence)
    explain_stats.write_explain(table, Path(outputs.table))
    write_readings(explain_stats.read_explain(Path(outputs.table)),
                   stats_analysis.read_verdicts(Path(inputs.verdicts)), baseline,
                   Path(outputs.readings))


def models(runs: str, table: str, summary: str, extrap: str, horizon: int,
           pus: dict[str, int], log: str, explain: str | None = None) -> None:
    """The models rule: Extra-P's scalability models of the campaign's runs
    (:func:`pinbench.stats.models.models`), and of the explained quantities of ``explain`` (the
    explain table, when the campaign has one); without a working Extra-P, one line says so
    and the campaign goes on without models."""
    text = scalability_models(read_runs([Path(runs)]), Path(extrap), horizon, pus,
                              Path(table), Path(summary), Path(explain) if explain else None)
    Path(log).write_text(text)
    if text.startswith("no scalability models"):
        events.tell(events.warning("", f"WARNING: {text.splitlines()[0]}"), sys.stdout)


def write_plan(placement_files, output: str) -> None:
    """A readable list of every placement of a machine, grouped by benchmark and threads."""
    lines, last = [], None
    for path in placement_files:
        key = placement_key(path)
        group = f"{key.benchmark}, {key.threads} threads"
        if group != last:
            lines.append(f"{group}:")
            last = group
        lines.append("  " + read_placement(path).line())
    Path(output).write_text("\n".join(lines) + "\n")


