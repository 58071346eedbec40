"""The report's page of each machine: ``report/machines/<machine>.html``.

The first page (:mod:`pinbench.report.html_report`) lists the machines with their runs and
verification counts; each machine's page adds the environment recorded and the system
checks, lstopo's drawing of the machine and every placement drawn on its tree.
"""
from __future__ import annotations

from pathlib import Path

import jinja2

from pinbench.report import campaign_data as data
from pinbench.report.campaign_results import CampaignResults


def machines(results: CampaignResults) -> list[dict]:
    """What the first page says of each machine: measured or planned, its topology, its
    CPU kinds and the counts of its runs."""
    return [{"name": name, "measured": machine.measured,
             "topology": results.campaign.machines[name],
             "kinds": data.cpu_kinds(machine),
             "counts": data.run_counts([r for r in results.runs if r.machine == name])}
            for name, machine in results.machines.items()]


def write_pages(results: CampaignResults, env: jinja2.Environment, shared: dict,
                listed: list[dict]) -> None:
    """Write each machine's page; ``listed``: :func:`machines`, ``shared``: what every page
    shows."""
    template = env.get_template("machine.html.j2")
    for machine in listed:
        name = machine["name"]
        found = results.machines[name]
        page = Path(results.layout.report_page("machines", name))
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(template.render(shared | {"m": machine | {
            "drawing": found.drawing, "environment": found.environment,
            "placements": data.placement_sections(found)}}))
