"""What a campaign call says at its end: the campaign in one line, where the results and the
report are, the measurements set aside and the cells without a usable run."""
from __future__ import annotations

from pathlib import Path

from pinbench.results.layout import Layout
from pinbench.results.runs import read_runs
from pinbench.stats.cells import unusable_cells
from pinbench.stats.analyse import read_verdicts


def set_aside(layout: Layout, machines: list[str]) -> list[str]:
    """One line per journal set aside in the campaign: where, how many runs, what changed."""
    return [f"{n['machine']}/{n['benchmark']}/t{n['threads']}: {n['runs']} runs set aside "
            f"({n['changed']}): {n['path']}"
            for machine in machines for n in layout.set_aside_journals(machine)]


def campaign_line(layout: Layout) -> str:
    """The campaign in one line: runs, jobs, winners named, drifts, failures."""
    table = Path(layout.all_runs)
    if not table.is_file():
        return "nothing measured (planned machines only)"
    records = read_runs([table])
    jobs = {record.cell[:3] for record in records}
    text = (f"{len(records)} runs in {len(jobs)} measurement job(s), "
            f"{sum(not r.ok for r in records)} failed, {sum(r.misplaced for r in records)} "
            "misplaced")
    verdicts_csv = Path(layout.stats("verdicts"))
    if verdicts_csv.is_file():
        verdicts = read_verdicts(verdicts_csv)
        winners = [f"{v['benchmark']} t{v['threads']}: {v['best']}"
                   + ("" if v["clear_winner"] else " (not clear)") for v in verdicts if v["best"]]
        text += (f"; a strategy faster than the baseline in {len(winners)} of {len(verdicts)}"
                 + (f" ({', '.join(winners[:4])}{', ...' if len(winners) > 4 else ''})"
                    if winners else "")
                 + f"; drift in {sum(bool(v['drift']) for v in verdicts)}")
    return text


def where_and_what(layout: Layout) -> str:
    """Where the results and the report are, and the campaign in one line."""
    return (f"campaign: {campaign_line(layout)}\n"
            f"results: {Path(layout.root).resolve()}\n"
            f"report: {Path(layout.report_index).resolve()}")


def failed_cells(layout: Layout) -> list[str]:
    """The cells of the campaign's runs table without one run that counts."""
    table = Path(layout.all_runs)
    return unusable_cells(read_runs([table])) if table.is_file() else []
