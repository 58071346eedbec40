"""The report's page of each machine: ``report/machines/<machine>.html``.

The first page (:mod:`pinbench.report.html_report`) lists the machines with their runs and
verification counts; each machine's page adds the environment recorded and the system
checks, lstopo's drawing of the machine and every placement drawn on its tree.
"""
from __future__ import annotations

from pathlib import Path

import jinja2

from pinbench.report import campaign_data as data
from pinbench.results.layout import Layout
from pinbench.results.runs import RunRecord


def machines(layout: Layout, config: dict, measured: list[str],
             runs: list[RunRecord]) -> list[dict]:
    """What the first page says of each machine: measured or planned, its topology, its
    CPU kinds and the counts of its runs."""
    return [{"name": name, "measured": name in measured,
             "topology": config["machines"][name]["topology"],
             "kinds": data.cpu_kinds(layout, name),
             "counts": data.run_counts([r for r in runs if r.machine == name])}
            for name in config["machines"]]


def write_pages(layout: Layout, env: jinja2.Environment, shared: dict,
                listed: list[dict]) -> None:
    """Write each machine's page, one at a time (its drawing and placements read then);
    ``listed``: :func:`machines`, ``shared``: what every page shows."""
    template = env.get_template("machine.html.j2")
    for machine in listed:
        name = machine["name"]
        topology = Path(layout.topology(name))
        page = Path(layout.report_page("machines", name))
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(template.render(shared | {"m": machine | {
            "drawing": data.lstopo_image(topology) if topology.exists() else None,
            "environment": data.read_json(Path(layout.environment(name)), "environment"),
            "placements": data.placement_sections(layout, name)}}))
