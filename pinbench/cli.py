"""The ``pinbench`` command: one entry point for every stage.

    pinbench run [CAMPAIGN.yaml] [-q|-v] [SNAKEMAKE OPTIONS...]   measure a campaign
    pinbench plan [CAMPAIGN.yaml] [-q|-v] [SNAKEMAKE OPTIONS...]  every placement, no runs
    pinbench report [CAMPAIGN.yaml]                       the HTML report again, from the results
    pinbench place | trace | topology | matrix | system | remeasure | speeduptest | analyse
    pinbench compare A B | store add RESULTS_DIR ...
    pinbench setup                                        build the C helpers (at install time)
    pinbench --version

``run`` and ``plan`` read the campaign with the strict reader first (a bad file is one line,
before Snakemake starts), then run pinbench's Snakemake workflow
(``pinbench/workflow/Snakefile``) with the campaign and any other options given, e.g.
``pinbench run my.yaml -n`` (show the jobs) or ``--executor slurm``. Relative paths of a
campaign are read from the directory ``pinbench`` is started in (the project), where the
results go too (``results/<campaign>/``). The stage commands are the tools each stage is
made of, for use outside a campaign; ``pinbench COMMAND --help`` describes each. ``setup``
builds pinbench's C helpers (:mod:`pinbench.native`); a command that needs one that is not
built, or out of date, says so in one line: ``pinbench: ...: run pinbench setup``.

This module imports only the standard library at start: a command imports its stage when
it runs, so ``pinbench --version`` stays quick.
"""
from __future__ import annotations

import importlib
import os
import re
import sys
from pathlib import Path

#: The stage tools: command -> (module with ``main(argv)``, one line of help).
TOOLS = {
    "place": ("pinbench.place.cli", "thread -> PU placements of any strategy for a topology"),
    "trace": ("pinbench.trace.cli", "trace a program's cache-line sharing into an affinity matrix"),
    "topology": ("pinbench.topology", "a machine's tree from hwloc (this one, XML or synthetic)"),
    "matrix": ("pinbench.graph.matrix", "convert an affinity matrix to another tool's layout"),
    "system": ("pinbench.measure.system", "is this machine quiet and stable enough to measure?"),
    "remeasure": ("pinbench.measure.remeasure", "measure a campaign's runs again, on purpose"),
    "speeduptest": ("pinbench.stats.speeduptest", "the Speedup-Test of two samples of times"),
    "analyse": ("pinbench.stats.analyse", "the statistics of a runs table"),
    "compare": ("pinbench.report.compare", "two campaigns' cells compared: a regression gate"),
    "store": ("pinbench.results.store", "keep campaigns' results, to compare them later"),
}
#: The installation's command: command -> (module with ``main(argv)``, one line of help).
INSTALL = {"setup": ("pinbench.native", "build the C helpers: launcher, placement, tracers")}
#: The workflow commands: command -> one line of help.
WORKFLOW = {
    "run": "measure a campaign: build, trace, place, run, analyse, report",
    "plan": "compute and print every placement of a campaign, measure nothing",
    "report": "build the HTML report again from a campaign's results",
}
#: pinbench's Snakemake workflow, inside the package.
SNAKEFILE = Path(__file__).resolve().parent / "workflow" / "Snakefile"


def usage() -> str:
    """The command's help: every command with its line."""
    lines = ["usage: pinbench COMMAND [ARGS...]", "", "campaigns:"]
    lines += [f"  {name:<12} {text}" for name, text in WORKFLOW.items()]
    lines += ["", "stage tools:"]
    lines += [f"  {name:<12} {text}" for name, (_, text) in TOOLS.items()]
    lines += ["", "installation:"]
    lines += [f"  {name:<12} {text}" for name, (_, text) in INSTALL.items()]
    lines += ["", "  pinbench --version     the version and commit",
              "  pinbench COMMAND --help",
              "", "run and plan print less with -q, every job's lines with -v, and pass any "
              "other option to Snakemake (e.g. -n, --cores 4, --executor slurm)."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Dispatch ``pinbench COMMAND ARGS``."""
    args = sys.argv[1:] if argv is None else list(argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(usage())
        return 0 if args else 2
    command, rest = args[0], args[1:]
    if command in ("--version", "version"):
        from pinbench.provenance import describe

        print(describe())
        return 0
    if command in TOOLS or command in INSTALL:
        return _tool((TOOLS | INSTALL)[command][0], command, rest)
    if command in WORKFLOW:
        return _workflow(command, rest)
    print(f"pinbench: unknown command {command!r}\n\n{usage()}", file=sys.stderr)
    return 2


def _tool(module_name: str, command: str, args: list[str]) -> int:
    """A stage tool's ``main(args)``; a C helper it needs and does not find is one line."""
    from pinbench.native import NotBuilt

    module = importlib.import_module(module_name)
    sys.argv[0] = f"pinbench {command}"
    try:
        return module.main(args) or 0
    except NotBuilt as exc:
        print(f"pinbench: {exc}", file=sys.stderr)
        return 2


def split_campaign(args: list[str]) -> tuple[Path | None, list[str]]:
    """The campaign file (the first argument, when it is not an option) and the rest.

    >>> split_campaign(["my.yaml", "-n"])
    (PosixPath('my.yaml'), ['-n'])
    >>> split_campaign(["-n", "--cores", "2"])
    (None, ['-n', '--cores', '2'])
    """
    if args and not args[0].startswith("-"):
        return Path(args[0]), args[1:]
    return None, args


def split_verbosity(args: list[str]) -> tuple[int, list[str]]:
    """The call's verbosity (``-q``/``--quiet``: -1; each ``-v``/``--verbose``: +1) and the
    other options, for Snakemake.

    >>> split_verbosity(["-v", "--cores", "2"]), split_verbosity(["-q"]), split_verbosity([])
    ((1, ['--cores', '2']), (-1, []), (0, []))
    """
    verbosity, rest = 0, []
    for arg in args:
        if arg in ("-q", "--quiet"):
            verbosity = -1
        elif arg == "--verbose" or re.fullmatch("-v+", arg):
            verbosity = max(verbosity, 0) + (1 if arg == "--verbose" else len(arg) - 1)
        else:
            rest.append(arg)
    return verbosity, rest


#: Snakemake options with which it prints what was asked itself (a dry run's list of jobs, a
#: lint, a summary...): Snakemake's own logger then, whatever the verbosity.
LISTING = {"-n", "--dry-run", "--dryrun", "--lint", "--list", "-l", "--list-target-rules",
           "--summary", "-S", "--detailed-summary", "-D", "--dag", "--rulegraph", "--filegraph",
           "--d3dag", "--list-changes", "--lc", "--list-input-changes", "--li",
           "--list-params-changes", "--lp", "--list-code-changes", "--list-untracked", "--lu",
           "--unlock", "--cleanup-metadata", "--delete-all-output", "--delete-temp-output",
           "--containerize", "--print-compilation", "--version", "-h", "--help"}


def lists_itself(args: list[str]) -> bool:
    """Whether Snakemake's options ``args`` ask it for a listing of its own (:data:`LISTING`,
    or ``-n`` among short flags, as in ``-np``).

    >>> lists_itself(["-np"]), lists_itself(["--cores", "2"])
    (True, False)
    """
    return any(arg in LISTING or re.fullmatch("-[A-Za-z]*n[A-Za-z]*", arg) for arg in args)


def _workflow(command: str, args: list[str]) -> int:
    """``run``, ``plan`` and ``report``: the campaign read strictly, then the workflow."""
    if args and args[0] in ("-h", "--help"):
        print(f"usage: pinbench {command} [CAMPAIGN.yaml] "
              f"{'' if command == 'report' else '[-q | -v] [SNAKEMAKE OPTIONS...]'}\n\n"
              f"{WORKFLOW[command]}; without CAMPAIGN, the project's config/config.yaml."
              + ("" if command == "report" else
                 "\n\n  -q, --quiet    print the closing lines only\n"
                 "  -v, --verbose  print every job's lines, and Snakemake's listing of its jobs"))
        return 0
    path, rest = split_campaign(args)
    verbosity, rest = split_verbosity(rest)
    project = Path.cwd()
    from pinbench.workflow import project as projects

    try:
        config, machines, path = projects.read_campaign(path, project)
    except projects.CampaignError as exc:
        print(f"config error: {exc}", file=sys.stderr)
        return 2
    if command == "report":
        if rest:
            print(f"pinbench report: unexpected {rest[0]!r}", file=sys.stderr)
            return 2
        return projects.rebuild_report(config, machines)
    os.environ.setdefault("PINBENCH_PROJECT", str(project))
    from pinbench import events
    from pinbench.workflow import snakemake_adapter, terminal

    os.environ[events.VERBOSITY] = str(verbosity)
    os.environ[terminal.COMMAND] = command
    snakemake_args = ["--snakefile", str(SNAKEFILE), *rest, "--configfile", str(path)]
    if command == "plan":
        snakemake_args[2:2] = projects.plan_targets(config, machines)
    if verbosity < 1 and not lists_itself(rest):
        snakemake_args += snakemake_adapter.use_logger()
    from snakemake.cli import main as snakemake_main

    return snakemake_main(snakemake_args) or 0
