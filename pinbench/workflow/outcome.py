"""What a campaign call says at its end: the campaign in one line, where the results and the
report are, the measured machines too flat for placements to differ, the measurements set
aside, the strategies left out where a trace failed and the cells without a usable run."""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from pinbench.place.registry import parse_strategy
from pinbench.place.symmetry import ELSEWHERE, flat_machine
from pinbench.results import traces
from pinbench.results.layout import Layout
from pinbench.results.runs import read_runs
from pinbench.stats.cells import unusable_cells
from pinbench.stats.analyse import Verdict, read_verdicts
from pinbench.workflow.campaign import Machine, own_placements


def set_aside(layout: Layout, machines: list[str]) -> list[str]:
    """One line per journal set aside in the campaign: where, how many runs, what changed."""
    return [f"{n['machine']}/{n['benchmark']}/t{n['threads']}: {n['runs']} runs set aside "
            f"({n['changed']}): {n['path']}"
            for machine in machines for n in layout.set_aside_journals(machine)]


def campaign_line(layout: Layout, alpha: float) -> str:
    """The campaign in one line: runs, jobs, winners named, cells where pinning is slower,
    drifts, failures, cells whose printed times leave them without a verdict.

    The winners are the report-wide decision's (:func:`pinbench.stats.verdicts.report_wide`):
    the probability that any of them is false is at most ``alpha`` (the campaign's
    1 - confidence); the count of cells whose own verdict names one follows, said to be per
    cell (over many cells some name one by chance).
    """
    table = Path(layout.all_runs)
    if not table.is_file():
        return "nothing measured (planned machines only)"
    records = read_runs([table])
    jobs = {record.cell[:3] for record in records}
    text = (f"{len(records)} runs in {len(jobs)} measurement job(s), "
            f"{sum(not r.ok for r in records)} failed, {sum(r.misplaced for r in records)} "
            "misplaced")
    verdicts_csv = Path(layout.stats("verdicts"))
    try:
        verdicts = read_verdicts(verdicts_csv) if verdicts_csv.is_file() else None
    except ValueError as exc:  # an older analysis (a partial call, e.g. --until): said so
        return f"{text}; {exc}"
    if verdicts is not None:
        winners = [f"{v.benchmark} t{v.threads}: {v.best_report}"
                   for v in verdicts if v.best_report]
        tests = verdicts[0].tests_report if verdicts else 0
        held = "false discovery rate" if verdicts and verdicts[0].decision_report == "fdr" \
            else "family-wise error"
        text += (f"; a strategy faster than the baseline in {len(winners)} of {len(verdicts)} "
                 f"cells, report-wide ({held} {alpha:.2g} over all {tests} tests)"
                 + (f": {', '.join(winners[:4])}{', ...' if len(winners) > 4 else ''}"
                    if winners else "")
                 + f"; slower than the baseline in "
                 f"{sum(v.outcome_report == 'slower' for v in verdicts)} of {len(verdicts)} "
                 "cells (the best placement slower, report-wide)"
                 + f"; in {sum(bool(v.best) for v in verdicts)} by each cell's own verdict"
                 + f"; drift in {sum(bool(v.drift) for v in verdicts)}"
                 + _unread(verdicts))
    return text


def flat_machines(machines: Iterable[Machine], config: dict) -> list[str]:
    """One line per measured machine that is flat (:func:`pinbench.place.symmetry.flat_machine`)
    while the campaign pins threads with two strategies or more (``os`` and the runtimes'
    policies do not pin them themselves), saying what to do; a SLURM machine's tree is read
    on its node, so it is not among them."""
    own = own_placements(config["placements"])
    pinned = [s for s in config["strategies"]
              if (strategy := parse_strategy(s, own)[0]).place is not None and not strategy.policy]
    if len(pinned) < 2:
        return []
    said = ("this campaign compares os against pinned only" if "os" in config["strategies"]
            else f"this campaign's {len(pinned)} pinned strategies measure one placement")
    return [f"machine {machine.name} is {flat}, so {said}; {ELSEWHERE}"
            for machine in machines if machine.measure and machine.topology is not None
            and (flat := flat_machine(machine.topology))]


def _unread(verdicts: list[Verdict]) -> str:
    """The cells left without a verdict for their printed times, as the closing line ends
    with them ("" when none: :mod:`pinbench.results.printed_share`)."""
    cells = [f"{v.benchmark} t{v.threads}" for v in verdicts if v.printed_implausible]
    return (f"; no verdict in {len(cells)}: their printed times are not their runs' "
            f"({', '.join(cells[:4])}{', ...' if len(cells) > 4 else ''}: the report says why)"
            if cells else "")


def where_and_what(layout: Layout, alpha: float = 0.05, flat: Sequence[str] = ()) -> str:
    """Where the results and the report are, and the campaign in one line (``alpha``: the
    campaign's 1 - confidence), followed by ``flat``'s lines (:func:`flat_machines`)."""
    return (f"campaign: {campaign_line(layout, alpha)}\n"
            + "".join(f"{line}\n" for line in flat)
            + f"results: {Path(layout.root).resolve()}\n"
            f"report: {Path(layout.report_index).resolve()}")


def left_out(layout: Layout, machines: list[str], strategies: list[str]) -> str:
    """The strategies left out where a trace failed, which cells and why, in one line (""
    when none): the cells of one benchmark left out alike go together."""
    groups: dict[tuple, list[str]] = {}
    for machine in machines:
        for cell in traces.left_out(layout, machine, strategies):
            key = (", ".join(cell["strategies"]) or "nothing", cell["why"])
            groups.setdefault(key, []).append(f"{machine}/{cell['benchmark']}/t{cell['threads']}")
    return "; ".join(f"{names} left out of {', '.join(cells)}: {why}"
                     for (names, why), cells in groups.items())


def failed_cells(layout: Layout) -> list[str]:
    """The cells of the campaign's runs table without one run that counts."""
    table = Path(layout.all_runs)
    return unusable_cells(read_runs([table])) if table.is_file() else []
