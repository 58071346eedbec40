"""The self-contained HTML campaign report: ``results/<campaign>/report/index.html``.

It reads only what the campaign wrote (``stats/``, ``runs.csv``, topologies,
placements, environments, affinity matrices) and never runs a measurement.
The page needs nothing from the network: styles are inline, figures are
inline SVG, the machine drawings are data URIs. Everything that comes from a
campaign file or a benchmark's output goes through Jinja2's autoescaping.
"""
from __future__ import annotations

import datetime
from collections import Counter
from pathlib import Path

import jinja2
import yaml
from markupsafe import Markup

from pinbench.measure.settings import QUIET
from pinbench.results import traces
from pinbench.results.layout import Layout
from pinbench.results.runs import RunRecord
from pinbench.report import campaign_data as data
from pinbench.report import export, overview
from pinbench.report.explain_section import explain_sections
from pinbench.stats import runtimes as runtimes_table
from pinbench.stats.cells import coarse_text, describe_cells
from pinbench.stats.explain import MIN_SHARE, TOLERANCE
from pinbench.stats.models import MAX_SMAPE
from pinbench.stats.tables import PRECISION

TEMPLATES = Path(__file__).resolve().parent / "templates"


def page_environment() -> jinja2.Environment:
    """The templates of pinbench's pages, autoescaped, with their number filters."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES),
                             autoescape=True, undefined=jinja2.StrictUndefined)
    env.filters["num"] = lambda v, digits=4: "–" if v in (None, "") else f"{float(v):.{digits}g}"
    env.filters["fixed"] = lambda v: "–" if v in (None, "") else f"{float(v):.2f}"
    env.filters["pval"] = lambda v: "–" if v in (None, "") else f"{float(v):.2g}"
    env.filters["svg"] = Markup  # our own matplotlib output, with no campaign text inside
    return env


def run_counts(runs: list[RunRecord]) -> dict:
    """Totals over the campaign's (or one machine's) runs, the verification results counted."""
    return {
        "runs": len(runs),
        "failed": sum(not r.ok for r in runs),
        "misplaced": sum(r.misplaced for r in runs),
        "first": min((r.started_at for r in runs), default=None),
        "last": max((r.started_at for r in runs), default=None),
        "verification": dict(sorted(Counter(r.verification for r in runs).items())),
        "hosts": sorted({r.host for r in runs if r.host}),
    }


def context(layout: Layout, config: dict, measured: list[str]) -> dict:
    """All the template needs, from the campaign's results."""
    stats = data.read_json(Path(layout.stats("json")), "stats") or {"cells": [], "summary": []}
    runs = data.campaign_runs(layout)
    verdicts = data.verdicts(layout)
    generated = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    meta = export.metadata(config, generated)
    figure_meta = export.figure_metadata(meta)
    threshold = config.get("quiet", {}).get("threshold", QUIET["threshold"])  # the schema fills it
    strategies = list(dict.fromkeys([*config.get("strategies", []),
                                     *(c["strategy"] for c in stats["cells"])]))
    described = describe_cells(runs)
    machines = []
    for name in config["machines"]:
        topology = Path(layout.topology(name))
        machines.append({
            "name": name, "measured": name in measured,
            "topology": config["machines"][name]["topology"],
            "drawing": data.lstopo_image(topology) if topology.exists() else None,
            "kinds": data.cpu_kinds(layout, name),
            "environment": data.read_json(Path(layout.environment(name)), "environment"),
            "counts": run_counts([r for r in runs if r.machine == name]),
            "placements": data.placement_sections(layout, name),
            "heatmaps": data.heatmaps(layout, name, figure_meta),
        })
    sections = data.benchmark_sections(stats["cells"], runs,
                                       data.placement_scores(layout, stats["cells"]),
                                       threshold, figure_meta)
    summary_marks, summary_notes = data.warning_notes(stats["summary"])
    for row, marks in zip(stats["summary"], summary_marks):
        row["note_marks"] = marks
    return {
        "campaign": config["campaign"], "config": config, "meta": meta,
        "config_text": yaml.safe_dump(config, sort_keys=False, allow_unicode=True),
        "generated": generated, "precision": PRECISION,
        "explain_tolerance": TOLERANCE, "explain_min_share": MIN_SHARE,
        "models_max_smape": MAX_SMAPE,
        "counts": run_counts(runs), "machines": machines,
        "verdicts": verdicts, "indistinct": data.indistinct_machines(verdicts),
        "overview": overview.overview(stats["cells"], verdicts, data.comparisons(layout),
                                      described, strategies, config["baseline"],
                                      threshold, 1 - config["confidence"]),
        "scale": overview.scale_legend(), "warning_legend": overview.warning_legend(),
        "summary": stats["summary"], "summary_notes": summary_notes,
        "summary_tables": data.summary_by_threads(stats["summary"]),
        "runtimes": runtimes_table.read(Path(layout.stats("runtimes")))
        if Path(layout.stats("runtimes")).exists() else [],
        "benchmarks": data.by_benchmark(sections),
        "descriptions": {b: e.get("description", "") for b, e in config["benchmarks"].items()},
        "set_aside": [note for name in measured for note in layout.set_aside_journals(name)],
        "left_out": [cell for name in config["machines"]
                     for cell in traces.left_out(layout, name, config.get("strategies", []))],
        "explained": explain_sections(Path(layout.explain_table), config["baseline"], verdicts),
        "coarse": [coarse_text(key, cell) for key, cell in described.items() if cell.coarse],
        "models": data.model_sections(layout, runs),
    }


def figures_of(ctx: dict) -> dict[str, str]:
    """Every figure of the report: file name -> SVG text."""
    found = {}
    for group in ctx["benchmarks"]:
        for section in group["sections"]:
            for kind, key in (("times", "distribution"), ("order", "run_order")):
                if section[key]:
                    found[section["figure_names"][kind]] = section[key]
    for machine in ctx["machines"]:
        found |= {h["figure_name"]: h["svg"] for h in machine["heatmaps"]}
    return found


def build_report(layout: Layout, config: dict, measured: list[str]) -> Path:
    """Render the report into the layout's report folder, with its tables and figures as
    files beside it (:mod:`pinbench.report.export`); return the path of ``index.html``."""
    ctx = context(layout, config, measured)
    html = page_environment().get_template("report.html.j2").render(ctx)
    index = Path(layout.report_index)
    index.parent.mkdir(parents=True, exist_ok=True)
    index.write_text(html)
    export.write_exports(layout, ctx["overview"], ctx["summary"], figures_of(ctx), ctx["meta"])
    return index
