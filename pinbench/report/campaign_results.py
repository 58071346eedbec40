"""Everything a campaign's report shows, read once from its results folder.

:meth:`CampaignResults.load` reads what the campaign wrote, each file through its one
reader, into typed records: the campaign's configuration (:class:`Campaign`, its
:class:`Benchmark` s), the runs (:class:`pinbench.results.runs.RunRecord`), the analysis'
verdicts and comparisons (:class:`pinbench.stats.analyse.Verdict`,
:class:`~pinbench.stats.analyse.Comparison`), its explanations
(:data:`pinbench.stats.explain.Explanation`) and models
(:class:`pinbench.stats.models.ModelRow`), and per machine (:class:`MachineResults`) its saved
topology and drawing, environment, placements, affinity matrices and the journals set
aside. The report's pages (:mod:`pinbench.report.html_report`) render this object and read
no file. A part the campaign did not write (no measurement on a planned machine, no
affinity matrix before tracing, no models) is empty, and its section is left out. The
paths are :class:`pinbench.results.layout.Layout`'s.
"""
from __future__ import annotations

import base64
import functools
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pinbench.graph.matrix import MatrixError, read_matrix
from pinbench.measure.settings import QUIET
from pinbench.results import formats, traces
from pinbench.results.layout import Layout, PlacementKey
from pinbench.results.placements import Placement, read_placement
from pinbench.results.regions import Regions, RegionsError, read_regions, regions_path
from pinbench.results.runs import RunRecord, read_runs
from pinbench.stats import runtimes as runtimes_table
from pinbench.stats.analyse import Comparison, Verdict, read_comparisons, read_verdicts
from pinbench.stats.cells import CellStats, describe_cells
from pinbench.stats.explain import Explanation, read_explain
from pinbench.stats.models import ModelRow, read_models
from pinbench.topology import Topology, TopologyError, parse_xml


def read_json(path: Path, kind: str) -> dict | None:
    """The content of a JSON file of ``kind`` (:mod:`pinbench.results.formats`) in the current
    version, or None when the campaign did not write it."""
    return formats.read(kind, json.loads(path.read_text()), path) if path.exists() else None


@dataclass(frozen=True)
class Benchmark:
    """A benchmark of the campaign, as the report names it."""

    name: str
    description: str


@dataclass(frozen=True)
class Campaign:
    """The campaign as its report shows it: what the pages read of its validated
    configuration, and the configuration itself (``config``: shown whole, and quoted by the
    templates)."""

    name: str
    baseline: str
    confidence: float
    strategies: tuple[str, ...]
    machines: dict[str, str]  #: name -> its topology, as the campaign gives it
    benchmarks: dict[str, Benchmark]
    metric: str  #: what every test is on: ``time`` or a counter
    quiet_threshold: float  #: the share of the CPUs others may use before a run is noisy
    config: dict

    @classmethod
    def of(cls, config: dict) -> Campaign:
        """The campaign of a validated configuration
        (:func:`pinbench.workflow.campaign.load_campaign`)."""
        return cls(name=config["campaign"], baseline=config["baseline"],
                   confidence=config["confidence"],
                   strategies=tuple(config.get("strategies", [])),
                   machines={name: machine["topology"]
                             for name, machine in config["machines"].items()},
                   benchmarks={name: Benchmark(name, bench.get("description", ""))
                               for name, bench in config["benchmarks"].items()},
                   metric=config.get("metric", "time"),
                   quiet_threshold=config.get("quiet", {}).get("threshold",
                                                               QUIET["threshold"]),
                   config=config)


@dataclass(frozen=True)
class MachineResults:
    """What a campaign wrote of one machine."""

    name: str
    measured: bool  #: measured in this campaign, or only planned
    topology: Topology | None  #: the tree the campaign saved (None: not there or not readable)
    drawing: str | None  #: lstopo's drawing of it, as a data URI (None: none made)
    environment: dict | None  #: the machine and toolchain recorded (None: not measured)
    placements: dict[PlacementKey, Placement]  #: every placement file, in path order
    matrices: list[tuple[str, np.ndarray]]  #: the affinity matrices read, with their benchmark
    #: the per-region traces: benchmark, its regions file, the whole program's matrix
    regions: list[tuple[str, Regions, np.ndarray]]
    set_aside: list[dict]  #: the journals set aside (:meth:`Layout.set_aside_journals`)
    left_out: list[dict]  #: the cells whose trace failed (:func:`pinbench.results.traces.left_out`)


@dataclass(frozen=True)
class CampaignResults:
    """A campaign's results, as its report renders them (:meth:`load`)."""

    layout: Layout  #: where the report is written
    campaign: Campaign
    machines: dict[str, MachineResults]  #: in the campaign's order
    runs: list[RunRecord]
    cells: list[dict]  #: ``stats.json``'s cell table (:mod:`pinbench.stats.tables`)
    summary: list[dict]  #: ``stats.json``'s summary: the study's Tables 1-3
    verdicts: list[Verdict]
    comparisons: list[Comparison]
    runtimes: list[dict]  #: compilers side by side (:func:`pinbench.stats.runtimes.read`)
    explanations: list[Explanation]
    models: list[ModelRow]
    models_text: str | None  #: the first line of the models' summary (None: not written)

    @functools.cached_property
    def described(self) -> dict[tuple, CellStats]:
        """Each cell's runs described (:func:`pinbench.stats.cells.describe_cells`), once for
        every page."""
        return describe_cells(self.runs)

    @classmethod
    def load(cls, layout: Layout, config: dict, measured: list[str]) -> CampaignResults:
        """Read every file of the campaign the report shows (``measured``: the machines
        measured, the others planned)."""
        stats = read_json(Path(layout.stats("json")), "stats") or {"cells": [], "summary": []}
        campaign = Campaign.of(config)
        models_text = Path(layout.models_text)
        return cls(
            layout=layout, campaign=campaign,
            machines={name: machine_results(layout, name, name in measured,
                                            list(campaign.strategies))
                      for name in campaign.machines},
            runs=_if_there(layout.all_runs, lambda path: read_runs([path])),
            cells=stats["cells"], summary=stats["summary"],
            verdicts=_if_there(layout.stats("verdicts"), read_verdicts),
            comparisons=_if_there(layout.stats("comparisons"), read_comparisons),
            runtimes=_if_there(layout.stats("runtimes"), runtimes_table.read),
            explanations=_if_there(layout.explain_table, read_explain),
            models=read_models(Path(layout.models)),
            models_text=(models_text.read_text().splitlines() or [""])[0]
            if models_text.is_file() else None)


def _if_there(path: str, read) -> list:
    """``read`` of the file at ``path``, [] when the campaign did not write it."""
    return read(Path(path)) if Path(path).is_file() else []


def machine_results(layout: Layout, name: str, measured: bool,
                    strategies: list[str]) -> MachineResults:
    """What the campaign of ``layout`` wrote of machine ``name`` (``strategies``: the
    campaign's, for the cells a failed trace left out)."""
    topology_xml = Path(layout.topology(name))
    try:
        topology = parse_xml(topology_xml.read_text(), str(topology_xml))
    except (OSError, TopologyError):
        topology = None
    matrices, regions = [], []
    for bench, path in layout.matrix_files(name):
        try:
            matrix = np.asarray(read_matrix(path))
        except MatrixError:
            continue
        matrices.append((bench, matrix))
        try:
            regions.append((bench, read_regions(regions_path(path)), matrix))
        except (RegionsError, OSError):
            continue
    return MachineResults(
        name=name, measured=measured, topology=topology,
        drawing=lstopo_image(topology_xml) if topology_xml.exists() else None,
        environment=read_json(Path(layout.environment(name)), "environment"),
        placements={key: read_placement(path) for key, path in layout.placement_files(name)},
        matrices=matrices, regions=regions,
        set_aside=layout.set_aside_journals(name) if measured else [],
        left_out=traces.left_out(layout, name, strategies))


def lstopo_image(topology_xml: Path) -> str | None:
    """lstopo's drawing of the machine as a data URI (an <img>, so nothing in it can run)."""
    proc = subprocess.run(["lstopo-no-graphics", "--input", str(topology_xml), "--of", "svg", "-"],
                          capture_output=True, check=False)
    if proc.returncode != 0 or not proc.stdout:
        return None
    return "data:image/svg+xml;base64," + base64.b64encode(proc.stdout).decode()
