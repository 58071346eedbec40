"""The terminal of a campaign call: everything ``pinbench run`` and ``pinbench plan`` print
goes through the one :class:`Terminal` of the process (:func:`current`).

By the call's verbosity (:mod:`pinbench.events`):

- quiet (``-q``, -1): the closing block only (and errors);
- the default (0): a header, a live display while the jobs run (on a terminal: a bar for the
  call's jobs and one for the runs measured, with runs/s and the time left, drawn by `rich`;
  when stdout is not a terminal, or under CI, one plain line per finished measurement job
  instead), each warning once with the count of jobs that said it, one line per cell with
  its verdict, and the closing block (:mod:`pinbench.workflow.outcome`);
- verbose (``-v``, 1 or more): what every process says as it says it, Snakemake's own
  listing of its jobs included, then the same closing lines.

What the display shows comes from Snakemake's logger (the call's jobs, started and finished:
:mod:`pinbench.workflow.snakemake_logger`) and from the call's file of events
(:mod:`pinbench.events`: each run's progress, warnings, each measurement job's last line),
never from Snakemake's text.
"""
from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from pinbench import events
from pinbench.measure.progress import duration

#: The command of the call (``run`` or ``plan``), in the environment, set by ``pinbench``.
COMMAND = "PINBENCH_COMMAND"
#: Seconds between two reads of the file of events. The display is drawn again only when
#: something happened (no refresh of its own): the machine is measuring meanwhile.
POLL_S = 0.5


def is_live(stream: TextIO) -> bool:
    """Whether a live display suits ``stream``: a terminal, and not under CI (``CI`` set, as
    every CI service sets it)."""
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return tty and not os.environ.get("CI")


@dataclass
class Job:
    """A measurement job's progress, as its process told it (:meth:`Progress.told`)."""

    done: int = 0
    total: int = 0
    measured: int = 0  #: runs measured by its process (not resumed from its journal)
    elapsed_s: float = 0.0
    finished: bool = False


class Terminal:
    """What one campaign call prints (see the module)."""

    def __init__(self, verbosity: int, stream: TextIO | None = None, live: bool | None = None):
        self.verbosity = verbosity
        self.stream = stream or sys.stdout
        self.live = (is_live(self.stream) if live is None else live) and verbosity == 0
        self.warnings: dict[str, list] = {}  #: key -> [the first text, how many said it]
        self.jobs: dict[str, Job] = {}  #: measurement jobs by ``machine/bench/threads``
        self.measure_jobs = 0  #: the measurement jobs this call runs (Snakemake's count)
        self.steps = (0, 0)  #: Snakemake's jobs done, of all
        self.stage = ""  #: the rule of the last job started
        self.events: Path | None = None
        self._offset = 0
        self._stop = threading.Event()
        self._reader: threading.Thread | None = None
        self._display = None  # rich's Progress, when live
        self._tasks: dict[str, int] = {}
        self._lock = threading.RLock()

    # -- lines -------------------------------------------------------------------------------
    def say(self, line: str, stream: TextIO | None = None) -> None:
        """A line of the default output (header, cells, notes): not when quiet; above the
        live display when one is drawn."""
        if self.verbosity >= 0:
            self._print(line, stream)

    def detail(self, line: str, stream: TextIO | None = None) -> None:
        """A line shown by a verbose call only (a plain ``snakemake`` call's too)."""
        if self.verbosity >= 1:
            self._print(line, stream)

    def closing(self, line: str, stream: TextIO | None = None) -> None:
        """A line of the closing block: printed whatever the verbosity."""
        self._print(line, stream)

    def error(self, text: str) -> None:
        """An error (Snakemake's, a job's): always, on stderr."""
        self._print(text, sys.stderr)

    def warn(self, text: str, key: str = "") -> None:
        """A warning: printed at once by a verbose call; else counted, and said once with
        its count before the closing block (:meth:`warning_lines`)."""
        if self.verbosity >= 1:
            self._print(text)
            return
        with self._lock:
            entry = self.warnings.setdefault(key or text, [text, 0])
            entry[1] += 1

    def warning_lines(self) -> list[str]:
        """Each warning once, with how many jobs said it when more than one."""
        return [f"{text} ({count} jobs)" if count > 1 else text
                for text, count in self.warnings.values()]

    def _print(self, line: str, stream: TextIO | None = None) -> None:
        with self._lock:
            if self._display is not None:
                self._display.console.print(line, markup=False, highlight=False,
                                            soft_wrap=True)
                return
            print(line, file=stream or self.stream, flush=True)

    # -- the display -------------------------------------------------------------------------
    def start(self, folder: Path) -> None:
        """Start listening to the call's processes (their file of events in ``folder``) and,
        on a terminal, drawing the live display. Nothing for a verbose call: they print."""
        if self.verbosity >= 1 or self._reader is not None:
            return
        folder.mkdir(parents=True, exist_ok=True)
        self.events = (folder / f"pinbench-events-{os.getpid()}.jsonl").resolve()
        self.events.unlink(missing_ok=True)
        os.environ[events.EVENTS] = str(self.events)
        if self.live:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            self._display = Progress(
                TextColumn("{task.description:<8}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("{task.fields[info]}"),
                console=Console(file=self.stream), transient=True, redirect_stdout=True,
                redirect_stderr=True, auto_refresh=False)
            self._tasks = {"jobs": self._display.add_task("jobs", total=None, info=""),
                           "runs": self._display.add_task("runs", total=None, info="")}
            self._display.start()
        self._reader = threading.Thread(target=self._read_events, name="pinbench-terminal",
                                        daemon=True)
        self._reader.start()

    def stop(self) -> None:
        """Read the last events, then stop the live display (it leaves nothing behind)."""
        if self._reader is None:
            return
        self._stop.set()
        self._reader.join(timeout=5)
        self._reader = None
        self._poll()
        with self._lock:
            if self._display is not None:
                self._display.stop()
                self._display = None
        if self.events is not None:
            os.environ.pop(events.EVENTS, None)
            self.events.unlink(missing_ok=True)

    def _read_events(self) -> None:
        while not self._stop.wait(POLL_S):
            self._poll()

    def _poll(self) -> None:
        if self.events is None:
            return
        told, self._offset = events.read(self.events, self._offset)
        for event in told:
            self.handle(event)
        if told:
            self._refresh()

    def handle(self, event: dict) -> None:
        """One event of the call's processes (:mod:`pinbench.events`)."""
        kind = event.get("kind")
        if kind == "warning":
            self.warn(event.get("text", ""), event.get("key", ""))
        elif kind == "progress":
            with self._lock:
                job = self.jobs.setdefault(event["cell"], Job())
                job.done, job.total = event["done"], event["total"]
                job.measured, job.elapsed_s = event["measured"], event["elapsed_s"]
        elif kind == "done":
            with self._lock:
                job = self.jobs.setdefault(event["cell"], Job())
                job.finished = True
            if not self.live:
                self.say(self.job_line(event["cell"], event["runs"], event["failed"]))

    def job_line(self, cell: str, runs: int, failed: int) -> str:
        """The plain progress line of a finished measurement job."""
        finished = sum(job.finished for job in self.jobs.values())
        of = f" of {self.measure_jobs}" if self.measure_jobs >= finished else ""
        rate, left = self.rate_and_left()
        machine, bench, threads = cell.split("/")
        text = f"measured {machine} {bench} t{threads}: {runs} runs, {failed} failed " \
               f"(measurement job {finished}{of})"
        if rate:
            text += f"; {rate:.3g} runs/s"
            if left:
                text += f", about {duration(left)} left"
        return text

    def rate_and_left(self) -> tuple[float | None, float | None]:
        """The runs measured per second by this call's measurement jobs, and the seconds
        left for the runs still to measure (the jobs not started yet taken to have as many
        runs as the ones started: a rough guide)."""
        with self._lock:
            jobs = list(self.jobs.values())
        measured = sum(job.measured for job in jobs)
        elapsed = sum(job.elapsed_s for job in jobs)
        if not measured or elapsed <= 0:
            return None, None
        rate = measured / elapsed
        left = sum(job.total - job.done for job in jobs if not job.finished)
        if jobs and self.measure_jobs > len(jobs):
            left += (self.measure_jobs - len(jobs)) * sum(job.total for job in jobs) / len(jobs)
        return rate, left / rate

    # -- Snakemake's jobs (from its logger) ---------------------------------------------------
    def planned(self, counts: dict[str, int]) -> None:
        """Snakemake's count of the call's jobs by rule (``total``: all of them)."""
        self.measure_jobs = sum(n for rule, n in counts.items() if rule.startswith("measure"))
        self.steps = (self.steps[0], counts.get("total", 0))
        self._refresh()

    def step(self, done: int, total: int) -> None:
        """Snakemake's jobs done, of all."""
        self.steps = (done, total)
        self._refresh()

    def job_started(self, rule: str) -> None:
        """A job of ``rule`` started."""
        self.stage = rule
        self._refresh()

    def _refresh(self) -> None:
        with self._lock:
            if self._display is None:
                return
            done, total = self.steps
            self._display.update(self._tasks["jobs"], completed=done, total=total or None,
                                 info=f"now {self.stage}" if self.stage else "")
            jobs = list(self.jobs.values())
            if jobs:
                rate, left = self.rate_and_left()
                known = sum(job.total for job in jobs)
                planned = known + max(0, self.measure_jobs - len(jobs)) * known / len(jobs)
                info = f"{rate:.3g} runs/s, about {duration(left)} left" if rate else ""
                self._display.update(self._tasks["runs"], completed=sum(j.done for j in jobs),
                                     total=round(planned), info=info)
            self._display.refresh()


_CURRENT: list[Terminal] = []


def current() -> Terminal:
    """The terminal of this process's campaign call, made on first use with the call's
    verbosity (:func:`pinbench.events.verbosity`)."""
    if not _CURRENT:
        _CURRENT.append(Terminal(events.verbosity()))
    return _CURRENT[0]
