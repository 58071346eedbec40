"""A measurement job's progress lines: where it is, how fast it goes, how long is left.

One line every :data:`EVERY_S` seconds (and at the end of the job, and in a
back-to-back order at the end of each strategy), e.g.::

    [here pairs t2] 120/315 runs (38%), now compact; 4.1 runs/s; this cell: 48 s left;
    campaign: job 3 of 6, about 3 min 10 s left

The rate is that of the runs measured by this process (runs resumed from the
journal took no time now), waits for a quiet machine included. The campaign's
estimate counts, for every other measurement job of the campaign that has no
runs table yet, the runs its journal still lacks, taking the other jobs to have
as many runs as this one (their strategies may merge differently) and this
job's rate (their programs may run longer or shorter): a rough guide, said as
"about". Only the standard library and :mod:`pinbench.results.layout` are used,
so the measuring process stays light.

A display that listens (:mod:`pinbench.events`) is also told every run's progress, as
numbers (:meth:`Progress.told`).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from pinbench.events import Told
from pinbench.results.journals import finished_runs
from pinbench.results.layout import Layout

#: Seconds between two progress lines of a job.
EVERY_S = 10.0


def duration(seconds: float) -> str:
    """A duration as people say it.

    >>> duration(42.4), duration(190), duration(7385)
    ('42 s', '3 min 10 s', '2 h 3 min')
    """
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


def journaled_runs(path: Path) -> int:
    """The finished runs of a journal on disk (its whole lines less the header, padding not
    counted: :func:`pinbench.results.journals.finished_runs`), 0 without one."""
    try:
        return finished_runs(path)
    except OSError:
        return 0


@dataclass
class Campaign:
    """The other measurement jobs of the campaign, to estimate what is left of it."""

    root: str  #: the campaign's results folder (:class:`Layout`'s root)
    cells: list[tuple[str, str, int]] = field(default_factory=list)  #: (machine, bench, N)

    def others(self, machine: str, bench: str, threads: int) -> tuple[int, int, list[Path]]:
        """(jobs done, jobs in all, journals of the other jobs still to finish)."""
        layout = Layout(self.root)
        done, pending = 0, []
        for cell in self.cells:
            if cell == (machine, bench, threads):
                continue
            if Path(layout.runs(*cell)).exists():
                done += 1
            else:
                pending.append(Path(layout.journal(*cell)))
        return done, len(self.cells) or 1, pending


def parse_cell(text: str) -> tuple[str, str, int]:
    """A job named ``machine/benchmark/threads`` (as :func:`cell_name` writes it).

    >>> parse_cell("here/pairs/4")
    ('here', 'pairs', 4)
    """
    machine, bench, threads = text.split("/")
    return machine, bench, int(threads)


def cell_name(machine: str, bench: str, threads) -> str:
    """The name of a measurement job on the command line: ``machine/benchmark/threads``."""
    return f"{machine}/{bench}/{threads}"


class Progress:
    """The progress of one job; :meth:`update` after each run says a line when one is due."""

    def __init__(self, label: str, total: int, already: int, say, campaign: Campaign | None,
                 cell: tuple[str, str, int], clock=time.monotonic, every_s: float = EVERY_S,
                 tell=None):
        self.label, self.total, self.say, self.tell = label, total, say, tell
        self.already = already  #: runs journaled before this process started
        self.campaign, self.cell, self.clock, self.every_s = campaign, cell, clock, every_s
        self.start = clock()
        self.last = self.start
        self.measured = 0

    def update(self, done: int, strategy: str, measured: bool, strategy_ends: bool = False,
               final: bool = False) -> None:
        """After run ``done`` of :attr:`total` (``measured``: by this process, not resumed):
        say a line when :data:`EVERY_S` passed since the last, at the end of a strategy in a
        back-to-back order (``strategy_ends``) and at the end (``final``); ``tell`` (a
        display's) is told each update (:meth:`told`)."""
        self.measured += measured
        now = self.clock()
        if self.tell is not None:
            self.tell(self.told(done, strategy, now))
        if final or strategy_ends or now - self.last >= self.every_s:
            self.last = now
            self.say(self.line(done, strategy, now))

    def told(self, done: int, strategy: str, now: float) -> Told:
        """The progress after ``done`` runs as numbers, for a display: the job
        (``machine/benchmark/threads``), runs done of the total, runs measured by this
        process in ``elapsed_s`` seconds, the strategy measured next."""
        return Told("", "progress", cell=cell_name(*self.cell), done=done, total=self.total,
                    measured=self.measured, elapsed_s=now - self.start, strategy=strategy)

    def line(self, done: int, strategy: str, now: float) -> str:
        """The progress line after ``done`` runs."""
        text = f"{self.label} {done}/{self.total} runs ({done / self.total:.0%})"
        left = self.total - done
        if left:
            text += f", now {strategy}"
        elapsed = now - self.start
        rate = self.measured / elapsed if self.measured and elapsed > 0 else None
        if rate:
            text += f"; {rate:.3g} runs/s"
            text += f"; this cell: {duration(left / rate)} left" if left else \
                f"; this cell done in {duration(elapsed)}"
        if self.campaign is not None:
            finished, jobs, pending = self.campaign.others(*self.cell)
            others = sum(max(0, self.total - journaled_runs(p)) for p in pending)
            text += f"; campaign: job {finished + 1} of {jobs}"
            if rate and left + others:
                text += f", about {duration((left + others) / rate)} left"
        return text
