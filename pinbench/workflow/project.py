"""A project: the directory a campaign runs in, its default campaign, and what ``pinbench``
does with a campaign outside Snakemake (reading it strictly, the plan's targets, the report).

Relative paths of a campaign (sources, trees, topology files) are read from the project,
and the results go to ``results/<campaign>/`` under it.
"""
from __future__ import annotations

from pathlib import Path

from pinbench.results.layout import Layout
from pinbench.workflow import campaign, config_file

#: The project's default campaign.
DEFAULT_CAMPAIGN = Path("config") / "config.yaml"

CampaignError = campaign.ConfigError


def read_campaign(path: Path | None, project: Path
                  ) -> tuple[dict, dict[str, campaign.Machine], Path]:
    """The campaign file ``path`` (default: the project's :data:`DEFAULT_CAMPAIGN`) read
    strictly and validated: ``(config, machines, path)``. Raises :class:`CampaignError`
    with one line."""
    if path is None:
        path = project / DEFAULT_CAMPAIGN
        if not path.is_file():
            raise CampaignError(f"no campaign given, and {project} has no {DEFAULT_CAMPAIGN} "
                                "(give one: pinbench run CAMPAIGN.yaml)")
    config, machines = campaign.load_campaign(config_file.load(path), project)
    return config, machines, path


def plan_targets(config: dict, machines: dict[str, campaign.Machine]) -> list[str]:
    """What ``pinbench plan`` asks of the workflow: every machine's list of placements."""
    layout = Layout.of(config["campaign"])
    return [layout.plan(name) for name in machines]


def rebuild_report(config: dict, machines: dict[str, campaign.Machine], say=print) -> int:
    """``pinbench report``: the campaign's report built again from its results on disk;
    1 with one line when the campaign has not produced what the report reads yet."""
    layout = Layout.of(config["campaign"])
    measured = [m.name for m in machines.values() if m.measure]
    needed = [layout.all_runs, layout.stats("json")] if measured else []
    needed += [layout.topology(name) for name in machines]
    missing = [path for path in needed if not Path(path).is_file()]
    if missing:
        say(f"pinbench report: campaign {config['campaign']!r} has no {missing[0]} yet "
            "(run the campaign first: pinbench run)")
        return 1
    from pinbench.report import html_report  # matplotlib: slow to import

    from pinbench.workflow.optional import left_out

    parts = [part.line() for part in left_out(config, machines.values()).values()]
    index = html_report.build_report(layout, config, measured, parts)
    say(f"report: {index.resolve()}")
    return 0
