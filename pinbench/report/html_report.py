"""The HTML campaign report: ``results/<campaign>/report/``, pages that open offline.

The first page, ``index.html``, is the overview: the matrix of every cell, the banners, the
study's summary tables, the machines, the configuration, and a link to each benchmark's page
and each machine's page beside it (:mod:`pinbench.report.benchmark_pages`,
:mod:`pinbench.report.machine_pages`), where everything else is, read only when opened.
So the first page holds a few hundred bytes per cell (:data:`INDEX_BUDGET`) and opens at any
size of campaign. It renders what the campaign wrote (``stats/``, ``runs.csv``, topologies,
placements, environments, affinity matrices), read once into one object
(:class:`pinbench.report.campaign_results.CampaignResults`), and never runs a measurement.
Nothing comes from the network: styles are inline, the cells' figures are drawn by
``report.js`` (written beside the pages) from each benchmark page's data file, the other
figures are inline SVG, the machine drawings data URIs. Everything that comes from a
campaign file or a benchmark's output goes through Jinja2's autoescaping, or is drawn as text.
"""
from __future__ import annotations

import datetime
import shutil
from pathlib import Path

import jinja2
import yaml
from markupsafe import Markup

from pinbench.place.symmetry import ELSEWHERE
from pinbench.report import benchmark_pages, export, machine_pages, overview
from pinbench.report import campaign_data as data
from pinbench.report.campaign_results import Campaign, CampaignResults
from pinbench.results.layout import REPORT_PAGES, Layout
from pinbench.results.printed_share import SHARE_EXPECTED
from pinbench.stats.cells import coarse_text
from pinbench.stats.explain import MIN_SHARE, TOLERANCE
from pinbench.stats.models import MAX_SMAPE
from pinbench.stats.tables import PRECISION

TEMPLATES = Path(__file__).resolve().parent / "templates"


def page_environment() -> jinja2.Environment:
    """The templates of pinbench's pages, autoescaped, with their number filters."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES),
                             autoescape=True, undefined=jinja2.StrictUndefined)
    env.filters["num"] = lambda v, digits=4: "–" if v in (None, "") else f"{float(v):.{digits}g}"
    env.filters["count"] = lambda v: "–" if v in (None, "") else str(int(v))  # a whole number
    env.filters["fixed"] = lambda v: "–" if v in (None, "") else f"{float(v):.2f}"
    env.filters["pval"] = lambda v: "–" if v in (None, "") else f"{float(v):.2g}"
    env.filters["svg"] = Markup  # our own matplotlib output, with no campaign text inside
    env.globals["href"] = Layout.report_href
    return env


#: The first page's size budget, in bytes: a fixed part and a part per cell (machine,
#: benchmark and thread count); tests/test_report.py holds a generated campaign to it.
INDEX_BUDGET = (40_000, 700)


def shared_context(campaign: Campaign, generated: str) -> dict:
    """What every page of the report shows or needs: the campaign, its configuration, the
    date, the thresholds its texts quote."""
    return {"campaign": campaign.name, "config": campaign.config, "generated": generated,
            "meta": export.metadata(campaign, generated), "precision": PRECISION,
            "quiet_threshold": campaign.quiet_threshold,
            "explain_tolerance": TOLERANCE, "explain_min_share": MIN_SHARE,
            "models_max_smape": MAX_SMAPE, "share_expected": SHARE_EXPECTED}


def context(results: CampaignResults, shared: dict, machines: list[dict], pages: dict,
            left_out_parts: list[str] = ()) -> dict:
    """All the first page needs: ``machines`` (:func:`pinbench.report.machine_pages.machines`)
    and ``pages`` (:func:`pinbench.report.benchmark_pages.write_pages`) from the pages beside;
    ``left_out_parts``: the parts of the campaign a missing tool left out, a line each
    (:meth:`pinbench.workflow.optional.LeftOut.line`)."""
    campaign, verdicts, summary = results.campaign, results.verdicts, results.summary
    strategies = list(dict.fromkeys([*campaign.strategies,
                                     *(c["strategy"] for c in results.cells)]))
    described = results.described
    summary_marks, summary_notes = data.warning_notes(summary)
    for row, marks in zip(summary, summary_marks):
        row["note_marks"] = marks
    indistinct = data.indistinct_machines(verdicts)
    return shared | {
        "config_text": yaml.safe_dump(campaign.config, sort_keys=False, allow_unicode=True),
        "counts": data.run_counts(results.runs), "machines": machines,
        "indistinct": indistinct, "verdicts": verdicts,
        "flat": data.flat_machines(results.machines, indistinct), "elsewhere": ELSEWHERE,
        "overview": overview.overview(results.cells, verdicts, results.comparisons,
                                      described, strategies, campaign.baseline,
                                      campaign.quiet_threshold, 1 - campaign.confidence),
        "scale": overview.scale_legend(), "warning_legend": overview.warning_legend(),
        "summary": summary, "summary_notes": summary_notes,
        "summary_tables": data.summary_by_threads(summary),
        "runtimes": bool(results.runtimes),
        "benchmark_pages": pages["pages"], "explained": pages["explained"],
        "modelled": pages["modelled"], "models_note": pages["note"],
        "exported_figures": pages["exported"],
        "set_aside": [note for machine in results.machines.values()
                      for note in machine.set_aside],
        "left_out": [cell for machine in results.machines.values() for cell in machine.left_out],
        "coarse": [coarse_text(key, cell) for key, cell in described.items() if cell.coarse],
        "printed": [f"{v.machine}/{v.benchmark}/t{v.threads}: {v.printed_time}"
                    for v in verdicts if v.printed_time],
        "left_out_parts": list(left_out_parts),
    }


def build_report(layout: Layout, config: dict, measured: list[str],
                 left_out_parts: list[str] = ()) -> Path:
    """Read the campaign's results once (:meth:`CampaignResults.load`; ``measured``: the
    machines measured, the others planned) and :func:`render` them; return the path of
    ``index.html``."""
    return render(CampaignResults.load(layout, config, measured), left_out_parts)


def render(results: CampaignResults, left_out_parts: list[str] = ()) -> Path:
    """Render the report into the results' layout's report folder, reading no file: the
    first page, the benchmarks' and machines' pages (those and the figures of an earlier
    build removed), ``report.js``, and the tables and figures as files beside them
    (:mod:`pinbench.report.export`); return the path of ``index.html``.
    ``left_out_parts``: as :func:`context`'s."""
    layout = results.layout
    generated = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    shared = shared_context(results.campaign, generated)
    for earlier in [layout.report_figures, *(f"{layout.report}/{kind}" for kind in REPORT_PAGES)]:
        shutil.rmtree(earlier, ignore_errors=True)
    Path(layout.report).mkdir(parents=True, exist_ok=True)
    env = page_environment()
    pages = benchmark_pages.write_pages(results, env, shared)
    machines = machine_pages.machines(results)
    machine_pages.write_pages(results, env, shared, machines)
    ctx = context(results, shared, machines, pages, left_out_parts)
    index = Path(layout.report_index)
    index.write_text(env.get_template("report.html.j2").render(ctx))
    shutil.copyfile(TEMPLATES / "report.js", layout.report_script)
    export.write_tables(layout, ctx["overview"], ctx["summary"], ctx["meta"])
    return index
