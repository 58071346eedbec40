"""``pinbench run``, ``plan`` and ``report``: a campaign read strictly, then the workflow.

    pinbench run    [CAMPAIGN.yaml] [-q|-v] [SNAKEMAKE OPTIONS...]
    pinbench plan   [CAMPAIGN.yaml] [-q|-v] [--json] [SNAKEMAKE OPTIONS...]
    pinbench report [CAMPAIGN.yaml]

``run`` and ``plan`` read the campaign with the strict reader first (a bad file is one line,
before Snakemake starts), then run pinbench's Snakemake workflow
(``pinbench/workflow/Snakefile``) with the campaign and every option pinbench does not read
itself, e.g. ``pinbench run my.yaml -n`` (show the jobs) or ``--executor slurm``. Relative
paths of a campaign are read from the directory ``pinbench`` is started in (the project),
where the results go too (``results/<campaign>/``). ``plan --json`` prints every placement
the plan computed as one JSON document (:func:`plan_document`).
"""
from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

from pinbench.commands.conventions import json_option, print_json
from pinbench.errors import UsageError, first_line

#: pinbench's Snakemake workflow, inside the package.
SNAKEFILE = Path(__file__).resolve().parent.parent / "workflow" / "Snakefile"


def arguments(parser: argparse.ArgumentParser, name: str) -> None:
    """``plan --json``; the campaign file and Snakemake's options are read by :func:`parse`."""
    parser.usage = (f"pinbench {name} [CAMPAIGN.yaml] [-q | -v]"
                    + {"run": " [SNAKEMAKE OPTIONS...]", "report": "",
                       "plan": " [--json] [SNAKEMAKE OPTIONS...]"}[name])
    parser.description += (" CAMPAIGN.yaml: the campaign file (default: the project's "
                           "config/config.yaml).")
    if name == "plan":
        json_option(parser)
    if name != "report":
        parser.epilog = ("Any other option goes to Snakemake, e.g. -n (show the jobs), "
                         "--cores 4, --executor slurm.")


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


def parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """The campaign file (``args.campaign``) and pinbench's own options; for ``run`` and
    ``plan`` every other argument is Snakemake's (``args.snakemake``), ``report`` takes none."""
    campaign, rest = split_campaign(argv)
    args, others = parser.parse_known_args(rest)
    if parser.prog == "pinbench report" and others:
        parser.error(f"unrecognized arguments: {' '.join(others)}")
    args.campaign, args.snakemake = campaign, others
    return args


def _snakemake_options(others: list[str]) -> argparse.Namespace:
    """Snakemake's reading of ``others``; UsageError (one line) when Snakemake would refuse
    them, before anything runs."""
    from snakemake.cli import get_argument_parser

    snakemake = get_argument_parser()

    def refuse(message: str):
        raise UsageError(f"{message} (an option for Snakemake: see snakemake --help)")

    snakemake.error = refuse
    try:
        return snakemake.parse_args(others)
    except UsageError:
        raise
    except Exception as exc:  # Snakemake's own value parsers raise its CliException
        return refuse(first_line(exc))


#: Snakemake options with which it prints what was asked itself (a dry run's list of jobs, a
#: lint, a summary...): Snakemake's own logger then, whatever the verbosity.
LISTING = {"-n", "--dry-run", "--dryrun", "--lint", "--list", "-l", "--list-target-rules",
           "--summary", "-S", "--detailed-summary", "-D", "--dag", "--rulegraph", "--filegraph",
           "--d3dag", "--list-changes", "--lc", "--list-input-changes", "--li",
           "--list-params-changes", "--lp", "--list-code-changes", "--list-untracked", "--lu",
           "--unlock", "--cleanup-metadata", "--delete-all-output", "--delete-temp-output",
           "--containerize", "--print-compilation", "-h", "--help"}


def lists_itself(args: list[str]) -> bool:
    """Whether Snakemake's options ``args`` ask it for a listing of its own (:data:`LISTING`,
    or ``-n`` among short flags, as in ``-np``).

    >>> lists_itself(["-np"]), lists_itself(["--cores", "2"])
    (True, False)
    """
    return any(arg in LISTING or re.fullmatch("-[A-Za-z]*n[A-Za-z]*", arg) for arg in args)


def run(args: argparse.Namespace) -> int:
    """The campaign read strictly, then its report rebuilt or the workflow run on it."""
    from pinbench.workflow import project as projects

    project = Path.cwd()
    config, machines, path = projects.read_campaign(args.campaign, project)
    if args.command == "report":
        return projects.rebuild_report(config, machines)
    # Snakemake's options checked once the campaign is read: a bad campaign file is said
    # before Snakemake (a second of imports) is loaded
    directory = _snakemake_options(args.snakemake).directory if args.snakemake else None
    os.environ.setdefault("PINBENCH_PROJECT", str(project))
    from pinbench import events
    from pinbench.workflow import snakemake_adapter, terminal

    os.environ[events.VERBOSITY] = str(args.verbosity)
    os.environ[terminal.COMMAND] = args.command
    snakemake_args = ["--snakefile", str(SNAKEFILE), *args.snakemake, "--configfile", str(path)]
    if args.command == "plan":
        snakemake_args[2:2] = projects.plan_targets(config, machines)
    if args.verbosity < 1 and not lists_itself(args.snakemake):
        snakemake_args += snakemake_adapter.use_logger()
    if not getattr(args, "json", False):
        return _snakemake(snakemake_args)
    with _stdout_to_stderr():
        status = _snakemake(snakemake_args)
    if status == 0:
        print_json(plan_document(config, machines, Path(directory or ".")))
    return status


def _snakemake(snakemake_args: list[str]) -> int:
    """Snakemake's exit status on ``snakemake_args`` (its main function always exits); an exit
    with a message (a rule's ``sys.exit("pinbench: ...")``) goes on, Python says it."""
    from snakemake.cli import main as snakemake_main

    try:
        snakemake_main(snakemake_args)
    except SystemExit as stop:
        if stop.code is None or isinstance(stop.code, int):
            return stop.code or 0
        raise
    return 0


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """Inside, whatever this process and its children write to stdout goes to stderr (the
    JSON document is then alone on stdout)."""
    sys.stdout.flush()
    kept = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(kept, 1)
        os.close(kept)


def plan_document(config: dict, machines: dict, directory: Path) -> dict:
    """The plan ``pinbench plan`` computed in ``directory`` (Snakemake's), as JSON: per machine
    whether it is measured, its thread counts, its ``plan.txt`` and every placement file's
    content (:meth:`Placement.to_json`) with its benchmark, threads and strategy."""
    from pinbench.results.layout import Layout
    from pinbench.results.placements import read_placement

    layout = Layout.of(config["campaign"])
    return {"campaign": config["campaign"], "machines": {
        machine.name: {
            "measured": machine.measure, "threads": list(machine.threads),
            "plan": str(directory / layout.plan(machine.name)),
            "placements": [
                {"benchmark": bench, "threads": threads, "strategy": strategy,
                 **read_placement(directory / layout.placement(machine.name, bench, threads,
                                                               strategy)).to_json()}
                for bench in config["benchmarks"] for threads in machine.threads
                for strategy in config["strategies"]]}
        for machine in machines.values()}}
