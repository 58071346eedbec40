"""``pinbench remeasure``: measure a job again, keeping what it measured.

    pinbench remeasure results/<campaign> --machine M --benchmark B
        --threads N [--strategy S] [--why TEXT]

sets the job's journal aside (``t<N>.jsonl.stale-<time>``, with a ``.why`` note saying
"re-measured on request", as :mod:`pinbench.measure.journal` does for a changed
measurement; never deleted), moves its kept run outputs aside the same way, and removes
the job's runs table and the campaign's (``runs.csv``, made again from the jobs' tables),
so that the next ``pinbench run`` measures the job again, and only it (the analysis and the
report follow). The report's "Measurements set aside" banner and
the end of the campaign list the journal set aside.

``--strategy S`` re-measures S by measuring its whole job again: the runs of one job
are compared with each other because they were measured in one session, interleaved;
new runs of S beside old runs of the baseline would compare two sessions (another
machine state, another day), which is what the journal's rule "any real change sets the
whole job aside" avoids. The note records the strategy asked for.
"""
from __future__ import annotations

import json
from pathlib import Path

from pinbench.measure import outputs
from pinbench.measure.journal import set_aside
from pinbench.results import formats, stale
from pinbench.results.journals import read_lines
from pinbench.results.layout import Layout

WHY = "re-measured on request"


def remeasure(root: str, machine: str, bench: str, threads: int,
              strategy: str | None = None, why: str = WHY) -> list[str]:
    """Set one job's journal and kept outputs aside and remove its runs table; return what
    was done, one line each. Raises FileNotFoundError when the campaign has no such machine."""
    layout = Layout(root)
    journal = Path(layout.journal(machine, bench, threads))
    runs = Path(layout.runs(machine, bench, threads))
    if not Path(layout.machine(machine)).is_dir():
        raise FileNotFoundError(f"no machine {machine!r} in {root}")
    done = [] if journal.exists() else [f"no journal {journal} to set aside"]
    if journal.exists():
        lines = read_lines(journal)
        count = max(0, len(lines) - 1)
        header = formats.read("journal", json.loads(lines[0]), journal) if lines else {}
        note = {"strategy": strategy} if strategy else {}
        target = set_aside(journal, count, why + (f" (strategy {strategy}: the whole job, "
                                                  "so that its runs share one session)"
                                                  if strategy else ""), **note)
        done.append(f"{count} runs set aside in {target}")
        moved = outputs.set_aside(Path(layout.outputs(machine, bench, threads)),
                                  str(header.get("fingerprint", "")),
                                  stale.stamp(target))
        if moved:
            done.append(f"their outputs moved to {moved}")
    # Snakemake re-runs a job whose output is missing only when a target needs it: the
    # campaign's runs table (made again from the jobs' tables) is removed too
    for table in (runs, Path(layout.all_runs)):
        if table.exists():
            table.unlink()
            done.append(f"{table} removed")
    done.append("the next pinbench run measures the job again")
    return done
