"""What the Snakefile's rules call: each rule's body is one function here (or in a stage package).

The rules (``rules/*.smk``) hold the file patterns, taken from
:class:`pinbench.results.layout.Layout`; these functions turn a job's wildcards,
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

from pinbench.measure import environment
from pinbench.measure.progress import cell_name
from pinbench.measure.system import Snapshot
from pinbench.place.record import write_placements
from pinbench.place.symmetry import canonical_form
from pinbench.results.layout import Layout, placement_key, sidecar_path
from pinbench.results.placements import placement_line, read_placement
from pinbench.results.runs import read_runs, write_runs
from pinbench.results.explained import read_explained
from pinbench.topology import load, parse_xml, save
from pinbench.trace.build import TraceError, build_ompt_tool, traced_build_flags
from pinbench.trace.run import trace
from pinbench.workflow import building as build_stage, campaign
from pinbench.workflow.places import check_on_node
from pinbench.stats import analyse as stats_analysis, explain as explain_stats
from pinbench.stats.cells import cells_text, unusable_cells
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
    """A wildcard constraint matching exactly the given names."""
    return "|".join(re.escape(name) for name in names)


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
    """A measure spec with the OMPT tool that its explained runs need, built now (on the
    measured machine: :func:`check_on_node`); when it cannot be built, one line says why and
    the job measures without explained runs."""
    check_on_node(machine)
    job = json.loads(spec)
    if not job.get("explain"):
        return spec
    try:
        job["explain"]["tool"] = build_ompt_tool()
    except TraceError as exc:
        say(f"explain {job['benchmark']} t{job['threads']}: no explained runs: {exc}")
        job["explain"] = None
    return json.dumps(job, sort_keys=True)


def cell_names(jobs) -> str:
    """The campaign's measurement jobs as ``python -m pinbench.measure --cells`` takes them."""
    return " ".join(shlex.quote(cell_name(*job)) for job in jobs)


def run_command(config: dict, bench: str, binary: str, threads: int) -> str:
    """One run's command line as a shell would read it (for the plan that ``-n`` prints)."""
    return shlex.join(campaign.run_argv(config, bench, binary, threads))


def place(inputs, wildcards, params, outputs, log: str) -> None:
    """The placement rule: every strategy's file for one (machine, benchmark, threads)."""
    matrix = Path(inputs.matrix) if hasattr(inputs, "matrix") else None
    write_placements(inputs.topology, int(wildcards.n), params.strategies,
                     [Path(path) for path in outputs], params.seed, params.repetitions,
                     Path(log), matrix, params.oversubscribe)


def building(config: dict, machine: campaign.Machine, wildcards, output: str,
             traced: bool = False):
    """Around a build rule's command, on the measured machine (:func:`check_on_node`): its
    tree's lock, and a note of what it wrote there; the traced variant of a benchmark with a
    ``tree`` builds in a copy of it."""
    check_on_node(machine)
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
    """The campaign settings the analyse rule passes to ``pinbench.stats.analyse.analyse``."""
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


def explain(inputs, output: str, baseline: str, confidence: float) -> None:
    """The explain rule: the work-inflation decomposition of every explained cell."""
    rows = read_explained([Path(path) for path in inputs.explained])
    table = explain_stats.explain_table(rows, read_runs([Path(inputs.runs)]), baseline,
                                        confidence)
    explain_stats.write_explain(table, Path(output))


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


def job_timings(layout: Layout, since: float) -> list[tuple[str, Path, float, float]]:
    """(stage, timing file, seconds, end time stamp) of each job of this call: the timing
    files (Snakemake's ``benchmark:`` directive, :meth:`Layout.timing`; a measurement job's
    account, :meth:`Layout.account`) written since ``since`` (a time stamp), each when its
    job ends."""
    found = []
    for stage, path in layout.timing_files():
        try:
            ended = path.stat().st_mtime
            if ended < since:
                continue
            text = path.read_text()
            seconds = float(json.loads(text)["process_s"] if path.suffix == ".json"
                            else text.splitlines()[1].split("\t")[0])
        except (OSError, IndexError, KeyError, ValueError):
            continue
        found.append((stage, path, seconds, ended))
    return found


def time_breakdown(layout: Layout, since: float, wall_s: float | None = None) -> str:
    """The wall time of this call's jobs by stage (:func:`job_timings`, written since
    ``since``); with ``wall_s``, the call's wall time so far, a second line too: where the
    call's time went (:func:`where_time_went`)."""
    jobs = job_timings(layout, since)
    spent: dict[str, float] = {}
    for stage, _, seconds, _ in jobs:
        spent[stage] = spent.get(stage, 0.0) + seconds
    if not spent:
        return "time: no job ran"
    order = [s for s in TIMED_STAGES if s in spent] + sorted(set(spent) - set(TIMED_STAGES))
    line = ("time by stage (jobs' wall time, this call): "
            + ", ".join(f"{stage} {_duration(spent[stage])}" for stage in order)
            + f"; total {_duration(sum(spent.values()))}")
    return line if wall_s is None else line + "\n" + where_time_went(jobs, since, wall_s)


def where_time_went(jobs: list[tuple[str, Path, float, float]], since: float,
                    wall_s: float) -> str:
    """The call's wall time ``wall_s`` split into what the campaign is for and what it costs
    around that, and the ratio of the call's wall time to the runs' recorded time plus
    builds and tracing (the target: 1.05x).

    - measuring: the recorded wall time of the runs measured by this call (and of the
      explained runs), from each measuring process's account (:meth:`Layout.account`);
    - waiting for quiet (the quiet policy) and for the machine lock (another measurement);
    - launcher: the rest of the measurement jobs' time: starting the measuring process and
      setting the job up (``start-up``), and its own work around each run (``per run``:
      spawning, verifying, journaling);
    - builds, tracing, placement (topology and placements), analysis (and models), report:
      their jobs' wall time;
    - Snakemake: the call's wall time less the time some job ran (its start-up, the DAG,
      scheduling and the gaps between jobs).
    """
    by_stage: dict[str, float] = {}
    measure = {"runs": 0, "measuring_s": 0.0, "explained_s": 0.0, "quiet_wait_s": 0.0,
               "lock_wait_s": 0.0, "start_s": 0.0, "per_run_s": 0.0}
    for stage, path, seconds, _ in jobs:
        by_stage[stage] = by_stage.get(stage, 0.0) + seconds
        if stage != "measure":
            continue
        account = json.loads(path.read_text())
        for key in ("runs", "measuring_s", "explained_s", "quiet_wait_s", "lock_wait_s"):
            measure[key] += account.get(key, 0)
        loop = account.get("loop_s", 0.0)
        measure["per_run_s"] += loop - account.get("measuring_s", 0.0) \
            - account.get("quiet_wait_s", 0.0) - account.get("explained_s", 0.0)
        measure["start_s"] += seconds - loop - account.get("lock_wait_s", 0.0)
    busy = _union([(end - seconds, end) for _, _, seconds, end in jobs])
    parts = {
        "measuring": measure["measuring_s"] + measure["explained_s"],
        "waiting for quiet": measure["quiet_wait_s"],
        "waiting for the machine lock": measure["lock_wait_s"],
        "launcher": measure["start_s"] + measure["per_run_s"],
        "builds": by_stage.get("build", 0.0),
        "tracing": by_stage.get("trace", 0.0),
        "placement": by_stage.get("topology", 0.0) + by_stage.get("place", 0.0),
        "analysis": sum(v for k, v in by_stage.items()
                        if k not in ("measure", "build", "trace", "topology", "place",
                                     "report")),
        "report": by_stage.get("report", 0.0),
        "Snakemake": wall_s - busy,
    }
    text = [f"{name} {_duration(seconds)}" for name, seconds in parts.items()
            if seconds >= 0.05 or name in ("measuring", "Snakemake")]
    if measure["runs"]:
        text[0] += f" ({measure['runs']} runs)"
    launcher = f"launcher {_duration(parts['launcher'])}"
    if launcher in text:
        text[text.index(launcher)] += (f" (start-up {_duration(measure['start_s'])}, "
                                       f"per run {_duration(measure['per_run_s'])})")
    line = f"where the call's {_duration(wall_s)} went: " + ", ".join(text)
    useful = parts["measuring"] + parts["builds"] + parts["tracing"]
    if measure["runs"] and useful > 0:
        waits = parts["waiting for quiet"] + parts["waiting for the machine lock"]
        line += (f"; the call took {wall_s / useful:.3f}x the runs' time plus builds and "
                 f"tracing ({(wall_s - waits) / useful:.3f}x without the waits)")
    return line


def _union(intervals: list[tuple[float, float]]) -> float:
    """The total length of the union of (start, end) intervals.

    >>> _union([(0, 2), (1, 3), (5, 6)])
    4.0
    """
    total, reach = 0.0, float("-inf")
    for start, end in sorted(intervals):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


#: The stages whose jobs are timed, in the order a campaign runs them.
TIMED_STAGES = ("topology", "build", "trace", "place", "measure", "analyse", "report")


def _duration(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 60 else f"{int(seconds // 60)} min {seconds % 60:.0f} s"


def campaign_line(layout: Layout) -> str:
    """The campaign in one line: runs, jobs, winners named, drifts, failures."""
    table = Path(layout.all_runs)
    if not table.is_file():
        return "nothing measured (planned machines only)"
    records = read_runs([table])
    jobs = {record.cell[:3] for record in records}
    text = (f"{len(records)} runs in {len(jobs)} measurement job(s), "
            f"{sum(not r.ok for r in records)} failed, {sum(r.misplaced for r in records)} "
            "misplaced")
    verdicts_csv = Path(layout.stats("verdicts"))
    if verdicts_csv.is_file():
        verdicts = stats_analysis.read_verdicts(verdicts_csv)
        winners = [f"{v['benchmark']} t{v['threads']}: {v['best']}"
                   + ("" if v["clear_winner"] else " (not clear)") for v in verdicts if v["best"]]
        text += (f"; a strategy faster than the baseline in {len(winners)} of {len(verdicts)}"
                 + (f" ({', '.join(winners[:4])}{', ...' if len(winners) > 4 else ''})"
                    if winners else "")
                 + f"; drift in {sum(bool(v['drift']) for v in verdicts)}")
    return text


def where_and_what(layout: Layout) -> str:
    """Where the results and the report are, and the campaign in one line."""
    return (f"campaign: {campaign_line(layout)}\n"
            f"results: {Path(layout.root).resolve()}\n"
            f"report: {Path(layout.report_index).resolve()}")


def had_nothing_to_do(workflow) -> bool:
    """Whether Snakemake's ``workflow`` executed and found nothing to be done (not a dry
    run, not a job of a remote executor). Snakemake 9 builds its scheduler before it
    checks the DAG, and returns with an empty DAG without running any hook."""
    try:
        return (getattr(workflow, "scheduler", None) is not None and workflow.dag is not None
                and len(workflow.dag) == 0 and not workflow.dryrun
                and workflow.is_main_process)
    except Exception:  # another Snakemake's internals: say nothing rather than fail
        return False


def failed_cells(layout: Layout) -> list[str]:
    """The cells of the campaign's runs table without one run that counts."""
    table = Path(layout.all_runs)
    return unusable_cells(read_runs([table])) if table.is_file() else []
