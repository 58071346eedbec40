"""The report's page of each benchmark: ``report/benchmarks/<bench>.html`` and its data.

What grows with the campaign's cells lives on these pages, opened from the first page
(:mod:`pinbench.report.html_report`) when wanted: per benchmark the verdicts of its cells
(``verdicts.csv``), its compilers side by side, per machine and thread count each strategy's
Speedup-Test table, counters and two figures, why a placement wins (the explained runs), its
scalability models, its affinity matrices and its parallel regions (where traced per region). The two figures of each cell (run times per
experiment; run time against run order) are drawn in the browser by ``report.js`` from the
page's one data file, ``<bench>.js``: a few numbers per run instead of an SVG per figure.
"""
from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import jinja2

from pinbench.report import campaign_data as data
from pinbench.report import export, figures
from pinbench.report.campaign_results import CampaignResults
from pinbench.report.explain_section import explain_sections
from pinbench.report.regions_section import regions_sections


def value_label(metric: str) -> str:
    """What the figures' value axis shows: the run time, or the campaign's ``metric``."""
    return "run time (s)" if metric == "time" else f"{metric} per run"


def page_data(sections: list[dict], figure_meta: dict[str, str], busy_label: str,
              value: str) -> dict:
    """What ``report.js`` draws the page's figures from: per section with runs its title and
    series (:func:`pinbench.report.campaign_data.benchmark_sections`), the metadata every saved
    figure carries, the palette (:data:`pinbench.report.figures.PALETTE`) and the labels."""
    return {"meta": figure_meta, "palette": figures.PALETTE, "busy": busy_label, "value": value,
            "figures": {s["figure"]: {"title": f"{s['benchmark']}, {s['threads']} threads, "
                                               f"{s['machine']}", "series": s["series"]}
                        for s in sections if s["figure"]}}


def data_script(page: dict) -> str:
    """A page's data file: ``report.js``'s ``pinbenchPage`` called with the data, as JSON
    (drawn as text nodes by the script: nothing in it is read as markup)."""
    return f"pinbenchPage({json.dumps(page, separators=(',', ':'))});\n"


def _by_benchmark(rows: list, benchmark=lambda row: row["benchmark"]) -> dict[str, list]:
    """Rows by their benchmark (``benchmark``: a row's)."""
    grouped: dict[str, list] = defaultdict(list)
    for row in rows:
        grouped[benchmark(row)].append(row)
    return grouped


def write_pages(results: CampaignResults, env: jinja2.Environment, shared: dict) -> dict:
    """Write each benchmark's page and data file, and its affinity matrices as SVG files;
    return what the first page says of them: ``pages`` (name and description, in name
    order), whether any page ``explained`` runs or has models (``modelled``), the models'
    ``note`` (why there are none) and whether figures were ``exported``.

    ``shared``: what every page shows (the campaign, its configuration, the date...)."""
    campaign, layout = results.campaign, results.layout
    threshold = campaign.quiet_threshold
    sections = data.benchmark_sections(
        results.cells, results.runs, data.placement_scores(results.machines, results.cells),
        threshold)
    models = data.model_sections(results.models, results.models_text, results.described)
    figure_meta = export.figure_metadata(shared["meta"])
    parts = {
        "sections": _by_benchmark(sections),
        "verdicts": _by_benchmark(results.verdicts, lambda verdict: verdict.benchmark),
        "runtimes": _by_benchmark(results.runtimes),
        "explained": _by_benchmark(explain_sections(results.explanations, campaign.baseline,
                                                    results.verdicts)),
        "models": _by_benchmark(models["sections"]),
        "heatmaps": _by_benchmark([h for machine in results.machines.values()
                                   for h in data.heatmaps(machine, figure_meta)]),
        "regions": _by_benchmark([s for machine in results.machines.values()
                                  for s in regions_sections(machine)]),
    }
    names = sorted({name for grouped in parts.values() for name in grouped})
    busy = f"other processes > {threshold:.0%} of the CPUs"
    template = env.get_template("benchmark.html.j2")
    pages = []
    for name in names:
        benchmark = campaign.benchmarks.get(name)
        description = benchmark.description if benchmark else ""
        mine = {part: grouped.get(name, []) for part, grouped in parts.items()}
        page = Path(layout.report_page("benchmarks", name))
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(template.render(shared | mine | {"benchmark": name,
                                                         "description": description}))
        if mine["sections"]:
            Path(layout.report_page("benchmarks", name, "js")).write_text(data_script(
                page_data(mine["sections"], figure_meta, busy, value_label(campaign.metric))))
        export.write_figures(layout, {h["figure_name"]: h["svg"] for h in mine["heatmaps"]})
        pages.append({"name": name, "description": description})
    return {"pages": pages, "explained": bool(parts["explained"]),
            "modelled": bool(parts["models"]), "note": models["note"],
            "exported": bool(parts["heatmaps"])}
