"""Faults injected into a small real campaign at random moments, and what survives them:
kills, stop signals, programs that misbehave, a full disk (issue 25).

Each trial runs the same small campaign through ``pinbench run`` (Snakemake, the measure rule,
the measuring process, the launcher), up to its runs table: the fuzz test's misbehaving program
(``tests/data/misbehave.c``; every thread spins 0.1 s, and it prints its time and a metric,
read with ``time`` and ``metrics``) at 1 thread and at every PU, the default strategies, 3
repetitions (two measurement jobs; 18 runs on a 2-PU machine, where compact and scatter place
alike and are measured once). Topology, placements and build are made once, in a template
each trial copies. At a random moment (after a random number of journaled runs, then a random
part of a run; for a quarter of the kills, signals and full disks, the instant the first
measuring process appears) it injects one fault:

- ``kill -9 measuring``, ``kill -9 snakemake``, ``kill -9 group``: SIGKILL to the measuring
  process under way, to Snakemake (``pinbench run``) alone, or to its whole process group;
- ``SIGINT snakemake``, ``SIGTERM snakemake``, ``SIGINT group``, ``SIGTERM group``: a stop
  signal to Snakemake alone, or to the group (Ctrl-C in a terminal);
- ``child left``, ``launcher stopped``, ``launcher killed``: the next run of the benchmark
  forks a child and exits, SIGSTOPs its launcher, or SIGKILLs it;
- ``program drawn``: the next run misbehaves several ways at once, as
  ``tests/misbehaviours.py`` draws them for the fuzz test (issue 40);
- ``disk full``: the results' file system (a tmpfs of its own, mounted as root; skipped
  otherwise, and said) is filled up.

It waits until every process of the campaign has ended, then resumes the campaign with the
same call (a full disk is emptied first) and checks, with pinbench's own readers of the
journals and the runs tables:

- no finished run lost: every run the journals held after the fault is in the resumed
  campaign's runs tables, the same run (its start time);
- none duplicated: no run twice in a job's table or in ``runs.csv``;
- none re-measured: the benchmark counts its executions; the resumed call ran exactly the
  runs the journals lacked, and the faulted call at most one beyond its journaled runs (the
  run cut short);
- no torn journal: after the fault, each journal is whole JSON lines then zero padding;
  after the resume, whole lines alone, none set aside;
- the machine lock released and no process of the campaign left (the time it took is the
  ``stop s`` column, from the fault);
- the one-line messages: the measuring process's line for a stop signal, a dead workflow or a
  full disk, the failed run's reason for a misbehaving program, ``resuming: K of N runs already
  journaled`` with K what the journal held, no ``Traceback`` anywhere;
- the resumed campaign complete (exit status 0, every run of the plan in ``runs.csv``); a
  misbehaving program fails its own run (exactly one failed run, the reasons said; none when
  the drawn misbehaviour fails no run), and its campaign completes in the faulted call itself.

In half the trials of a kill, a stop signal or a full disk the program misbehaves too (drawn
likewise, by the first run to start): the faults of the machine and of the program meet, and
that run fails as drawn, or is cut short by the fault and measured again.

Prints one progress line per trial, then a table (fault, trials, runs lost, duplicated,
re-measured, torn journals, median and largest wall time of the resuming call, and of the stop)
and a pass/fail line; exit status 1 on any violation, each violation said. The machine lock is
``$PINBENCH_LOCK`` when set, else one of the script's own.

Usage: ``.venv/bin/python perf/fault_injection.py [--trials 3] [--seed 25] [--faults NAME...]
[--keep DIR]`` (``--keep``: the calls' outputs and the last trial's campaign are left there).
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import fcntl
import json
import math
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import yaml

from pinbench import full_disk
from pinbench.measure.cli import MIN_FREE_BYTES
from pinbench.measure.interrupt import descendants
from pinbench.results.journals import finished_runs, read_lines
from pinbench.measure.launcher import GRACE_S
from pinbench.results.layout import Layout
from pinbench.results.runs import RunRecord, read_runs

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the misbehaviours of the fuzz test, drawn alike
from misbehaviours import METRIC_REGEX, SOURCE, TIME_REGEX, Misbehaviour, drawn  # noqa: E402

CAMPAIGN, MACHINE, BENCH = "faults", "here", "spin"
LAYOUT = Layout.of(CAMPAIGN)
RUN_MS, REPETITIONS, TIMEOUT_S = 100, 3, 2
#: The share of the trials of a kill, a stop signal or a full disk that inject it the instant
#: the first measuring process appears (its start-up: where two faults were found).
START_SHARE = 0.25
MEASURING = "python -m pinbench.measure"

#: The share of the trials of a machine's fault in which the program misbehaves too: a
#: misbehaviour drawn by tests/misbehaviours.py, which the first run to start does.
MEET_SHARE = 0.5
#: The failure of the fault "program drawn": the drawn misbehaviour's.
DRAWN = "drawn"


def stopped_line(why: str) -> str:
    """The measuring process's one line when it is stopped (pinbench.measure.cli)."""
    return (f"{MEASURING}: stopped ({why}): the run under way is not journaled, the finished "
            "ones are; the next call resumes")


@dataclasses.dataclass(frozen=True)
class Fault:
    """One kind of fault: its name (a row of the table), what it does at the moment it is
    injected (False: nothing to inject it into at that moment, try again), the lines (regular
    expressions) the faulted call must print when the fault reached a measuring process (or,
    ``always``, whenever it was injected), and, for a misbehaving program, the reason of its
    failed run (the faulted call then completes the campaign itself)."""

    name: str
    inject: Callable[["Trial"], bool]
    lines: tuple[str, ...] = ()
    failure: str = ""
    always: bool = False


@dataclasses.dataclass
class Outcome:
    """What one trial found."""

    lost: int = 0
    duplicated: int = 0
    remeasured: int = 0
    torn: int = 0
    resume_s: float = 0.0
    stop_s: float = 0.0
    violations: list[str] = dataclasses.field(default_factory=list)


def _start_time(pid: int) -> str:
    """A running process's start time (with its pid, who it is); "" when it is gone or a
    zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    fields = stat.rsplit(")", 1)[1].split()
    return "" if fields[0] in "ZX" else fields[19]


# --- the faults ----------------------------------------------------------------------------------
def _kill_measuring(trial: Trial) -> bool:
    found = trial.measuring()
    if found:
        os.kill(found[0], signal.SIGKILL)
    return bool(found)


def _to_workflow(signum: int) -> Callable[[Trial], bool]:
    return lambda trial: os.kill(trial.proc.pid, signum) is None


def _to_group(signum: int) -> Callable[[Trial], bool]:
    return lambda trial: os.killpg(trial.proc.pid, signum) is None


def _trigger(what: str) -> Callable[[Trial], bool]:
    """The next run to start does ``what`` (misbehave.c's words)."""
    def inject(trial: Trial) -> bool:
        trial.campaign.trigger(what)
        return True
    return inject


def _drawn(trial: Trial) -> bool:
    """The next run to start misbehaves as drawn (tests/misbehaviours.py)."""
    trial.misbehave(drawn(trial.rng.choice))
    return True


def _fill(trial: Trial) -> bool:
    full_disk.fill(trial.campaign.work / "results")
    return True


def _stopped(signum: int) -> tuple[str, ...]:
    return (re.escape(stopped_line(signal.Signals(signum).name)),)


FAULTS = [
    Fault("kill -9 measuring", _kill_measuring),
    Fault("kill -9 snakemake", _to_workflow(signal.SIGKILL),
          (re.escape(stopped_line("the workflow's process ended")),)),
    Fault("kill -9 group", _to_group(signal.SIGKILL)),
    Fault("SIGINT snakemake", _to_workflow(signal.SIGINT), _stopped(signal.SIGINT)),
    Fault("SIGTERM snakemake", _to_workflow(signal.SIGTERM), _stopped(signal.SIGTERM)),
    Fault("SIGINT group", _to_group(signal.SIGINT), _stopped(signal.SIGINT)),
    Fault("SIGTERM group", _to_group(signal.SIGTERM), _stopped(signal.SIGTERM)),
    Fault("child left", _trigger("child=1"),
          failure=re.escape("left 1 process running after it exited (killed)")),
    Fault("launcher stopped", _trigger("stop=launcher sleep=60"),
          failure=rf"the launcher \(pid \d+\) did not answer {GRACE_S:g} s past the run's "
          r"timeout \(stopped by the program\?\): killed with the run"),
    Fault("launcher killed", _trigger("stop=launcher-kill sleep=60"),
          failure=r"the launcher \(pid \d+\) died during the run \(exit status -9\)"),
    # the failure is the drawn misbehaviour's (Trial.failure)
    Fault("program drawn", _drawn, failure=DRAWN),
    Fault("disk full", _fill,
          (rf"{MEASURING}: error: (No space left on device writing \S+: the finished runs are "
           r"journaled; free some space \(or fix the file system\), then run again|only \d+ MiB "
           rf"free on the file system of \S+ \(a job needs {MIN_FREE_BYTES >> 20} MiB to "
           r"start\): free some space, then run again)",), always=True),
]
BY_NAME = {fault.name: fault for fault in FAULTS}


# --- the campaign ------------------------------------------------------------------------------
class Campaign:
    """The campaign's files in ``folder``: the benchmark, the campaign file, a template
    (topology, placements and build done in ``campaign/``, then copied) that each trial copies
    back to ``campaign/`` (Snakemake sees the same paths: it builds and places nothing
    again), and the calls' outputs."""

    def __init__(self, folder: Path, env: dict[str, str], lock: Path):
        self.folder, self.env, self.lock = folder, env, lock
        self.template, self.work = folder / "template", folder / "campaign"
        self.file = folder / "campaign.yaml"
        behaves = " ".join(Misbehaviour().words(TIMEOUT_S))  # a trigger's words come after
        self.file.write_text(yaml.safe_dump({
            "campaign": CAMPAIGN, "repetitions": REPETITIONS, "threads": [1, "all"],
            "quiet": {"max_wait_s": 0}, "machines": {MACHINE: {"topology": "auto"}},
            "benchmarks": {BENCH: {
                "source": str(SOURCE), "timeout_s": TIMEOUT_S,
                "time": {"regex": TIME_REGEX}, "metrics": {"rate": METRIC_REGEX},
                "run": f"{{binary}} spin={RUN_MS} noise=16384 {behaves} "
                       f"log={self.work / 'executions'} trigger={self.work / 'trigger'}"}}}))
        self.layout = Layout(str(self.work / LAYOUT.root))
        self.threads: list[int] = []
        self.plan: set[tuple[int, str, int]] = set()  # every run: (threads, strategy, repetition)

    def trigger(self, words: str) -> None:
        """The next run to start does what ``words`` say (misbehave.c's), once."""
        partial = self.work / "trigger.part"
        partial.write_text(words)
        os.replace(partial, self.work / "trigger")

    def command(self, work: Path, *targets: str) -> list[str]:
        """``pinbench run -v`` of the campaign in ``work``, up to ``targets`` (verbose: every
        job's lines, which the checks read)."""
        return [sys.executable, "-m", "pinbench", "run", str(self.file), "-v", "--directory",
                str(work), *targets]

    def call(self, name: str, work: Path, *targets: str) -> tuple[int, str, float]:
        """A call run to its end: (exit status, output, wall seconds); the output is kept in
        ``<name>.txt``."""
        started = time.monotonic()
        with open(self.folder / f"{name}.txt", "w") as out:
            status = subprocess.run(self.command(work, *targets), cwd=ROOT, env=self.env,
                                    stdout=out, stderr=subprocess.STDOUT, timeout=600).returncode
        return status, (self.folder / f"{name}.txt").read_text(), time.monotonic() - started

    def prepare(self) -> float:
        """Make the template, then run one trial without a fault: the plan (every run of the
        campaign) and the wall time of a whole call."""
        self.clear()
        status, output, _ = self.call("template", self.work, LAYOUT.plan(MACHINE),
                                      LAYOUT.binary(MACHINE, BENCH))
        if status:
            sys.exit(f"fault_injection: the campaign's template failed ({status}):\n"
                     + output[-3000:])
        shutil.copytree(self.work, self.template, symlinks=True)
        status, output, wall = self.call("clean", self.work, LAYOUT.all_runs)
        if status:
            sys.exit(f"fault_injection: the campaign without a fault failed ({status}):\n"
                     + output[-3000:])
        runs = read_runs([self.work / LAYOUT.all_runs])
        self.threads = sorted({run.threads for run in runs})
        self.plan = {(run.threads, run.strategy, run.repetition) for run in runs}
        failed = [run.failure for run in runs if not run.ok]
        if failed or len(runs) != len(self.plan):
            sys.exit(f"fault_injection: the campaign without a fault measured {len(runs)} runs "
                     f"for {len(self.plan)}, {len(failed)} failed: {failed[:3]}")
        return wall

    def fresh(self) -> None:
        """The trial's folder as the template left it (into a file system mounted there)."""
        shutil.copytree(self.template, self.work, symlinks=True, dirs_exist_ok=True)

    def clear(self) -> None:
        shutil.rmtree(self.work, ignore_errors=True)

    def journal(self, threads: int) -> Path:
        return Path(self.layout.journal(MACHINE, BENCH, threads))

    def journaled(self, threads: int) -> dict[tuple[str, int], dict]:
        """The runs a job's journal holds: (strategy, repetition) -> its row."""
        lines = read_lines(self.journal(threads))[1:]
        return {(run["strategy"], run["repetition"]): run for run in map(json.loads, lines)}

    def finished(self) -> int:
        """The runs every job's journal holds."""
        return sum(finished_runs(self.journal(threads)) for threads in self.threads)

    def executions(self) -> int:
        """How many times the benchmark started."""
        log = self.work / "executions"
        return len(log.read_text().split()) if log.exists() else 0

    def label(self, threads: int) -> str:
        """How a measurement job names itself in its lines."""
        return f"[{MACHINE} {BENCH} t{threads}]"


class Trial:
    """One call of the campaign with one fault injected at a random moment, and its resume."""

    def __init__(self, campaign: Campaign, fault: Fault, name: str, rng: random.Random):
        self.campaign, self.fault, self.name, self.rng = campaign, fault, name, rng
        self.proc: subprocess.Popen | None = None
        self.seen: set[tuple[int, str]] = set()  # (pid, start time): the campaign's processes
        #: what the program was told to do (a program's fault, or with a machine's), the
        #: failure (a regular expression) of the run that does it ("": none), and whether that
        #: run may succeed
        self.misbehaviour: Misbehaviour | None = None
        self.failure, self.may_succeed = ("", True) if fault.failure == DRAWN else \
            (fault.failure, False)

    def misbehave(self, misbehaviour: Misbehaviour) -> None:
        """The next run to start does ``misbehaviour``, and fails as it says."""
        self.misbehaviour = misbehaviour
        self.failure, self.may_succeed = misbehaviour.failures()
        self.campaign.trigger(" ".join(misbehaviour.words(TIMEOUT_S)))

    # --- the campaign's processes ------------------------------------------------------------
    def processes(self) -> set[tuple[int, str]]:
        """The campaign's processes now: the call's and every process below it, and every
        process whose command line names the campaign's folder (orphans)."""
        pids = set()
        if self.proc is not None and self.proc.poll() is None:
            pids = {self.proc.pid, *descendants(self.proc.pid)}
        folder = str(self.campaign.work).encode()
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                with contextlib.suppress(OSError):
                    if folder in Path(f"/proc/{entry}/cmdline").read_bytes():
                        pids.add(int(entry))
        return {(pid, started) for pid in pids if (started := _start_time(pid))}

    def measuring(self) -> list[int]:
        """The campaign's measuring processes now, the one holding the machine lock first."""
        found = []
        for pid, _ in self.processes():
            with contextlib.suppress(OSError):
                if b"pinbench.measure" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0"):
                    found.append(pid)
        lock = self.campaign.lock
        holder = lock.read_text().split()[-1:] if lock.exists() else []
        return sorted(found, key=lambda pid: holder != [str(pid)])

    def left(self) -> set[tuple[int, str]]:
        """The campaign's processes seen so far, or found now, that still run."""
        self.seen |= self.processes()
        return {(pid, started) for pid, started in self.seen if _start_time(pid) == started}

    # --- one trial ---------------------------------------------------------------------------
    def run(self) -> tuple[Outcome, str]:
        """Call the campaign, inject the fault, resume; what was found, and the progress
        line's middle part (when the fault came)."""
        campaign, outcome, rng = self.campaign, Outcome(), self.rng
        if not self.fault.failure and rng.random() < MEET_SHARE:  # the program's fault too
            self.misbehave(drawn(rng.choice))
        total = len(campaign.plan)
        # after `after` journaled runs (two runs at least left to start), then `delay` into a
        # run; a misbehaving program is told at once (the next run reads it)
        after = rng.randrange(total - 2)
        delay = 0.0 if self.fault.failure else rng.uniform(0, RUN_MS / 1000)
        if not self.fault.failure and rng.random() < START_SHARE:  # the instant it starts
            after, delay = 0, 0.0
        with open(campaign.folder / f"{self.name}-fault.txt", "w") as out:
            self.proc = subprocess.Popen(campaign.command(campaign.work, LAYOUT.all_runs),
                                         cwd=ROOT, env=campaign.env, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True)
            injected, under_way = self._inject(after, delay)
            fault_status = self.proc.wait(timeout=600)
        trigger = campaign.work / "trigger"
        # a run read a misbehaviour, or (a machine's fault) the fault reached the call
        reached = bool(injected) and (not self.fault.failure or not trigger.exists())
        when = "the call ended before the fault reached it" if not reached else \
            "as the first measuring process started" if not (
                after or delay or self.fault.failure) else \
            f"after {after} runs +{delay:.2f} s"
        if self.misbehaviour is not None:
            when += f"; the program: {self.misbehaviour}"
        trigger.unlink(missing_ok=True)
        stopped = time.monotonic()
        while self.left() and time.monotonic() - stopped < 60:
            time.sleep(0.02)
        # (a misbehaving program's campaign goes on: no time to stop)
        outcome.stop_s = math.nan if self.fault.failure else \
            time.monotonic() - (injected or stopped)
        output = (campaign.folder / f"{self.name}-fault.txt").read_text()
        self._check_stopped(outcome, "fault")
        journals = {n: self._journal_after_fault(n, outcome) for n in campaign.threads}
        executed = campaign.executions()
        self._check_fault_output(outcome, output, fault_status, reached, under_way)
        filler = campaign.work / "results" / "filler"
        filler.unlink(missing_ok=True)
        status, resumed, outcome.resume_s = campaign.call(f"{self.name}-resume", campaign.work,
                                                          LAYOUT.all_runs)
        self._check_stopped(outcome, "resumed")
        self._check_resumed(outcome, journals, executed, status, resumed, reached)
        return outcome, when

    def _inject(self, after: int, delay: float) -> tuple[float, bool]:
        """Wait for the moment and inject the fault: (when, by the monotonic clock; 0: the
        call ended first) and whether a measuring process ran then."""
        moment = None
        while self.proc.poll() is None:
            self.seen |= self.processes()
            if moment is None and self.campaign.finished() >= after \
                    and (after or self.measuring()):
                moment = time.monotonic() + delay
            if moment is not None and time.monotonic() >= moment:
                under_way = bool(self.measuring())
                if self.fault.inject(self):
                    return time.monotonic(), under_way
            time.sleep(0.01)
        return 0.0, False

    def _check_stopped(self, outcome: Outcome, call: str) -> None:
        """No process of the campaign left; the machine lock free."""
        left = self.left()
        if left:
            outcome.violations.append(f"{len(left)} processes of the campaign still ran 60 s "
                                      f"after the {call} call ended: {sorted(left)}")
            for pid, _ in left:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        fd = os.open(self.campaign.lock, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            outcome.violations.append(f"the machine lock was held after the {call} call")
        finally:
            os.close(fd)

    def _journal_after_fault(self, threads: int, outcome: Outcome) -> dict:
        """A job's journal after the fault: its runs; a torn one (not whole JSON lines then
        zero padding) is counted."""
        path = self.campaign.journal(threads)
        lines = read_lines(path)
        whole = "".join(line + "\n" for line in lines).encode()
        data = path.read_bytes() if path.exists() else b""
        try:
            runs = self.campaign.journaled(threads)
        except ValueError:
            runs = {}
            outcome.torn += 1
        else:
            if not data.startswith(whole) or data[len(whole):].strip(b"\0"):
                outcome.torn += 1
        return runs

    def _check_fault_output(self, outcome: Outcome, output: str, status: int, reached: bool,
                            under_way: bool) -> None:
        """The faulted call's lines: no traceback; the fault's own line, when it reached a
        measuring process; a misbehaving program's campaign completes."""
        lines = output.splitlines()
        if "Traceback" in output:
            outcome.violations.append("a traceback in the faulted call's output")
        if self.fault.failure:
            if status:
                outcome.violations.append(f"the call with a misbehaving program exited {status}")
            pattern = rf"\[{MACHINE} {BENCH} t\d+\] \d+/\d+ \S+ rep \d+: [\d.]+ s FAILED " \
                rf"\({self.failure}\)"
            expected = [pattern] if reached and not self.may_succeed else []
        else:
            expected = list(self.fault.lines) if reached and (
                under_way or self.fault.always) else []
        for pattern in expected:
            if not any(re.fullmatch(pattern, line) for line in lines):
                outcome.violations.append(f"no line {pattern!r} in the faulted call's output")

    def _check_resumed(self, outcome: Outcome, journals: dict[int, dict], executed: int,
                       status: int, output: str, reached: bool) -> None:
        """The resumed campaign against the journals after the fault."""
        campaign = self.campaign
        if status:
            outcome.violations.append(f"the resumed call exited {status}")
        if "Traceback" in output:
            outcome.violations.append("a traceback in the resumed call's output")
        journaled = sum(map(len, journals.values()))
        if executed - journaled > 1:
            outcome.violations.append(f"{executed - journaled} runs started and not journaled "
                                      "by the faulted call (one at most is cut short)")
        lines = output.splitlines()
        for threads, runs in journals.items():
            said = [line for line in lines if f"{campaign.label(threads)} resuming:" in line]
            planned = sum(1 for plan in campaign.plan if plan[0] == threads)
            line = f"{campaign.label(threads)} resuming: {len(runs)} of {planned} runs " \
                "already journaled"
            if said != [line][:len(said)] or (not said and 0 < len(runs) < planned):
                outcome.violations.append(f"resumed t{threads}: said {said or 'nothing'}, "
                                          f"the journal held {len(runs)} runs")
        tables = {n: read_runs([campaign.layout.runs(MACHINE, BENCH, n)])
                  if Path(campaign.layout.runs(MACHINE, BENCH, n)).exists() else []
                  for n in campaign.threads}
        everything = read_runs([campaign.layout.all_runs]) \
            if Path(campaign.layout.all_runs).exists() else []
        again = 0  # journaled runs whose row the resumed table holds from another run
        for threads, runs in journals.items():
            final = {(r.strategy, r.repetition): r.started_at for r in tables[threads]}
            for key, run in runs.items():
                if key not in final:
                    outcome.lost += 1
                elif final[key] != run["started_at"]:
                    again += 1
        keys = [(r.threads, r.strategy, r.repetition) for r in everything]
        keys_per_job = [(r.threads, r.strategy, r.repetition) for t in tables.values() for r in t]
        outcome.duplicated += sum(n - 1 for n in Counter(keys).values()) + \
            sum(n - 1 for n in Counter(keys_per_job).values())
        missing = campaign.plan - set(keys)
        if missing:
            outcome.violations.append(f"the resumed campaign lacks {len(missing)} runs")
        measured = campaign.executions() - executed
        needed = len(campaign.plan) - journaled
        outcome.remeasured = max(again, measured - needed)
        self._check_runs(outcome, everything, reached)
        for threads in campaign.threads:
            path = campaign.journal(threads)
            whole = "".join(line + "\n" for line in read_lines(path)).encode()
            if path.read_bytes() != whole:
                outcome.violations.append(f"the t{threads} journal is not whole lines after "
                                          "the resume")
        for note in campaign.layout.set_aside_journals(MACHINE):
            outcome.violations.append(f"a journal set aside: {note['path']} ({note['changed']})")

    def _check_runs(self, outcome: Outcome, runs: list[RunRecord], reached: bool) -> None:
        """A misbehaving program fails its own run, said why (with a machine's fault, the
        run may be cut short by it and measured again: none failed then); no other run
        fails."""
        failed = [run.failure for run in runs if not run.ok]
        may_fail = {0, 1} if self.failure else {0}
        wanted = may_fail if not (self.fault.failure and reached) else \
            {1} if not self.may_succeed else may_fail
        if len(failed) not in wanted or (
                failed and not re.fullmatch(self.failure, failed[0])):
            outcome.violations.append(f"{len(failed)} failed runs "
                                      f"({' or '.join(map(str, sorted(wanted)))} expected): "
                                      f"{failed[:3]}")


# --- the campaign of trials --------------------------------------------------------------------
def trial_with(campaign: Campaign, fault: Fault, name: str,
               rng: random.Random) -> tuple[Outcome, str]:
    """One trial of ``fault`` in a fresh copy of the template (on a small file system of its
    own for a full disk)."""
    campaign.clear()
    with contextlib.ExitStack() as stack:
        if fault.inject is _fill:
            stack.enter_context(full_disk.small_file_system(
                campaign.work / "results", MIN_FREE_BYTES + (16 << 20)))
        campaign.fresh()
        return Trial(campaign, fault, name, rng).run()


def _seconds(values: list[float]) -> str:
    """Median and largest of some seconds ("-" for none)."""
    values = [v for v in values if v == v]
    return f"{statistics.median(values):5.1f} {max(values):5.1f}" if values else \
        f"{'-':>5} {'-':>5}"


def table(outcomes: dict[str, list[Outcome]]) -> list[str]:
    """The table of the outcomes, one row per fault."""
    rows = [f"{'fault':<19} {'trials':>6} {'lost':>5} {'dup':>5} {'re-m':>5} {'torn':>5} "
            f"{'resume s (med max)':>19} {'stop s (med max)':>17}  outcome"]
    for name, found in outcomes.items():
        bad = sum(1 for outcome in found if outcome.violations)
        rows.append(
            f"{name:<19} {len(found):>6} {sum(o.lost for o in found):>5} "
            f"{sum(o.duplicated for o in found):>5} {sum(o.remeasured for o in found):>5} "
            f"{sum(o.torn for o in found):>5} {_seconds([o.resume_s for o in found]):>19} "
            f"{_seconds([o.stop_s for o in found]):>17}  "
            f"{'pass' if not bad else f'FAIL ({bad} trials)'}")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=3, help="trials per fault (default 3)")
    parser.add_argument("--seed", type=int, default=25, help="seeds the faults' moments")
    parser.add_argument("--faults", nargs="+", choices=list(BY_NAME), metavar="NAME",
                        default=list(BY_NAME), help="the faults to inject (default: all): "
                        + ", ".join(BY_NAME))
    parser.add_argument("--keep", type=Path, help="keep the calls' outputs and the last "
                        "trial's campaign in this folder")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    with contextlib.ExitStack() as stack:
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            folder = args.keep.resolve()
        else:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(
                prefix="pinbench-faults-")))
        env = dict(os.environ)
        env.setdefault("PINBENCH_LOCK", str(folder / "machine.lock"))
        campaign = Campaign(folder, env, Path(env["PINBENCH_LOCK"]))
        started = time.monotonic()
        clean = campaign.prepare()
        print(f"# {len(campaign.plan)} runs in {len(campaign.threads)} measurement jobs "
              f"(threads {', '.join(map(str, campaign.threads))}), a whole call {clean:.1f} s; "
              f"{args.trials} trials per fault, seed {args.seed}; lock {campaign.lock}; "
              f"load {os.getloadavg()[0]:.1f}", flush=True)
        outcomes: dict[str, list[Outcome]] = {name: [] for name in args.faults}
        skipped = {}
        for trial in range(args.trials):
            for name in args.faults:
                if name in skipped:
                    continue
                tag = f"{re.sub(r'[^A-Za-z0-9]+', '-', name)}-{trial + 1}"
                try:
                    outcome, when = trial_with(campaign, BY_NAME[name], tag, rng)
                except full_disk.CannotMount as exc:
                    skipped[name] = f"{name}: skipped, cannot mount a tmpfs here ({exc}); " \
                        "run as root to inject it"
                    print(skipped[name], flush=True)
                    continue
                outcomes[name].append(outcome)
                stop = "" if math.isnan(outcome.stop_s) else \
                    f"stopped in {outcome.stop_s:.1f} s, "
                print(f"{name} {trial + 1}/{args.trials}: {when}; {stop}resumed in "
                      f"{outcome.resume_s:.1f} s: "
                      + ("; ".join(outcome.violations) + (
                          f" (outputs: {folder}/{tag}-*.txt)" if args.keep else
                          " (--keep DIR keeps the calls' outputs)")
                         if outcome.violations else "ok"), flush=True)
        if not args.keep:
            campaign.clear()
    outcomes = {name: found for name, found in outcomes.items() if found}
    print("\n".join(table(outcomes)))
    for line in skipped.values():
        print(line)
    trials = sum(map(len, outcomes.values()))
    failed = sum(1 for found in outcomes.values() for outcome in found if outcome.violations)
    print(f"{'PASS' if not failed else 'FAIL'}: {trials} trials of {len(outcomes)} faults, "
          f"{failed} with a violation; {time.monotonic() - started:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
