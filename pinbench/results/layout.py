"""Where every file of a campaign lives: the one home of the results layout.

::

    results/<campaign>/
      <machine>/topology.xml                              hwloc XML, as measured or planned
      <machine>/bin/<bench>, <bench>.traced               builds
      <machine>/bin/.generated/<tree digest>.txt          files builds wrote among their inputs
      <machine>/affinity/<bench>/t<N>.csv, t<N>.json      affinity matrix, how it was made
      <machine>/affinity/<bench>/t<N>.regions.json        per parallel region (results.regions)
      <machine>/affinity/<bench>/.cache/t<N>-<key>.csv    every trace made, by what it traced
      <machine>/placements/<bench>/t<N>/<strategy>.json   placement files
      <machine>/journal/<bench>/t<N>.jsonl                a measurement job's journal
      <machine>/journal/<bench>/t<N>.jsonl.stale-<time>   one set aside (+ .why: what changed)
      <machine>/runs/<bench>/t<N>.csv                     a measurement job's runs table
      <machine>/output/<bench>/t<N>/<fingerprint>/        each run's output, compressed
      <machine>/scratch/<bench>/t<N>/                     where a job's runs start, while it runs
      <machine>/explained/<bench>/t<N>.jsonl              explained runs (OMPT), apart
      <machine>/explained/<bench>/t<N>.journal.jsonl      their journal
      <machine>/environment.json                          the machine and toolchain
      <machine>/plan.txt                                  every placement, readable
      <machine>/logs/<stage>/...                          one log per job
      runs.csv, summary.txt                               every run; a summary per cell
      stats/cells.csv, summary.csv, summary.txt, stats.json, verdicts.csv, comparisons.csv
      stats/explain.csv, explain.txt                      idle time, work inflation (OMPT), readings
      stats/models.csv, models.txt                        scalability models (Extra-P), summary
      report/index.html                                   the report's first page: the overview
      report/benchmarks/<bench>.html, <bench>.js          a benchmark's page and its figures' data
      report/machines/<machine>.html                      a machine's page
      report/report.js                                    draws the pages' figures from their data
      report/overview.csv, overview.md, summary.csv, summary.md   the tables, for papers
      report/figures/<machine>-<bench>-t<N>-affinity.svg         the affinity matrices' figures
      timings/<stage>[/<machine>/<bench>/t<N>].tsv        each job's wall time (Snakemake)
      logs/<rule>.log

Every path method takes names or Snakemake wildcards alike:
``Layout.of("tiny").runs("{machine}", "{bench}", "{n}")`` is the measure rule's
output pattern, ``Layout.of("tiny").runs("here", "spin", 2)`` one file of it.
Paths are strings, relative to the workflow's working directory.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from pinbench.results import formats, stale
from pinbench.results.journals import finished_runs


def sidecar_path(matrix_csv: Path | str) -> Path:
    """The JSON sidecar of an affinity matrix file: beside it, extension ``.json``."""
    return Path(matrix_csv).with_suffix(".json")


#: The report's pages beside its ``index.html``, by kind (each in the report's folder of that
#: name): one per benchmark, one per machine.
REPORT_PAGES = ("benchmarks", "machines")
#: The analysis' files (``stats/`` of a campaign; the OUTDIR of ``pinbench analyse``).
STATS_FILES = {"cells": "cells.csv", "summary": "summary.csv", "tables": "summary.txt",
               "json": "stats.json", "verdicts": "verdicts.csv",
               "comparisons": "comparisons.csv"}
#: Files beside them, made by other rules: compilers side by side (:mod:`pinbench.stats.runtimes`).
OTHER_STATS = {"runtimes": "runtimes.csv"}

#: Beside the campaigns' folders: the results store (:mod:`pinbench.results.store`) and the
#: folder of ``pinbench compare``'s outputs (``<A>-vs-<B>/``).
STORE = "results/store.sqlite"
COMPARISONS = "results/compare"


@dataclass(frozen=True)
class PlacementKey:
    """What a placement file is for, read back from its path."""

    machine: str
    benchmark: str
    threads: int
    strategy: str


@dataclass(frozen=True)
class Layout:
    """The files of one campaign, under ``root`` (``results/<campaign>``)."""

    root: str

    @classmethod
    def of(cls, campaign: str) -> "Layout":
        """The layout of campaign ``campaign``: ``results/<campaign>``."""
        return cls(f"results/{campaign}")

    # --- per machine -------------------------------------------------------------------------
    def machine(self, machine: str) -> str:
        """The folder of one machine."""
        return f"{self.root}/{machine}"

    def topology(self, machine: str) -> str:
        return f"{self.root}/{machine}/topology.xml"

    def binary(self, machine: str, bench: str, traced: bool = False) -> str:
        """A benchmark's build; ``traced``: its tsan-instrumented variant."""
        return f"{self.root}/{machine}/bin/{bench}{'.traced' if traced else ''}"

    def generated(self, machine: str, tree: str) -> str:
        """The files that builds in one source tree wrote among their inputs (so, from then on,
        not inputs of any build there); ``tree`` as :func:`pinbench.workflow.campaign.build_tree`
        names it."""
        digest = hashlib.sha256(tree.encode()).hexdigest()[:16]
        return f"{self.root}/{machine}/bin/.generated/{digest}.txt"

    def matrix(self, machine: str, bench: str, threads) -> str:
        """The affinity matrix of a benchmark at ``threads`` threads."""
        return f"{self.root}/{machine}/affinity/{bench}/t{threads}.csv"

    def sidecar(self, machine: str, bench: str, threads) -> str:
        """How that matrix was made (:func:`sidecar_path`)."""
        return str(sidecar_path(self.matrix(machine, bench, threads)))

    def trace_cache(self, machine: str, bench: str, threads, key: str) -> str:
        """A trace kept by what was traced (``key``: binary, command, settings), to reuse."""
        return f"{self.root}/{machine}/affinity/{bench}/.cache/t{threads}-{key}.csv"

    def placements(self, machine: str) -> str:
        """The folder of every placement file of a machine."""
        return f"{self.root}/{machine}/placements"

    def placement(self, machine: str, bench: str, threads, strategy: str) -> str:
        return f"{self.root}/{machine}/placements/{bench}/t{threads}/{strategy}.json"

    def journal(self, machine: str, bench: str, threads) -> str:
        return f"{self.root}/{machine}/journal/{bench}/t{threads}.jsonl"

    def outputs(self, machine: str, bench: str, threads) -> str:
        """The folder of a measurement job's kept run outputs (one subfolder per journal)."""
        return f"{self.root}/{machine}/output/{bench}/t{threads}"

    def scratch(self, machine: str, bench: str, threads) -> str:
        """The folder a measurement job's runs start in, unless the benchmark names one
        (:mod:`pinbench.measure.workdir`): there while the job runs."""
        return f"{self.root}/{machine}/scratch/{bench}/t{threads}"

    def trace_scratch(self, machine: str, bench: str, threads) -> str:
        """The folder a traced run starts in, unless the benchmark names one: the scratch
        folder of a measurement job (:meth:`scratch`) for the trace of the same cell."""
        return f"{self.scratch(machine, bench, threads)}.trace"

    def runs(self, machine: str, bench: str, threads) -> str:
        """The runs table of one measurement job."""
        return f"{self.root}/{machine}/runs/{bench}/t{threads}.csv"

    def explained(self, machine: str, bench: str, threads) -> str:
        """The explained runs of one measurement job (:mod:`pinbench.results.explained`):
        runs under the OMPT tool and the T_1 / T_s baselines, never timing runs."""
        return f"{self.root}/{machine}/explained/{bench}/t{threads}.jsonl"

    def explained_journal(self, machine: str, bench: str, threads) -> str:
        """The journal behind :meth:`explained`."""
        return f"{self.root}/{machine}/explained/{bench}/t{threads}.journal.jsonl"

    @property
    def runtimes_text(self) -> str:
        """Compilers side by side in words (:mod:`pinbench.stats.runtimes`)."""
        return f"{self.root}/stats/runtimes.txt"

    @property
    def explain_table(self) -> str:
        """The work-inflation decomposition per cell (:mod:`pinbench.stats.explain`)."""
        return f"{self.root}/stats/explain.csv"

    @property
    def explain_text(self) -> str:
        """Each explained cell's reading of its timing verdict, or why there is none
        (:mod:`pinbench.stats.explain_readings`)."""
        return f"{self.root}/stats/explain.txt"

    def environment(self, machine: str) -> str:
        return f"{self.root}/{machine}/environment.json"

    def plan(self, machine: str) -> str:
        return f"{self.root}/{machine}/plan.txt"

    def log(self, machine: str | None, stage: str, bench: str | None = None,
            threads=None) -> str:
        """The log of a job: ``<machine>/logs/<stage>[/<bench>][/t<N>].log``, or a campaign's."""
        parts = [self.root, *([machine] if machine is not None else []), "logs", stage]
        parts += [bench] if bench is not None else []
        parts += [f"t{threads}"] if threads is not None else []
        return "/".join(parts) + ".log"

    # --- per campaign ------------------------------------------------------------------------
    @property
    def all_runs(self) -> str:
        """Every run of the campaign (the measurement jobs' tables, concatenated)."""
        return f"{self.root}/runs.csv"

    @property
    def cells_summary(self) -> str:
        """The printed summary of every cell."""
        return f"{self.root}/summary.txt"

    def stats(self, kind: str) -> str:
        """A file of the analysis, by its kind in :data:`STATS_FILES` (``cells``, ``verdicts``...)."""
        return f"{self.root}/stats/{(STATS_FILES | OTHER_STATS)[kind]}"

    @property
    def models(self) -> str:
        """The scalability models, one row per machine, benchmark, strategy and quantity."""
        return f"{self.root}/stats/models.csv"

    @property
    def models_text(self) -> str:
        """The models' readable summary (or why there are none)."""
        return f"{self.root}/stats/models.txt"

    @property
    def report(self) -> str:
        """The report's folder."""
        return f"{self.root}/report"

    @property
    def report_index(self) -> str:
        return f"{self.root}/report/index.html"

    @staticmethod
    def report_href(kind: str, name: str, ext: str = "html") -> str:
        """A page of the report (``ext`` html) or its data (js), relative to the report's
        folder: ``kind`` one of :data:`REPORT_PAGES`, ``name`` a benchmark's or a machine's."""
        return f"{kind}/{name}.{ext}"

    def report_page(self, kind: str, name: str, ext: str = "html") -> str:
        """A page of the report beside ``index.html`` (:meth:`report_href`)."""
        return f"{self.root}/report/{self.report_href(kind, name, ext)}"

    @property
    def report_script(self) -> str:
        """The script the pages share: it draws each page's figures from the page's data."""
        return f"{self.root}/report/report.js"

    def report_table(self, name: str, fmt: str) -> str:
        """A table of the report exported beside it: ``name`` ``overview`` or ``summary``,
        ``fmt`` ``csv`` or ``md``."""
        return f"{self.root}/report/{name}.{fmt}"

    @property
    def report_figures(self) -> str:
        """The folder of the report's figures as SVG files."""
        return f"{self.root}/report/figures"

    def report_figure(self, name: str) -> str:
        """A figure of the report as an SVG file."""
        return f"{self.report_figures}/{name}.svg"

    def timing(self, stage: str, machine: str | None = None, bench: str | None = None,
               threads=None) -> str:
        """The wall time of one job (Snakemake's ``benchmark:`` file), by stage."""
        parts = [self.root, "timings", stage, *([machine] if machine is not None else []),
                 *([bench] if bench is not None else []),
                 *([f"t{threads}"] if threads is not None else [])]
        return "/".join(parts) + ".tsv"

    def account(self, machine: str, bench: str, threads) -> str:
        """Where a measurement job's time went, by its measuring process (JSON, its timing
        file: the process's age, start-up, lock, runs, quiet waits)."""
        return self.timing("measure", machine, bench, threads)[:-len(".tsv")] + ".json"

    def timing_files(self) -> list[tuple[str, Path]]:
        """Every job's timing file on disk, with its stage: Snakemake's ``.tsv`` files, and
        the measurement jobs' accounts (``.json``: no ``benchmark:`` sampler runs beside a
        measurement)."""
        base = Path(self.root) / "timings"
        return [(path.relative_to(base).with_suffix("").parts[0], path)
                for path in sorted([*base.rglob("*.tsv"), *base.glob("measure/**/*.json")])]

    # --- reading back what exists ------------------------------------------------------------
    def placement_files(self, machine: str) -> list[tuple[PlacementKey, Path]]:
        """Every placement file of a machine on disk, in path order, with what it is for."""
        paths = sorted(Path(self.machine(machine)).glob("placements/*/t*/*.json"))
        return [(placement_key(path), path) for path in paths]

    def set_aside_journals(self, machine: str) -> list[dict]:
        """Every journal of a machine set aside as another measurement's, in path order
        (:mod:`pinbench.results.journals`): its benchmark, threads, path, finished runs and
        what changed."""
        notes = []
        journals = Path(self.machine(machine)).glob(f"journal/*/{stale.pattern('t*.jsonl')}")
        for path in sorted(journals):
            why = stale.note(path)
            note = formats.read("note", json.loads(why.read_text()), why) \
                if why.is_file() else {}
            runs = note["runs"] if "runs" in note else finished_runs(path)
            notes.append({"machine": machine, "benchmark": path.parent.name,
                          "threads": int(path.name.split(".")[0][1:]), "path": str(path),
                          "runs": runs, "changed": note.get("changed", "the measurement changed")})
        return notes

    def matrix_files(self, machine: str) -> list[tuple[str, Path]]:
        """Every affinity matrix of a machine on disk, in path order, with its benchmark."""
        paths = sorted(Path(self.machine(machine)).glob("affinity/*/t*.csv"))
        return [(path.parent.name, path) for path in paths]


def placement_key(path: Path | str) -> PlacementKey:
    """What a placement file is for: ``<machine>/placements/<bench>/t<N>/<strategy>.json``.

    >>> placement_key(Layout.of("c").placement("here", "pairs", 8, "lpgp-2"))
    PlacementKey(machine='here', benchmark='pairs', threads=8, strategy='lpgp-2')
    """
    path = Path(path)
    bench_dir = path.parent.parent
    return PlacementKey(bench_dir.parent.parent.name, bench_dir.name, int(path.parent.name[1:]),
                        path.stem)
