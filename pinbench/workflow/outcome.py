"""What a campaign call says at its start and at its end: the header (the campaign, its
machines, cells and runs, the time they may take); each cell's verdict, each experiment
once, the campaign in one line, where the results and the report are, the measured
machines too flat for placements to differ, the measurements set aside, the strategies left
out where a trace failed and the cells without a usable run."""
from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from pinbench.measure.progress import duration
from pinbench.place.registry import parse_strategy
from pinbench.results import formats
from pinbench.place.symmetry import ELSEWHERE, flat_machine
from pinbench.results import traces
from pinbench.results.journals import read_lines
from pinbench.results.layout import Layout
from pinbench.results.runs import read_runs
from pinbench.stats.cells import unusable_cells
from pinbench.stats.analyse import Verdict, read_verdicts
from pinbench.workflow.campaign import Machine, own_placements


def header(config: dict, machines: Iterable[Machine], layout: Layout, command: str) -> list[str]:
    """The first lines of a call: the campaign and its machines, the measured cells and their
    runs (at most: identical placements are measured once), the runs journaled already and,
    from their times, about how long the others take (the display says it once runs are
    measured, when none is journaled)."""
    machines = list(machines)
    measured = [m for m in machines if m.measure]
    lines = [f"pinbench {command}: campaign {config['campaign']}; machines: "
             + ", ".join(f"{m.name} ({'measured' if m.measure else 'planned'})"
                         for m in machines)]
    cells = [(m.name, bench, n) for m in measured for bench in config["benchmarks"]
             for n in m.threads]
    if not cells or command == "plan":
        return lines
    per_cell = len(config["strategies"]) * config["repetitions"]
    walls = [json.loads(line).get("wall_s") or 0.0 for cell in cells
             for line in read_lines(Path(layout.journal(*cell)))[1:]]
    left = max(0, per_cell * len(cells) - len(walls))
    lines.append(f"cells: {len(cells)} ({len(config['benchmarks'])} benchmark(s) x "
                 f"{sum(len(m.threads) for m in measured)} thread count(s)) x "
                 f"{len(config['strategies'])} strategies x {config['repetitions']} runs: up to "
                 f"{per_cell * len(cells)} runs (identical placements are measured once), "
                 f"{len(walls)} journaled already")
    lines.append(f"time: about {duration(left * sum(walls) / len(walls))} of runs left, at "
                 "the journaled runs' mean time" if walls and left else
                 "time: the display says the time left once the first runs are measured")
    return lines


def cell_lines(layout: Layout) -> list[str]:
    """One line per measured cell: its runs, and its verdict (★: the report-wide decision's
    winner; ☆: the cell's own verdict only)."""
    verdicts_csv = Path(layout.stats("verdicts"))
    table = Path(layout.all_runs)
    if not verdicts_csv.is_file() or not table.is_file():
        return []
    try:
        verdicts = read_verdicts(verdicts_csv)
    except ValueError:  # an older analysis: the closing line says so
        return []
    counts: dict[tuple, list[int]] = {}
    for record in read_runs([table]):
        count = counts.setdefault(record.cell[:3], [0, 0])
        count[0] += 1
        count[1] += not record.ok
    lines = []
    for v in verdicts:
        runs, failed = counts.get(v.key, [0, 0])
        lines.append(f"  {v.machine} {v.benchmark} t{v.threads}: {runs} runs, "
                     f"{failed} failed; {verdict_words(v)}")
    return lines


def verdict_words(verdict: Verdict) -> str:
    """A cell's verdict in words (a row of ``verdicts.csv``)."""
    v, baseline = verdict, verdict.baseline
    if v.printed_implausible:
        text = "no verdict: its printed times are not its runs' (the report says why)"
    elif v.best:
        named = experiment_name(v.best, v.stands_for.split())
        speedup = f" {v.speedup_median:.3g}x" if v.speedup_median else ""
        own = f"{named}{speedup} faster than {baseline} ☆" + (
            ", a clear winner" if v.clear_winner else "")
        text = (own.replace(" ☆", " ★ (report-wide)") if v.best_report == v.best else
                f"{v.best_report} faster than {baseline} ★ (report-wide); by the cell's own "
                f"verdict {own}" if v.best_report else f"{own} (this cell's own verdict)")
    elif not v.tests:
        text = "no verdict: too few usable runs"
    else:
        text = f"no strategy faster than {baseline}" + (
            f" (it could have found {v.detectable:.3g}x)" if v.detectable else "")
    return text + ("; its runs drift" if v.drift else "")


def experiment_name(first: str, others: Sequence[str], most: int = 3) -> str:
    """An experiment by its first strategy and the ones it stands for.

    >>> experiment_name("compact", ["scatter", "s1", "s2", "s3"]), experiment_name("os", [])
    ('compact (= scatter, s1, s2, ...)', 'os')
    """
    if not others:
        return first
    return f"{first} (= {', '.join(others[:most])}{', ...' if len(others) > most else ''})"


def experiments(layout: Layout, strategies: Sequence[str]) -> list[str]:
    """One line per measured (machine, threads): each experiment once, named by its first
    strategy with the ones that ran it too in every benchmark, and its overall median
    speedup over the baseline (the study's Table 1, ``stats/summary.txt``)."""
    table, stats = Path(layout.all_runs), Path(layout.stats("json"))
    if not table.is_file() or not stats.is_file():
        return []
    runs_of: dict[tuple, dict[str, dict[str, str]]] = {}
    for record in read_runs([table]):
        of = runs_of.setdefault((record.machine, record.threads), {})
        for strategy in [record.strategy, *record.stands_for.split()]:
            of.setdefault(strategy, {})[record.benchmark] = record.strategy
    summary = formats.read("stats", json.loads(stats.read_text()), stats)["summary"]
    speedup = {(row["machine"], int(row["threads"]), row["strategy"]):
               row["overall_speedup_median"] for row in summary}
    lines = []
    for (machine, threads), of in runs_of.items():
        groups: dict[tuple, list[str]] = {}
        for strategy in sorted(of, key=lambda s: strategies.index(s) if s in strategies else 0):
            groups.setdefault(tuple(sorted(of[strategy].items())), []).append(strategy)
        parts = []
        for first, *others in groups.values():
            value = speedup.get((machine, threads, first))
            parts.append(experiment_name(first, others)
                         + (f" {value:.3g}" if isinstance(value, float) else ""))
        lines.append(f"  {machine} t{threads}: {'; '.join(parts)}")
    return lines


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
