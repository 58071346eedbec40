"""A measurement job's settings, made from the campaign for the measuring process
(``python -m pinbench.measure --spec``), and the strategies that are one experiment."""
from __future__ import annotations

import functools
import json
import os
import shlex
from pathlib import Path

from pinbench import events
from pinbench.measure.progress import cell_name
from pinbench.measure.settings import Explain, JobSettings, time_setting
from pinbench.native import NotBuilt
from pinbench.place.symmetry import experiment_key, same_as
from pinbench.results.placements import Placement, read_placement
from pinbench.topology import parse_xml
from pinbench.trace.build import ompt_tool
from pinbench.workflow import campaign
from pinbench.workflow.places import check_on_node


def same_experiments(strategies: list[str], placements: dict[str, Placement],
                     topology_xml: str) -> dict[str, str]:
    """strategy -> the earlier strategy (campaign order) whose placement it has, equal or equal
    up to a symmetry of the machine (:func:`pinbench.place.symmetry.same_as`); ``placements``:
    each strategy's, by name."""
    topo = parse_xml(Path(topology_xml).read_text(), topology_xml)
    keys = {}
    for strategy in strategies:
        placement = placements[strategy]
        # a runtime's policy is measured on its own: the runtime binds, not pinbench; so is
        # a placement per region (its regions re-bound at run time)
        fixed = placement.pus and not placement.per_repetition and not placement.policy \
            and not placement.regions
        keys[strategy] = experiment_key(topo, placement.pus) if fixed else None
    return same_as(keys)


def job_settings(config: dict, machine: str, bench: str, threads: int, binary: str,
                 thread_counts: tuple[int, ...] = (),
                 same_as: dict[str, str] | None = None,
                 strategies: list[str] | None = None, report_tests: int | None = None
                 ) -> JobSettings:
    """The settings of the measurement job of ``bench`` with ``threads`` threads on
    ``machine`` (``thread_counts``: the machine's; with ``explain``, T_1 is measured by the
    job only when 1 is not among them; ``same_as``: :func:`same_experiments`; ``strategies``:
    those it measures, default the campaign's; ``report_tests``: the report's, for the
    sequential design: :func:`report_tests`)."""
    entry = config["benchmarks"][bench]
    explain = None if not config["explain"] else Explain(
        repetitions=config["explain"]["repetitions"],
        t1_argv=None if 1 in thread_counts else campaign.run_argv(config, bench, binary, 1),
        sequential_argv=campaign.sequential_argv(config, bench, binary))
    return JobSettings(
        machine=machine, benchmark=bench, threads=threads,
        argv=campaign.run_argv(config, bench, binary, threads),
        binary=os.path.abspath(binary),
        env=campaign.run_env(config, bench),
        validate=entry["validate"],
        time=None if entry["time"] is None else time_setting(**entry["time"]),
        time_share_expected=entry.get("time_share_expected"),
        exit_status=entry["exit_status"], metrics=entry["metrics"],
        timeout_s=entry["timeout_s"], repetitions=config["repetitions"],
        seed=config["seed"], order=config["order"],
        strategies=config["strategies"] if strategies is None else strategies,
        same_as=same_as or {}, quiet=config["quiet"],
        stopping=config["stopping"] and config["stopping"] | {"confidence": config["confidence"]},
        sequential=sequential_design(config, report_tests),
        explain=explain, cwd=entry.get("cwd"), verify=entry["verify"])


def sequential_design(config: dict, report_tests: int | None = None, maximum: bool = False
                      ) -> dict | None:
    """The job's sequential design (:mod:`pinbench.stats.sequential`), None for the fixed
    one: each comparison decided at alpha over the report's ``report_tests`` tests (its first
    Holm level: :func:`report_tests`; None: left to the analysis, which counts them from the
    runs), stopped for futility by a boundary made for the campaign's ``power``;
    ``maximum``: with the design's ``maximum`` rounds too (the analysis')."""
    if config["design"] != "sequential":
        return None
    if report_tests is not None and report_tests < 1:
        raise ValueError("the sequential design needs the report's number of tests")
    return {"baseline": config["baseline"], "power": config["power"]} | (
                {"alpha": (1 - config["confidence"]) / report_tests}
                if report_tests is not None else {}) | (
                {"maximum": config["repetitions"]} if maximum else {})


def report_tests(config: dict, cells: list[tuple[list[str], str]]) -> int:
    """The tests of the report-wide decision, as the analysis counts them
    (:func:`pinbench.stats.verdicts.cell_tests`), before measuring: every measured
    cell's experiments but the baseline's, from ``cells``, each cell's placement files and
    its machine's topology file (strategies left out of a cell are not measured). Every
    measurement job counts them: each cell is read once per process (and again when one of
    its files changes)."""
    return sum(_cell_tests(tuple(files), topology_xml, config["baseline"],
                           tuple(config["strategies"]),
                           tuple(os.stat(f).st_mtime_ns for f in [*files, topology_xml]))
               for files, topology_xml in cells)


@functools.lru_cache(maxsize=None)
def _cell_tests(files: tuple[str, ...], topology_xml: str, baseline: str,
                strategies: tuple[str, ...], stamps: tuple[int, ...]) -> int:
    """One cell's part of :func:`report_tests` (``stamps``: its files' modification times,
    so that a changed file is read again)."""
    from pinbench.stats.verdicts import cell_tests  # NumPy: only for this design

    placements = {placement.strategy: placement for placement in map(read_placement, files)}
    measured = [s for s in strategies if not placements[s].left_out]
    same = same_experiments(measured, placements, topology_xml)
    return cell_tests({s: same.get(s, s) for s in measured}, baseline)


def measure_spec(config: dict, machine: str, bench: str, threads: int, binary: str,
                 placement_files: list[str], topology_xml: str,
                 thread_counts: tuple[int, ...] = (),
                 report_cells: list[tuple[list[str], str]] = ()) -> str:
    """The job's settings (:func:`job_settings`, the strategies that are one experiment read
    from its placement files) as the JSON that ``python -m pinbench.measure --spec`` reads
    (``report_cells``: every measured cell's placement files and topology, the sequential
    design's: :func:`report_tests`).
    A strategy left out of the cell (its trace failed: :attr:`Placement.left_out`) is not
    measured. The OMPT tool is added at run time (:func:`with_ompt_tool`)."""
    placements = {placement.strategy: placement
                  for placement in map(read_placement, placement_files)}
    measured = [s for s in config["strategies"] if not placements[s].left_out]
    return _text(job_settings(
        config, machine, bench, threads, binary, thread_counts,
        same_experiments(measured, placements, topology_xml), measured,
        report_tests(config, list(report_cells)) if config["design"] == "sequential" else None))


def with_ompt_tool(spec: str, machine: campaign.Machine, say=events.tell) -> str:
    """A measure spec with the OMPT tool that its explained runs need (checked on the
    measured machine: :func:`check_on_node`); when it is not built, one line says why and
    the job measures without explained runs."""
    check_on_node(machine)
    settings = JobSettings.from_json(json.loads(spec))
    if settings.explain is None:
        return spec
    try:
        tool = ompt_tool()
    except NotBuilt as exc:
        say(events.warning(f"explain {settings.benchmark} t{settings.threads}:",
                           f"no explained runs: {exc}"))
        tool = None
    return _text(settings.with_ompt_tool(tool))


def _text(settings: JobSettings) -> str:
    """The settings as the measure rule passes them: the same settings, the same text."""
    return json.dumps(settings.to_json(), sort_keys=True)


def cell_names(jobs) -> str:
    """The campaign's measurement jobs as ``python -m pinbench.measure --cells`` takes them."""
    return " ".join(shlex.quote(cell_name(*job)) for job in jobs)


def run_command(config: dict, bench: str, binary: str, threads: int) -> str:
    """One run's command line as a shell would read it (for the plan that ``-n`` prints)."""
    return shlex.join(campaign.run_argv(config, bench, binary, threads))
