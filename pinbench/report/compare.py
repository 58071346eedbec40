"""``pinbench compare A B``: the same cells of two campaigns compared, a page, a table and an
exit status for a regression gate.

    pinbench compare A B [--threshold PERCENT] [--confidence 0.95] [--out DIR]
                         [--store FILE] [--allow-other-machines]

A and B are each a campaign's results folder (``results/<campaign>``), its campaign file
(the results then are ``results/<campaign>`` of the directory pinbench is started in), or
the id of a campaign in the results store (``pinbench store add``,
:mod:`pinbench.results.store`). A is the reference: every (machine, benchmark, threads,
strategy) both measured gets the ratio of B's median time to A's, its interval and a verdict
(``slower``, ``faster``, ``no measurable difference`` with the ratio that could have been
found, or ``not tested``), by :mod:`pinbench.stats.regression`, report-wide over the cells.
Cells only one campaign measured are listed. A machine whose topology differs between the
two is refused in one line (``--allow-other-machines``: a warning instead); other
differences of a machine (host, kernel, compiler, OpenMP runtime, pinbench version) are one
warning line each.

Prints one line per cell, writes ``index.html`` and ``comparison.csv`` into ``--out``
(default ``results/compare/<A>-vs-<B>``), and exits with **0** when no cell is slower, **1**
when some cell is slower (beyond ``--threshold`` percent), **2** on a usage or input error
(no cell in common included); the command's parser and output: :mod:`pinbench.commands.compare`.
"""
from __future__ import annotations

import re
from pathlib import Path

from pinbench.errors import InputError
from pinbench.results.layout import Layout
from pinbench.results.store import Campaign, Store, from_results
from pinbench.topology import TopologyError, parse_xml

#: What a machine's environment.json says that a comparison should know differs.
ENVIRONMENT_KEYS = ("hostname", "kernel", "compiler", "openmp_runtime")


def resolve(spec: str, store: Path) -> tuple[Campaign, str]:
    """The campaign ``spec`` names (results folder, campaign file or stored id) and a short
    label of it for file names."""
    path = Path(spec)
    if path.is_dir():
        return from_results(path), path.resolve().name
    if path.is_file():
        from pinbench.workflow.project import CampaignError, read_campaign

        try:
            config, _, _ = read_campaign(path, Path.cwd())
        except CampaignError as exc:
            raise InputError(f"{spec}: {exc}") from None
        return from_results(Path(Layout.of(config["campaign"]).root)), config["campaign"]
    if re.fullmatch(r"\d+", spec):
        campaign = Store(store).get(int(spec))
        return campaign, f"{campaign.name}-{spec}"
    raise InputError(f"{spec}: no such results folder, campaign file or stored campaign id")


def _shape(xml: str) -> str:
    """What a topology's comparison looks at: its levels and placeable PUs."""
    try:
        tree = parse_xml(xml)
    except TopologyError:
        return xml
    return f"{tree.summary()} ({' '.join(map(str, tree.placeable))})"


def machine_differences(a: Campaign, b: Campaign, machines: list[str]
                        ) -> tuple[list[str], list[str]]:
    """(topologies that differ, other differences): one line each, per machine of
    ``machines`` both campaigns recorded."""
    topologies, others = [], []
    for name in machines:
        ma, mb = a.machines.get(name), b.machines.get(name)
        if ma is None or mb is None:
            continue
        if ma.topology and mb.topology and _shape(ma.topology) != _shape(mb.topology):
            topologies.append(f"machine {name!r}: the topologies differ (A: "
                              f"{_shape(ma.topology)}; B: {_shape(mb.topology)})")
        env_a, env_b = ma.environment or {}, mb.environment or {}
        changed = [f"{key} {env_a.get(key)!r} -> {env_b.get(key)!r}" for key in ENVIRONMENT_KEYS
                   if env_a and env_b and env_a.get(key) != env_b.get(key)]
        version_a, version_b = (env.get("pinbench", {}).get("version") for env in (env_a, env_b))
        if env_a and env_b and version_a != version_b:
            changed.append(f"pinbench {version_a} -> {version_b}")
        if changed:
            others.append(f"machine {name!r}: " + "; ".join(changed))
    return topologies, others


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def cell_line(row: dict) -> str:
    """One compared cell, as the command prints it."""
    name = f"{row['machine']}/{row['benchmark']}/t{row['threads']} {row['strategy']}"
    interval = (f" [{_ratio(row['ratio_low'])}, {_ratio(row['ratio_high'])}]"
                if row["ratio_low"] is not None else "")
    text = f"{name}: B/A {_ratio(row['ratio'])}{interval} {row['verdict']}"
    if row["same_as"]:
        return f"{name}: as {row['same_as']} (the same runs)"
    if row["verdict"] in ("slower", "faster"):
        return text + f" (p {row['p_report']:.2g}, report-wide)"
    if row["verdict"] == "not tested":
        return text + f" ({row['runs_a']} and {row['runs_b']} runs)"
    found = row["detectable_ratio"]
    return text + (f" (a ratio beyond {found:.4g} or 1/{found:.4g} would have been found)"
                   if found else " (no difference could have been found with these runs)")


def write_outputs(out: Path, context: dict) -> None:
    """``index.html`` and ``comparison.csv`` of a comparison into ``out``."""
    from pinbench.report.export import csv_text
    from pinbench.report.html_report import page_environment
    from pinbench.stats.regression import COLUMNS

    out.mkdir(parents=True, exist_ok=True)
    (out / "comparison.csv").write_text(csv_text(context["rows"], COLUMNS, context["meta"]))
    page = page_environment().get_template("compare.html.j2").render(context)
    (out / "index.html").write_text(page)


def side(campaign: Campaign, label: str) -> dict:
    """What the page and `--json` say of one of the two campaigns."""
    who = campaign.provenance
    return {"name": campaign.name, "label": label, "source": campaign.source,
            "version": who.get("version"), "commit": who.get("commit"),
            "machines": sorted(campaign.machines)}
