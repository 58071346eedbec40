"""The explanation of each timing verdict in words, for the terminal and the report alike.

Per (machine, benchmark, threads) with explained runs, one sentence on the timing verdict
(``stats/verdicts.csv``): the strategy it names against the baseline, explained only by what
:mod:`pinbench.stats.explain` found measurable (``lower``, ``higher``: a term's interval
excludes zero and its shift is at least :data:`pinbench.stats.explain.MIN_SHARE` of P·T_P);
explained runs that do not reproduce the timing runs, or that show no difference or the
opposite one, explain nothing and say why; so does every other strategy whose explained runs
do not reproduce its timing runs (:func:`unreproduced`). A figure out of its possible range
is refused in one line (:func:`refusals`); a reading says when the tool's own cost is larger
than the difference it explains (:func:`tool_note`); each strategy's idle time is split into
waits and idle time between regions (:func:`idle_parts`). A cell without a breakdown says why
too (:func:`missing`), and every benchmark states the span its explanation covers
(:func:`span`).
``stats/explain.txt`` (:func:`write_readings`) holds them all, one line each; the report shows
the same sentences.
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from pinbench.stats.analyse import Verdict
from pinbench.stats.explain import MIN_SHARE, TERMS, Explanation


def _interval(row: Explanation, name: str, sign: int = 1) -> str:
    """A shift and its interval in thread-s (``sign`` -1: the other way round)."""
    low, high = sorted((sign * getattr(row, f"{name}_low"), sign * getattr(row, f"{name}_high")))
    return f"{sign * getattr(row, name):.3g} thread-s [{low:.3g}; {high:.3g}]"


def span(rows: list[Explanation]) -> str:
    """The span the explanation covers, in words: the whole run, and how much of it the
    printed time (``time``) is.

    >>> from pinbench.stats.explain import explanation
    >>> span([explanation({})]), span([explanation({"printed_share": 0.25})])
    ('the whole run', 'the whole run, of which the printed time is 25%')
    """
    shares = [r.printed_share for r in rows if r.printed_share is not None]
    if not shares:
        return "the whole run"
    share = sorted(shares)[len(shares) // 2]
    return f"the whole run, of which the printed time is {share:.0%}"


def reading(rows: list[Explanation], baseline: str, best: str | None) -> str:
    """One sentence on the timing verdict's strategy against the baseline, e.g. "compact
    beats os here through lower work inflation (0.08 thread-s [0.05; 0.1], 18% of os's
    P·T_P)", or why the explained runs cannot say it (``rows``: one cell's rows of
    ``explain.csv``; ``best``: the strategy its verdict names, :attr:`Verdict.best`, "" when
    none is faster, None when the cell has no verdict)."""
    if best is None:
        return "No timing verdict for this cell: nothing to explain."
    if not best:
        return f"The timing runs find no strategy faster than {baseline} here: nothing to explain."
    by_strategy = {r.strategy: r for r in rows}
    pair = [by_strategy.get(best), by_strategy.get(baseline)]
    if any(r is None or not r.n for r in pair):
        who = best if not (pair[0] and pair[0].n) else baseline
        return f"No explanation of {best} against {baseline}: {who} has no successful explained run."
    for r in pair:
        if r.reproduces is False:
            return f"Not applicable to {best} against {baseline}: for {r.strategy}, " \
                   f"{r.not_applicable}."
    row, base = pair
    where = span(rows)
    if row.d_total is None:
        return (f"No explanation of {best} against {baseline}: too few explained runs for an "
                "interval of their difference.")
    if row.d_total_high < 0:
        return (f"Not applicable: over {where}, the explained runs show {baseline} faster than "
                f"{best} ({baseline}'s P·T_P {_interval(row, 'd_total', -1)} lower), against the "
                "timing verdict.")
    if row.d_total_low <= 0:
        return (f"No measurable difference between {best} and {baseline} in the explained runs "
                f"over {where} ({best}'s P·T_P {_interval(row, 'd_total')} lower): no "
                "explanation.")
    scale = base.threads * base.T_P
    gains = [f"{TERMS[t][0]} ({_interval(row, f'd_{t}')}, {getattr(row, f'd_{t}') / scale:.0%} "
             f"of {baseline}'s P·T_P)" for t in row.lower.split()]
    losses = [TERMS[t][0] for t in row.higher.split()]
    if not gains:
        return (f"{best} is faster than {baseline} over {where} (its P·T_P "
                f"{_interval(row, 'd_total')} lower), but no term of it differs measurably on "
                f"its own (an interval excluding zero and at least {MIN_SHARE:.0%} of P·T_P)."
                + tool_note(row, base))
    despite = f", despite higher {' and '.join(losses)}" if losses else ""
    return f"{best} beats {baseline} here through lower {'; '.join(gains)}{despite}." + \
        tool_note(row, base)


def tool_note(row: Explanation, base: Explanation) -> str:
    """" The tool's own cost ... is larger than this difference ..." when the tool's estimated
    cost per run (``tool_cost``) of the strategy (``row``) or the baseline (``base``) exceeds the
    difference of their P·T_P (``d_total``); "" otherwise.

    >>> from pinbench.stats.explain import explanation
    >>> a = explanation({"strategy": "compact", "tool_cost": 0.03, "d_total": 0.02})
    >>> tool_note(a, explanation({"strategy": "os", "tool_cost": 0.01}))[:64]
    " The tool's own cost, about 0.03 thread-s per run for compact an"
    >>> tool_note(explanation({"tool_cost": 0.01, "d_total": 0.02}),
    ...           explanation({"tool_cost": 0.015}))
    ''
    """
    costs = [r.tool_cost for r in (row, base) if r.tool_cost is not None]
    if row.d_total is None or not costs or max(costs) <= abs(row.d_total):
        return ""
    each = " and ".join(f"{r.tool_cost:.3g} for {r.strategy}" for r in (row, base)
                        if r.tool_cost is not None).replace(" for ", " thread-s per run for ", 1)
    return (f" The tool's own cost, about {each} (its cost per region, barrier and lock "
            f"acquisition times their counts), is larger than this difference "
            f"({row.d_total:.3g} thread-s): part or all of it may be the tool's.")


def unreproduced(rows: list[Explanation], said: str = "") -> list[str]:
    """Why each strategy whose explained runs do not reproduce its timing runs explains
    nothing, one sentence each, but for those the reading ``said`` already names.

    >>> from pinbench.stats.explain import explanation
    >>> unreproduced([explanation({"strategy": "os", "reproduces": True}),
    ...               explanation({"strategy": "compact", "reproduces": False,
    ...                            "not_applicable": "why"})])
    ['compact: not applicable, why.']
    """
    return [f"{r.strategy}: not applicable, {r.not_applicable}." for r in rows
            if r.reproduces is False and f"for {r.strategy}, " not in said]


def refusals(rows: list[Explanation]) -> list[str]:
    """Each strategy's figures out of their possible range, refused, one sentence each.

    >>> from pinbench.stats.explain import explanation
    >>> refusals([explanation({"strategy": "os", "refused": "why"}), explanation({"refused": ""})])
    ['os: refused, why.']
    """
    return [f"{r.strategy}: refused, {r.refused}." for r in rows if r.refused]


def idle_parts(rows: list[Explanation]) -> list[str]:
    """Each strategy's idle time and its parts (medians over the explained runs): waits at
    barriers and taskwait, and workers idle between regions, e.g. "os: idle time I_P 0.3
    thread-s, of which barrier waits 0.06, taskwait 0, between regions 0.24"."""
    return [f"{r.strategy}: idle time I_P {r.I_P:.3g} thread-s, of which barrier waits "
            f"{r.barrier_wait:.3g}, taskwait {r.taskwait_wait:.3g}, between regions "
            f"{r.idle_between:.3g}" for r in rows
            if r.n and None not in (r.I_P, r.barrier_wait, r.taskwait_wait, r.idle_between)]


def missing(rows: list[Explanation]) -> str:
    """Why a (benchmark, threads) cell has no breakdown, in words ("" when it has one)."""
    if not any(r.n for r in rows):
        failures = sorted({r.failure for r in rows if r.failure})
        return "no explained run succeeded" + (f": {'; '.join(failures)}" if failures else "")
    if all(r.T_1 is None for r in rows):
        return f"no T_1 ({rows[0].T_1_source}): its one-thread runs failed or were not made"
    return ""


def cells(table: list[Explanation]) -> dict[tuple[str, str], dict[int, list[Explanation]]]:
    """(machine, benchmark) -> threads -> that cell's rows of ``explain.csv``, sorted."""
    found: dict[tuple[str, str], dict[int, list[Explanation]]] = defaultdict(
        lambda: defaultdict(list))
    for row in table:
        found[(row.machine, row.benchmark)][int(row.threads)].append(row)
    return {key: dict(sorted(by_threads.items())) for key, by_threads in sorted(found.items())}


def best_by_cell(verdicts: list[Verdict]) -> dict[tuple[str, str, int], str]:
    """(machine, benchmark, threads) -> the strategy its verdict names ("" none faster)."""
    return {verdict.key: verdict.best for verdict in verdicts}


def readings_text(table: list[Explanation], verdicts: list[Verdict], baseline: str) -> str:
    """Every cell's reading and, when it has no breakdown, why: per benchmark a line with the
    span its explanation covers, then one line per thread count."""
    best_of = best_by_cell(verdicts)
    lines = []
    for (machine, bench), by_threads in cells(table).items():
        rows = [r for cell in by_threads.values() for r in cell]
        lines.append(f"{machine}/{bench}: explained over {span(rows)}")
        for threads, cell in by_threads.items():
            why = missing(cell)
            text = reading(cell, baseline, best_of.get((machine, bench, threads)))
            lines.append(f"  {threads} threads: {text}" + (f" No breakdown: {why}." if why else ""))
            lines += [f"    {line}" for line in
                      unreproduced(cell, text) + refusals(cell) + idle_parts(cell)]
    return "\n".join(lines) + "\n"


def write_readings(table: list[Explanation], verdicts: list[Verdict], baseline: str,
                   path: Path) -> str:
    """Write :func:`readings_text` to ``path`` (``stats/explain.txt``) and return it."""
    text = readings_text(table, verdicts, baseline)
    Path(path).write_text(text)
    return text
