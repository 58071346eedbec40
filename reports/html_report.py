"""The self-contained HTML campaign report: ``results/<campaign>/report/index.html``.

It reads only what the campaign wrote (``stats/``, ``runs.csv``, topologies,
placements, environments, affinity matrices) and never runs a measurement.
The page needs nothing from the network: styles are inline, figures are
inline SVG, the machine drawings are data URIs. Everything that comes from a
campaign file or a benchmark's output goes through Jinja2's autoescaping.
"""
from __future__ import annotations

import datetime
from pathlib import Path

import jinja2
import yaml
from markupsafe import Markup

from affinity.results.layout import Layout
from affinity.results.runs import RunRecord
from reports import campaign_data as data
from stats.cells import coarse_text, describe_cells

TEMPLATES = Path(__file__).resolve().parent / "templates"


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES),
                             autoescape=True, undefined=jinja2.StrictUndefined)
    env.filters["num"] = lambda v, digits=4: "–" if v in (None, "") else f"{float(v):.{digits}g}"
    env.filters["fixed"] = lambda v: "–" if v in (None, "") else f"{float(v):.2f}"
    env.filters["pval"] = lambda v: "–" if v in (None, "") else f"{float(v):.2g}"
    env.filters["svg"] = Markup  # our own matplotlib output, with no campaign text inside
    return env


def run_counts(runs: list[RunRecord]) -> dict:
    """Totals over the campaign's runs."""
    return {
        "runs": len(runs),
        "failed": sum(not r.ok for r in runs),
        "misplaced": sum(r.misplaced for r in runs),
        "first": min((r.started_at for r in runs), default=None),
        "last": max((r.started_at for r in runs), default=None),
    }


def context(layout: Layout, config: dict, measured: list[str]) -> dict:
    """All the template needs, from the campaign's results."""
    stats = data.read_json(Path(layout.stats("json"))) or {"cells": [], "summary": []}
    runs = data.campaign_runs(layout)
    verdicts = data.verdicts(layout)
    machines = []
    for name in config["machines"]:
        topology = Path(layout.topology(name))
        machines.append({
            "name": name, "measured": name in measured,
            "topology": config["machines"][name]["topology"],
            "drawing": data.lstopo_image(topology) if topology.exists() else None,
            "environment": data.read_json(Path(layout.environment(name))),
            "placements": data.placement_sections(layout, name),
            "heatmaps": data.heatmaps(layout, name),
        })
    return {
        "campaign": config["campaign"], "config": config,
        "config_text": yaml.safe_dump(config, sort_keys=False, allow_unicode=True),
        "generated": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "counts": run_counts(runs), "machines": machines,
        "verdicts": verdicts, "indistinct": data.indistinct_machines(verdicts),
        "summary_tables": data.summary_by_threads(stats["summary"]),
        "benchmarks": data.benchmark_sections(stats["cells"], runs,
                                              data.placement_scores(layout, stats["cells"])),
        "descriptions": {b: e.get("description", "") for b, e in config["benchmarks"].items()},
        "set_aside": [note for name in measured for note in layout.set_aside_journals(name)],
        "coarse": [coarse_text(key, cell) for key, cell in describe_cells(runs).items()
                   if cell.coarse],
        "models": data.model_sections(layout, runs),
    }


def build_report(layout: Layout, config: dict, measured: list[str]) -> Path:
    """Render the report into the layout's report folder; return the path of ``index.html``."""
    html = _environment().get_template("report.html.j2").render(context(layout, config, measured))
    index = Path(layout.report_index)
    index.parent.mkdir(parents=True, exist_ok=True)
    index.write_text(html)
    return index
