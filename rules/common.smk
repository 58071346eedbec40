# Validates the campaign before any job runs, and holds every input function.
import shlex
import sys

sys.path.insert(0, workflow.basedir)

from affinity import campaign, environment, topology, workflow_support
from reports import html_report
from stats import runs as stats_runs, tables as stats_tables
from affinity.seeding import derive_seed

if "campaign" not in config:  # no --configfile: the default campaign, with any --config on top
    config = campaign.default_config(Path(workflow.basedir)) | config
try:
    config, MACHINES = campaign.load_campaign(config, Path(workflow.basedir))
except campaign.ConfigError as exc:
    sys.exit(f"config error: {exc}")

RESULTS = f"results/{config['campaign']}"
PY = f"PYTHONPATH={shlex.quote(workflow.basedir)} {shlex.quote(sys.executable)}"
STRATEGIES = config["strategies"]
TRACING = campaign.traces(config)
MEASURED = [m for m in MACHINES.values() if m.measure]
PLANNED = [m for m in MACHINES.values() if not m.measure]
workflow_support.clear_stale_locks()


wildcard_constraints:
    machine=workflow_support.alternatives(MACHINES),
    bench=workflow_support.alternatives(config["benchmarks"]),
    n=r"\d+",


def placement_files(wildcards):
    """The placement file of every strategy for one (machine, benchmark, threads)."""
    return expand(
        f"{RESULTS}/{wildcards.machine}/placements/{wildcards.bench}/t{wildcards.n}/{{strategy}}.json",
        strategy=STRATEGIES,
    )


def build_sources(wildcards):
    """A benchmark's source and the headers beside it, so editing either rebuilds it."""
    return campaign.build_sources(config, wildcards.bench)


def traced_binary(wildcards):
    """The binary a trace runs: the tsan-instrumented build, or the plain one for binary tracers."""
    suffix = ".traced" if config["tracing"]["tracer"] == "tsan" else ""
    return f"{RESULTS}/{wildcards.machine}/bin/{wildcards.bench}{suffix}"


def placement_inputs(wildcards):
    """The topology, and the affinity matrix when the campaign traces."""
    inputs = {"topology": f"{RESULTS}/{wildcards.machine}/topology.xml"}
    if TRACING:
        inputs["matrix"] = f"{RESULTS}/{wildcards.machine}/affinity/{wildcards.bench}/t{wildcards.n}.csv"
    return inputs


def random_seed(wildcards):
    """The seed of the random strategy's placements for one cell."""
    return derive_seed(config["seed"], "random", wildcards.machine, wildcards.bench, wildcards.n)


def measured_runs():
    """Runs tables of every measured (machine, benchmark, threads)."""
    return [
        f"{RESULTS}/{m.name}/runs/{bench}/t{n}.csv"
        for m in MEASURED
        for bench in config["benchmarks"]
        for n in m.threads
    ]


def all_placements():
    """Every placement file of the campaign, planned machines included."""
    return [
        f
        for m in MACHINES.values()
        for bench in config["benchmarks"]
        for n in m.threads
        for f in expand(
            f"{RESULTS}/{m.name}/placements/{bench}/t{n}/{{strategy}}.json",
            strategy=STRATEGIES,
        )
    ]


def report_inputs():
    """What the report reads: topologies, placements and, when measured, runs and statistics."""
    inputs = [f"{RESULTS}/{m}/topology.xml" for m in MACHINES] + all_placements()
    if MEASURED:
        inputs += [f"{RESULTS}/runs.csv", f"{RESULTS}/stats/stats.json"]
        inputs += [f"{RESULTS}/{m.name}/environment.json" for m in MEASURED]
    return inputs


def all_targets():
    """What `all` builds: tables and summaries, plans of unmeasured machines, the report."""
    targets = [f"{RESULTS}/{m.name}/plan.txt" for m in PLANNED]
    if MEASURED:
        targets += [f"{RESULTS}/runs.csv", f"{RESULTS}/summary.txt", f"{RESULTS}/stats/summary.txt"]
    return targets + [f"{RESULTS}/report"]


def print_summaries():
    """Print the summaries and plans, then the report's path, at the end of a successful run."""
    for target in all_targets():
        if target.endswith(".txt") and Path(target).exists():
            print(f"\n== {target}\n{Path(target).read_text()}")
    print(f"report: {Path(RESULTS, 'report', 'index.html').resolve()}")
