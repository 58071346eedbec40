# Validates the campaign before any job runs, and holds every input function.
# Every path comes from the one layout of the results (pinbench/results/layout.py). What this
# file needs of Snakemake's internals, it asks pinbench.workflow.snakemake_adapter; what it
# imports loads no numerical library (NumPy, SciPy...): the rules import their stages when
# they run (tests/test_architecture.py).
import atexit
import os
import shlex
import sys
import time
from pathlib import Path

from snakemake.utils import validate

try:
    from pinbench.measure import system

    # the system checks (onstart, and the environment jobs here) measure other processes'
    # CPU use from here on (over the imports below, the DAG...), not over a pause of their own
    CHECKS_SINCE = system.Snapshot.now()
    from pinbench.results.layout import STATS_FILES, Layout
    from pinbench.seeding import derive_seed
    from pinbench.workflow import accounting, campaign, config_file, jobsettings, outcome
    from pinbench.workflow import optional, places, rule_bodies, rule_settings, snakemake_adapter
    from pinbench.workflow import terminal, tracecache
    from pinbench.workflow.building import generated_files
    from pinbench.place.registry import rebound
    from pinbench.stats import analyse as stats_analysis, explain as stats_explain
    from pinbench.stats import models as stats_models
except ImportError as exc:
    sys.exit(f"pinbench is not installed in this Python ({exc}): run `make setup`, "
             "then use .venv/bin/snakemake")

#: What this call prints, at every verbosity (pinbench/workflow/terminal.py): every line
#: below goes through it.
TERMINAL = terminal.current()
#: The command that started the call: run, or plan (only the plans are asked for).
COMMAND = os.environ.get(terminal.COMMAND, "run")
#: The project: relative paths of a campaign are read from here (``pinbench run`` names the
#: directory it was started in; plain ``snakemake``, the main Snakefile's).
PROJECT = Path(os.environ.get("PINBENCH_PROJECT") or snakemake_adapter.main_directory(workflow))
CONFIG_FILES = snakemake_adapter.config_files(workflow)
# no --configfile: the project's default campaign, with any --config on top
if "campaign" not in config and not CONFIG_FILES:
    config = campaign.default_config(PROJECT) | config
# Snakemake has read the --configfile files with its own reader (and stopped, in its own
# words, at what that reader refuses); read again strictly, what it let through (a duplicate
# key...) is refused in one line. Then the values no schema refuses (a control character
# or a lone surrogate, which validate()'s message would print raw), the schema, by
# Snakemake's validate() (its message), and the other checks no schema makes, one line each.
# The defaults are filled by load_campaign alone: validate()'s filling shares one default
# object among the benchmarks, and fails on a nullable object's null default (stopping:
# null). `pinbench run` reads the campaign strictly before Snakemake starts: one line for
# any bad file.
try:
    for path in CONFIG_FILES:
        config_file.load(path)
    campaign.check_values(config)
    validate(config, campaign.SCHEMA, set_default=False)
    config, MACHINES = campaign.load_campaign(config, PROJECT)
except campaign.ConfigError as exc:
    sys.exit(f"config error: {exc}")

#: The parts of the campaign this call leaves out, and why: each said once, here, in the
#: closing lines and on the report (pinbench/workflow/optional.py).
LEFT_OUT = {}
for name, problem in places.unreachable(MACHINES.values()).items():
    LEFT_OUT[f"machine {name}"] = optional.LeftOut(
        f"machine {name}", problem, "nothing of it is built, measured or reported in this call")
    del MACHINES[name]
#: Where each machine's node-bound jobs run: here, or on its SLURM node.
PLACES = places.places(MACHINES.values())
LAYOUT = Layout.of(config["campaign"])
PY = shlex.quote(sys.executable)
MEASURED = [m for m in MACHINES.values() if m.measure]
PLANNED = [m for m in MACHINES.values() if not m.measure]
LEFT_OUT |= optional.left_out(config, MACHINES.values())
for part in LEFT_OUT.values():  # said in the closing lines too
    TERMINAL.detail(f"pinbench: {part.line()}", sys.stderr)
# the campaign as this call runs it: without the explained runs, or with the verdicts on
# time, when the tool or the counter is missing
if "explain" in LEFT_OUT:
    config["explain"] = None
if "metric" in LEFT_OUT:
    config["metric"] = "time"
if "rebind" in LEFT_OUT:
    config["strategies"] = [s for s in config["strategies"] if not rebound(s)]
STRATEGIES = config["strategies"]
TRACING = campaign.traces(config) and "tracing" not in LEFT_OUT
#: Why the campaign's cells have no affinity matrix when its tracer is missing (None: traced).
UNTRACED = LEFT_OUT["tracing"].why if "tracing" in LEFT_OUT else None
#: Whether the traces are made per parallel region too (a per-region strategy is listed).
PER_REGION = TRACING and tracecache.per_region(config)
EXPLAIN = bool(config["explain"])
# the measure rule's second output: the explained runs (OMPT), when the campaign asks
EXPLAINED_OUTPUT = (
    {"explained": LAYOUT.explained("{machine}", "{bench}", "{n}")} if EXPLAIN else {}
)
# scalability models (rules/models.smk) when a measured machine has enough thread counts
MODELLED = stats_models.modellable({m.name: m.threads for m in MEASURED})
snakemake_adapter.clear_stale_locks()
STARTED = time.time()  # this call's jobs are the timings written since
# the results by absolute path: at exit, Snakemake has left the working directory (-d)
RESULTS = Layout(str(Path(LAYOUT.root).resolve()))
#: The measured machines on which no two pinned placements differ: a line each, said before
#: measuring and in the closing lines.
FLAT = outcome.flat_machines(MEASURED, config)


wildcard_constraints:
    machine=rule_bodies.alternatives(MACHINES),
    bench=rule_bodies.alternatives(config["benchmarks"]),
    n=r"\d+",


def cell_placements(machine, bench, n):
    """The placement file of every strategy for one (machine, benchmark, threads)."""
    return [LAYOUT.placement(machine, bench, n, strategy) for strategy in STRATEGIES]


def placement_files(wildcards):
    """The placement files a measurement job reads."""
    return cell_placements(wildcards.machine, wildcards.bench, wildcards.n)


def report_cells():
    """Every measured cell's placement files and topology file: the sequential design's jobs
    count the report's tests from them (jobsettings.report_tests)."""
    if config["design"] != "sequential":
        return []
    return [(cell_placements(m, b, n), LAYOUT.topology(m)) for m, b, n in measure_jobs()]


def report_placements(wildcards):
    """The placement files of every measured cell, when a measurement job counts the
    report's tests (the sequential design)."""
    return [path for files, _ in report_cells() for path in files]


def build_sources(wildcards):
    """What a benchmark's build reads (its source and the headers beside it, or its
    ``inputs``), so editing any rebuilds it; not the files builds in its tree wrote there."""
    tree = campaign.build_tree(config, wildcards.bench)
    generated = generated_files(LAYOUT.generated(wildcards.machine, tree))
    return campaign.build_sources(config, wildcards.bench, generated)


def traced_binary(wildcards):
    """The binary a trace runs: the tsan-instrumented build, or the plain one for binary tracers."""
    traced = config["tracing"]["tracer"] == "tsan"
    return LAYOUT.binary(wildcards.machine, wildcards.bench, traced=traced)


def placement_inputs(wildcards):
    """The topology, and the affinity matrix when the campaign traces; per region, also the
    traced and the measured binary (the regions' keys are carried from one to the other)."""
    inputs = {"topology": LAYOUT.topology(wildcards.machine)}
    if TRACING:
        inputs["matrix"] = LAYOUT.matrix(wildcards.machine, wildcards.bench, wildcards.n)
    if PER_REGION:
        inputs["traced"] = traced_binary(wildcards)
        inputs["binary"] = LAYOUT.binary(wildcards.machine, wildcards.bench)
    return inputs


def cell_seed(machine, bench, n):
    """The seed of the random strategy's placements for one cell."""
    return derive_seed(config["seed"], "random", machine, bench, str(n))


def random_seed(wildcards):
    """The seed of the random strategy's placements for the cell of ``wildcards``."""
    return cell_seed(wildcards.machine, wildcards.bench, wildcards.n)


def planned_cells(wildcards):
    """Every (benchmark, threads, seed of random) of a planned machine, in the plan's order."""
    machine = wildcards.machine
    return [(bench, n, cell_seed(machine, bench, n))
            for bench in config["benchmarks"] for n in MACHINES[machine].threads]


def planned_inputs(wildcards):
    """What placing every cell of a planned machine reads: its topology, and each cell's
    affinity matrix when the campaign traces."""
    machine = wildcards.machine
    inputs = {"topology": LAYOUT.topology(machine)}
    if TRACING:
        inputs["matrices"] = [LAYOUT.matrix(machine, bench, n)
                              for bench in config["benchmarks"]
                              for n in MACHINES[machine].threads]
    return inputs


def measure_jobs():
    """Every measured (machine, benchmark, threads): one measurement job each."""
    return [
        (m.name, bench, n) for m in MEASURED for bench in config["benchmarks"] for n in m.threads
    ]


def explained_option(wildcards):
    """The measuring process's --explained JOURNAL TABLE option ("" without explain)."""
    if not EXPLAIN:
        return ""
    cell = (wildcards.machine, wildcards.bench, wildcards.n)
    return f"--explained {LAYOUT.explained_journal(*cell)} {LAYOUT.explained(*cell)}"


def explained_runs():
    """Explained tables of every measured (machine, benchmark, threads)."""
    return [LAYOUT.explained(*job) for job in measure_jobs()]


def measured_runs():
    """Runs tables of every measured (machine, benchmark, threads)."""
    return [LAYOUT.runs(*job) for job in measure_jobs()]


def machine_placements(machine):
    """Every placement file of one machine."""
    return [
        path
        for bench in config["benchmarks"]
        for n in MACHINES[machine].threads
        for path in cell_placements(machine, bench, n)
    ]


def report_inputs():
    """What the report reads: topologies, placements (a planned machine's plan stands for
    them: one job writes both) and, when measured, runs and statistics."""
    inputs = [LAYOUT.topology(m) for m in MACHINES]
    inputs += [path for m in MEASURED for path in machine_placements(m.name)]
    inputs += [LAYOUT.plan(m.name) for m in PLANNED]
    if MEASURED:
        inputs += [LAYOUT.all_runs, LAYOUT.stats("json"), LAYOUT.stats("verdicts")]
        inputs += [LAYOUT.environment(m.name) for m in MEASURED]
        inputs += [LAYOUT.explain_table] if EXPLAIN else []
        inputs += [LAYOUT.stats("runtimes")] if config["compilers"] else []
    if MODELLED:
        inputs.append(LAYOUT.models)
    return inputs


def all_targets():
    """What `all` builds: tables and summaries, plans of unmeasured machines, the report."""
    targets = [LAYOUT.plan(m.name) for m in PLANNED]
    if MEASURED:
        targets += [LAYOUT.all_runs, LAYOUT.cells_summary, LAYOUT.stats("tables")]
        targets += [LAYOUT.explain_table, LAYOUT.explain_text] if EXPLAIN else []
        targets += [LAYOUT.runtimes_text] if config["compilers"] else []
    if MODELLED:
        targets.append(LAYOUT.models_text)
    return targets + [LAYOUT.report]


def print_summaries():
    """At the end of a successful call: each cell's verdict, each experiment once and where
    the tables are (printed whole with -v), the notes and warnings, then the closing lines;
    exit 1 with one line when a cell has no usable run or a trace failed (its strategies
    that need the matrix left out). A plan prints its plans."""
    TERMINAL.stop()
    if COMMAND == "plan":
        print_closing()
        return
    texts = [target for target in all_targets()
             if target.endswith(".txt") and Path(target).exists()]
    for target in texts:
        TERMINAL.detail(f"\n== {target}\n{Path(target).read_text()}")
    cells = outcome.cell_lines(LAYOUT)
    if cells:
        TERMINAL.say("cells (★ a winner report-wide, ☆ by the cell's own verdict only):")
    for line in cells:
        TERMINAL.say(line)
    experiments = outcome.experiments(LAYOUT, STRATEGIES)
    if experiments:
        TERMINAL.say("experiments (identical placements measured once), median speedup over "
                     f"{config['baseline']} over the benchmarks:")
    for line in experiments:
        TERMINAL.say(line)
    if texts:
        TERMINAL.say(f"tables: {', '.join(texts)}")
    if MEASURED and not MODELLED:  # too few thread counts for models, and why
        TERMINAL.say(stats_models.unmodelled({m.name: m.threads for m in MEASURED}))
    for line in outcome.set_aside(LAYOUT, [m.name for m in MEASURED]):
        TERMINAL.warn(f"WARNING: measurements set aside: {line}")
    for line in TERMINAL.warning_lines():
        TERMINAL.say(line)
    print_closing()
    failed = outcome.failed_cells(LAYOUT)
    problems = [f"{len(failed)} cell(s) without a usable run: "
                f"{'; '.join(failed[:3])}{' ...' if len(failed) > 3 else ''}"] if failed else []
    left_out = outcome.left_out(LAYOUT, list(MACHINES), STRATEGIES)
    problems += [left_out] if left_out else []
    if problems:
        sys.exit(f"campaign failed: {'; '.join(problems)} "
                 f"(the other results and the report are kept)")


def print_closing(layout=LAYOUT, jobs_ran=True):
    """The closing lines, at every verbosity: the time by stage and where it went (when jobs
    ran), the parts of the campaign left out, the campaign in one line and where its results
    and report are. A plan prints each machine's placements first (not with -q), and where
    they are instead of the campaign."""
    plans = {machine: Path(layout.plan(machine)) for machine in MACHINES} \
        if COMMAND == "plan" else {}
    plans = {machine: plan for machine, plan in plans.items() if plan.is_file()}
    for machine, plan in plans.items():
        TERMINAL.say(f"machine {machine}:\n{plan.read_text().rstrip()}")
    if jobs_ran:
        TERMINAL.closing(accounting.time_breakdown(layout, STARTED, system.process_age_s()))
    for part in LEFT_OUT.values():
        TERMINAL.closing(part.line())
    for plan in plans.values():
        TERMINAL.closing(f"plan: {plan.resolve()}")
    if COMMAND != "plan":
        TERMINAL.closing(outcome.where_and_what(layout, 1 - config["confidence"], FLAT))
    snakemake_adapter.exit_without_waiting()


def print_start():
    """Before the jobs run, once per call: the header; can the campaign's runs find a
    strategy faster, and is this machine quiet and stable enough (every check with -v, its
    problems otherwise)? Then the display."""
    for line in outcome.header(config, MACHINES.values(), LAYOUT, COMMAND):
        TERMINAL.say(line)
    if MEASURED and COMMAND != "plan":
        warning = campaign.repetitions_warning(config, MACHINES)
        if warning:
            TERMINAL.say(f"pinbench: WARNING: {warning}")
        for line in FLAT:
            TERMINAL.say(f"pinbench: {line}")
        checks = system.system_checks(window_s=0.3, since=CHECKS_SINCE)
        TERMINAL.detail("pinbench: this machine before measuring (pinbench system):")
        TERMINAL.detail(system.format_checks(checks).rstrip("\n"))
        if TERMINAL.verbosity < 1:
            for check in checks:
                if not check.ok:
                    TERMINAL.say(f"pinbench system: {check.name}: {check.value}"
                                 + (f" -> {check.advice}" if check.advice else ""))
    TERMINAL.start(Path(snakemake_adapter.STATE_DIR))


def print_failure():
    """At the end of a call whose jobs failed (Snakemake says which, and why): the display
    stopped, and the warnings said once."""
    TERMINAL.stop()
    for line in TERMINAL.warning_lines():
        TERMINAL.say(line)


def print_when_nothing_to_do():
    """At exit of a call that had nothing to do (Snakemake runs no hook then): where the
    results and the report are, and the campaign in one line (a plan: its placements)."""
    TERMINAL.stop()
    if snakemake_adapter.had_nothing_to_do(workflow):
        TERMINAL.say("nothing to do: every result is up to date")
        print_closing(RESULTS, jobs_ran=False)


atexit.register(print_when_nothing_to_do)
