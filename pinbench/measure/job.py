"""One measurement job: every strategy x repetition of one (machine, benchmark, threads).

Runs go in a seeded random interleaved order (or back to back, as in the
pinning study), one at a time, under a machine-wide lock. Each finished run
is journaled before the next starts; a resumed job skips what the journal
holds. The job ends by writing the runs table (one row per run).

Strategies whose placement is another's (``same_as``, decided by the workflow:
equal lists, or equal up to a symmetry of the machine) are one experiment,
measured once under the first of them; its runs name the others
(``stands_for``). A job resumed from a journal written before this rule keeps measuring
every strategy (its header reads ``merged: false``:
:func:`pinbench.measure.legacy.migrate_journal_1`).

The journal's fingerprint (:meth:`Job.fingerprint_parts`) covers the binary's bytes,
the command and each strategy's PUs, not how the placement was found: a rebuild
that makes the same binary, or a re-trace that moves no thread, resumes the
journal. Anything else sets the journal aside, and the job says what changed. A journal
of an older version is read through :mod:`pinbench.results.formats`, which matches its
header against the job.

With a ``stopping`` rule (:mod:`pinbench.measure.stopping`) the runs go in
rounds and the job may end before ``repetitions`` rounds; resumed, it replays
the rule on the journaled runs, so it stops where it would have. So does the sequential
design (``sequential``: :mod:`pinbench.stats.sequential`): after the rounds of each look the
job decides each comparison with the baseline, drops the experiments that can no longer win
or whose comparison is futile (it would hardly be decided by the maximum) and stops once
every comparison left is decided. The looks are not journaled: they follow from the journaled runs, and a
resumed job (or the analysis) replays them.

The runs are measured under whatever load other processes put on the machine; each run
records the share of the CPUs they used during it (``other_cpu``; above ``quiet.threshold``
the run is marked in the report) and the wait before it. Only when the runs in a row of the
last ``quiet.busy_s`` seconds all had others above the threshold does the launcher wait for
the machine to be quiet, at most ``quiet.max_wait_s``, then measure on; the job says once, at
its end, how many runs were measured on a busy machine and how long it waited.

With ``explain`` (:mod:`pinbench.measure.explain`) the job also makes explained runs:
each measured strategy ``explain.repetitions`` times under the OMPT tool, and, as the
baselines of the work-inflation analysis, the benchmark at one thread (T_1, when the
campaign does not measure one thread itself; under the tool too, so on the same runtime)
and its ``sequential`` command (T_s, uninstrumented). They are spread evenly among the timing runs in a seeded random order, but
go to their own journal and table: the timing runs' journal, order and fingerprint are
those of the job without them, and no explained run ever enters the timing statistics.
"""
from __future__ import annotations

import contextlib
import dataclasses
import datetime
import functools
import hashlib
import json
import math
import os
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pinbench import events
from pinbench.errors import escaped
from pinbench.events import Told, warning
from pinbench.measure import explain as explaining, interrupt, outputs as kept_outputs, verify
from pinbench.measure import legacy, rebind, workdir
from pinbench.measure.journal import Journal, described
from pinbench.measure.launcher import TIMER, Launcher
from pinbench.measure.lock import DEFAULT_LOCK, MachineLock
from pinbench.measure.printed_time import number, read_time
from pinbench.measure.progress import Campaign, Progress, cell_name, duration
from pinbench.measure.settings import (LAUNCHED, OPENMP, QUIET, JobSettings, located,
                                       metric_regex, portable, time_key)
from pinbench.measure.spawn import RunResult, base_environment, executable, prepare, run_once
from pinbench.measure.stopping import precise_enough, rounds_order
from pinbench.measure.system import wait_until_quiet
from pinbench.results import formats
from pinbench.results.placements import Placement, omp_places
from pinbench.results.printed_share import printed_share
from pinbench.results.runs import MISMATCH, VERIFIED, RunRecord, finite, write_runs
from pinbench.seeding import derive_seed


@dataclass(frozen=True, kw_only=True)
class Job(JobSettings):
    """One measurement job: the workflow's settings and each strategy's placement."""

    placements: dict[str, Placement]  #: strategy -> its placement, in the campaign's order
    #: the job's scratch folder (:mod:`pinbench.measure.workdir`), where its runs start when
    #: the benchmark names no ``cwd``; None: they start in this process's folder
    scratch: str | None = None

    @classmethod
    def of(cls, settings: JobSettings, placements: Iterable[Placement],
           scratch: str | None = None) -> Job:
        """The job of ``settings`` with the placement of each of its strategies (KeyError:
        a strategy without one) and its ``scratch`` folder."""
        found = {placement.strategy: placement for placement in placements}
        return cls(**{f.name: getattr(settings, f.name) for f in dataclasses.fields(settings)},
                   placements={strategy: found[strategy] for strategy in settings.strategies},
                   scratch=scratch)

    @property
    def in_scratch(self) -> bool:
        """Whether the runs start in the job's scratch folder."""
        return self.cwd is None and self.scratch is not None

    def request(self, argv: list[str], env: dict[str, str]) -> bytes:
        """The launcher's request of a run of ``argv`` in ``env``: in the benchmark's ``cwd``
        or the job's scratch folder (there with the project's relative paths made absolute:
        :func:`pinbench.measure.workdir.project_paths`), its wrapper's processes looked at
        with ``verify: openmp``."""
        if self.in_scratch:
            argv = workdir.project_paths(argv)
        return prepare(argv, env, self.timeout_s, self.cwd or self.scratch or "",
                       self.verify == OPENMP)

    @property
    def binary_path(self) -> str:
        """The benchmark's binary, as an absolute path."""
        return os.path.abspath(self.binary or self.argv[0])

    @functools.cached_property
    def prepared(self) -> dict[tuple[int, ...] | None, tuple[dict[str, str], bytes]]:
        """The environment and launcher request of each placement's runs (PUs as a tuple, or
        None: not bound), made the first time they run (:func:`prepared_run`): the same for
        every repetition, so not made again before each. A job's fields do not change once
        it runs; :func:`dataclasses.replace` makes a job with an empty one."""
        return {}

    @functools.cached_property
    def runtime(self) -> str:
        """The OpenMP runtime the program loads: ``libgomp`` (a gcc build), else ``libomp``."""
        return "libgomp" if explaining.links_libgomp(self.binary_path) else "libomp"

    @functools.cached_property
    def binary_digest(self) -> str:
        """SHA-256 of the binary's bytes, read once per job (every fingerprint holds it)."""
        return hashlib.sha256(Path(self.binary_path).read_bytes()).hexdigest()

    def fingerprint_fields(self) -> dict[str, dict]:
        """The settings of the ``command`` (arguments, environment, how a run is judged) and
        of the ``plan`` (repetitions, order, merged strategies, stopping rule), by name: each
        is one part of the fingerprint (:meth:`fingerprint_parts`), and a journal set aside
        names those that changed (:func:`pinbench.measure.journal.what_changed`)."""
        return {
            "command": {"argv": self.located(self.argv), "env": self.env,
                        "validate": self.validate, time_key(self.time): self.time,
                        "timeout_s": self.timeout_s, "exit_status": sorted(self.exit_status),
                        "metrics": self.metrics,
                        # where the runs start and whose binding is verified: only when set
                        **({"cwd": portable(self.cwd)} if self.cwd is not None else {}),
                        **({"verify": self.verify} if self.verify != LAUNCHED else {})},
            "plan": {"machine": self.machine, "benchmark": self.benchmark,
                     "threads": self.threads, "repetitions": self.repetitions,
                     "seed": self.seed, "order": self.order, "same_as": self.same_as,
                     "stopping": self.stopping,
                     # the design: only when sequential
                     **({"sequential": self.sequential} if self.sequential else {})},
        }

    def fingerprint_parts(self) -> dict[str, str]:
        """A hash of each thing that defines the measurement: the binary's bytes, the
        command and the plan (:meth:`fingerprint_fields`) and each strategy's placement (only
        its PUs: a re-trace that moves no thread changes none of these)."""
        parts = {"binary": self.binary_digest}
        for part, fields in self.fingerprint_fields().items():
            parts[part] = formats.digest(list(fields.values()))
        for strategy, placement in sorted(self.placements.items()):
            parts[f"placement of {strategy}"] = formats.digest(
                [placement.pus, placement.pus_by_repetition]
                + ([placement.regions] if placement.regions else []))
        return parts

    def fingerprint(self) -> str:
        """The hash of :meth:`fingerprint_parts`: a journal with another one holds another
        measurement."""
        return formats.digest(self.fingerprint_parts())

    def located(self, argv: list[str] | None) -> list[str] | None:
        """A command with the binary named ``{binary}``: the same wherever the project lies."""
        return located(argv, self.binary_path)

    def explained_plan(self) -> dict:
        """What defines the explained runs besides the timing runs' measurement: their
        settings (:class:`~pinbench.measure.settings.Explain`; commands :meth:`located`) and
        the OMPT tool's bytes (its SHA-256)."""
        with open(self.explain.tool["tool"], "rb") as handle:
            tool = hashlib.sha256(handle.read()).hexdigest()
        return {"repetitions": self.explain.repetitions,
                "t1_argv": self.located(self.explain.t1_argv),
                "sequential_argv": self.located(self.explain.sequential_argv), "tool": tool}


def run_order(strategies: list[str], repetitions: int, order: str, seed: int) -> list[tuple[str, int]]:
    """The (strategy, repetition) pairs in the order they run.

    ``back-to-back`` runs each strategy's repetitions consecutively;
    ``interleaved`` shuffles all pairs with ``seed``, so slow drift of the
    machine spreads over every strategy instead of biasing one.
    """
    pairs = [(s, r) for s in strategies for r in range(repetitions)]
    if order == "interleaved":
        random.Random(seed).shuffle(pairs)
    return pairs


#: What a run plans: thread i's PU, or under a runtime's policy the PUs of thread i's place.
Planned = list[int] | list[list[int]]


def planned_binding(job: Job, strategy: str, repetition: int,
                    runtime: str | None = None) -> tuple[Planned | None, dict[str, str] | None]:
    """What a run of ``strategy`` plans (None: not bound) and the runtime policy it runs under
    (None: pinbench binds): a policy's places are those the program's runtime (``runtime``,
    default :attr:`Job.runtime`) binds its threads to."""
    placement = job.placements[strategy]
    if placement.policy:
        return placement.places_by_runtime[runtime or job.runtime], placement.policy
    return placement.pus_for(repetition), None


def run_environment(job: Job, pus: list[int] | None,
                    policy: dict[str, str] | None = None,
                    regions: list[dict] | None = None) -> dict[str, str]:
    """The full environment of one run: fixed base, campaign extras, OpenMP binding (the
    runtime's own ``policy``, else thread i on ``pus[i]``), and with ``regions`` (a placement
    per region) the re-binding shim (:mod:`pinbench.measure.rebind`; NotBuilt when it is
    not built)."""
    env = base_environment() | job.env
    env.update(OMP_NUM_THREADS=str(job.threads), OMP_DISPLAY_AFFINITY="TRUE",
               OMP_AFFINITY_FORMAT=verify.PROCESS_FORMAT if job.verify == OPENMP
               else verify.AFFINITY_FORMAT)
    if policy is not None:
        env.update(policy)
    elif pus is not None:
        env.update(OMP_PLACES=omp_places(pus), OMP_PROC_BIND="close")
    if regions and pus is not None:
        plan, out = rebind.run_files(job.benchmark)
        rebind.write_plan(pus, regions, plan)
        env = rebind.environment(env, rebind.shim(), plan, out)
    return env


def prepared_run(job: Job, pus: list[int] | None, policy: dict[str, str] | None = None,
                 regions: list[dict] | None = None) -> tuple[dict[str, str], bytes]:
    """The environment of a run on ``pus`` (or under ``policy``; with ``regions``, each of
    them on its own) and the launcher's request for it, made once per job and placement
    (:attr:`Job.prepared`)."""
    key = tuple(sorted(policy.items())) if policy else tuple(pus) if pus is not None else None
    if regions:
        key = (key, json.dumps(regions, sort_keys=True))
    found = job.prepared.get(key)
    if found is None:
        env = run_environment(job, pus, policy, regions)
        found = job.prepared[key] = (env, job.request(job.argv, env))
    return found


@functools.cache
def _host() -> str:
    """This machine's name (asked once per process)."""
    return os.uname().nodename


@functools.cache
def _governor_file(pu: int) -> str | None:
    """The file of a PU's frequency governor; None when the kernel has none for it (looked up
    once per process: a machine without cpufreq, a virtual one, does not grow it mid-job)."""
    path = f"/sys/devices/system/cpu/cpu{pu}/cpufreq/scaling_governor"
    return path if os.path.exists(path) else None


def governor(pus: Planned | None) -> str:
    """The CPU frequency governor of the PUs used (``unreadable`` when sysfs has none)."""
    found = set()
    used = [0] if pus is None else [pu for entry in pus
                                   for pu in ([entry] if isinstance(entry, int) else entry)]
    for path in filter(None, map(_governor_file, used)):
        try:  # os.open rather than pathlib: read before every run
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            found.add(os.read(fd, 256).decode().strip())
        except OSError:
            pass
        finally:
            os.close(fd)
    return "/".join(sorted(found)) or "unreadable"


def judge(job: Job, result: RunResult) -> tuple[str, bool, float | None, str, float | None]:
    """(failure reasons or "", validated, time_s, time source, the printed time's resolution)
    of one run: its time read from its output as the benchmark's ``time`` says
    (:func:`pinbench.measure.printed_time.read_time`, in seconds), else its wall time.

    The first of the reasons says what ended or failed the run; a program that ended by
    itself and printed a time that is none also has that said (``; ``), quoted."""
    validated = re.search(job.validate, result.stdout, re.MULTILINE) is not None
    printed = read_time(job.time, result.stdout, result.stderr) if job.time else None
    source, time_s, resolution = ("regex", printed.seconds, printed.resolution_s) if printed \
        else ("wall", result.wall_s, None)
    if result.error:
        failure = result.error
    elif result.timed_out:
        failure = f"timeout after {job.timeout_s:g} s"
    elif result.exit_status not in job.exit_status:
        failure = f"exit status {result.exit_status}"
    elif result.leftover:
        failure = (f"left {result.leftover} process{'es' if result.leftover > 1 else ''} "
                   "running after it exited (killed)")
    elif not validated:
        failure = f"validation regex {job.validate!r} not found in the output"
    elif printed:
        return printed.failure, validated, time_s, source, resolution
    elif time_s <= 0:
        failure = f"time {time_s:g} s is not positive"
    else:
        failure = ""
    if printed and printed.failure and printed.matched and not (result.error
                                                                or result.timed_out):
        failure += f"; {printed.failure}"
    return failure, validated, time_s, source, resolution


def metrics(job: Job, stdout: str) -> tuple[dict[str, float], list[str]]:
    """The run's named metrics, and the required ones whose regex found no finite number (an
    optional one without a number is left out: no value, never a NaN)."""
    found, missing = {}, []
    for name, setting in job.metrics.items():
        pattern, required = metric_regex(setting)
        match = re.search(pattern, stdout, re.MULTILINE)
        value = number(match.group(1)) if match else None
        if value is not None and math.isfinite(value[0]):
            found[name] = value[0]
        elif required:
            missing.append(name)
    return found, missing


def measure_one(job: Job, strategy: str, repetition: int, order_index: int,
                launcher: Launcher | None = None,
                outputs: kept_outputs.Outputs | None = None) -> RunRecord:
    """Run one repetition of one strategy on its placement and return its record; keep its
    output in ``outputs`` (the job's runs file, :mod:`pinbench.measure.outputs`) when given.

    ``launcher``: the launcher process that runs it (default: this process's own). The
    output is parsed and the binding verified once the program is reaped, after the clock.
    """
    planned, policy = planned_binding(job, strategy, repetition)
    regions = job.placements[strategy].regions
    env, request = prepared_run(job, None if policy else planned, policy, regions)
    return run_recorded(job, strategy, repetition, order_index, planned, env, request, launcher,
                        outputs, regions)


@functools.cache
def _say_uncounted_once(text: str) -> None:
    events.tell(warning("pinbench:", f"counters not counted on this machine: {text}"),
                sys.stdout)


def _say_uncounted(uncounted: dict[str, str]) -> None:
    """Say once per process which counters the kernel would not count, and why."""
    if uncounted:
        _say_uncounted_once(", ".join(f"{name} ({why})" for name, why in uncounted.items()))


def run_recorded(job: Job, strategy: str, repetition: int, order_index: int,
                 pus: Planned | None, env: dict[str, str], request: bytes | None = None,
                 launcher: Launcher | None = None,
                 outputs: kept_outputs.Outputs | None = None,
                 regions: list[dict] | None = None) -> RunRecord:
    """One run on ``pus`` (None: not bound) in the environment ``env``, recorded as
    ``strategy``'s repetition (:func:`measure_one`; ``request``: the launcher's, made for
    this run when None). With ``regions`` (``env`` preloads the re-binding shim) the
    re-bindings are verified from the shim's record, and the whole-program placement from
    what the runtime reported alone (the launcher's looks at the threads see them re-bound)."""
    load_1m = os.getloadavg()[0]
    gov = governor(pus)
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")
    if job.in_scratch:  # each run starts in an empty folder
        workdir.empty(job.scratch)
    result = run_once(job.argv, env, job.timeout_s, launcher,
                      request if request is not None else job.request(job.argv, env))
    failure, validated, time_s, source, resolution = judge(job, result)
    if outputs is not None:
        outputs.keep(strategy, repetition, result.exit_status, result.stdout, result.stderr)
    values, missing = metrics(job, result.stdout)
    if missing and not failure:
        failure = (f"metric regex {metric_regex(job.metrics[missing[0]])[0]!r} ({missing[0]}) "
                   "found no finite number in the output")
    _say_uncounted(result.uncounted)
    rebound, checked = {}, None
    if rebind.OUT_VARIABLE in env:
        shim = rebind.read_record(env[rebind.OUT_VARIABLE])
        checked, note = rebind.check(shim, pus, regions or [])
        rebound = rebind.fields(shim) | {"regions": rebind.format_regions(regions or []),
                                         "rebind_note": note}
        observed = verify.observed_binding(result.stdout + "\n" + result.stderr)
    else:
        observed = verify.run_binding(result, job.threads, pus is not None, job.verify)
    verification = verify.verify(pus, observed, job.threads)
    if checked is not None and verification == VERIFIED:
        verification = checked
    messages = [line for line in result.stderr.splitlines()
                if line.strip() and not line.startswith(verify.TOKEN)]
    if failure and messages:
        failure += ": " + escaped(messages[-1][:200])
    return finite(RunRecord(
        machine=job.machine, benchmark=job.benchmark, threads=job.threads,
        strategy=strategy, repetition=repetition, order_index=order_index,
        ok=not failure, failure=failure, time_s=time_s, time_source=source,
        wall_s=result.wall_s, user_s=round(result.user_s, 6), sys_s=round(result.sys_s, 6),
        exit_status=result.exit_status, timed_out=result.timed_out,
        validated=validated, verification=verification,
        pus=verify.format_planned(pus) if pus is not None else "",
        observed=verify.format_binding(observed), load_1m=load_1m, governor=gov,
        started_at=started, other_cpu=result.other_cpu, time_resolution_s=resolution,
        metrics=json.dumps(values, sort_keys=True, allow_nan=False) if values else "",
        host=_host(), output_bytes=result.output_bytes,
        counters=json.dumps(result.counters, sort_keys=True) if result.counters else "",
        **rebound))


def _stops(stopping: dict, times: dict[str, list[float]], index: int, per_round: int,
           total: int) -> bool:
    """After run ``index`` of a job run in rounds: does the precision rule stop it here?"""
    rounds = (index + 1) // per_round
    return ((index + 1) % per_round == 0 and rounds >= stopping["min"] and index + 1 < total
            and precise_enough(list(times.values()), stopping["precision"],
                               stopping["confidence"]))


def failure_summary(records: list[RunRecord]) -> str:
    """Counts of runs, failures by reason, and verification results."""
    failures = Counter(r.failure.split(":")[0] for r in records if not r.ok)
    checks = Counter(r.verification for r in records)
    text = f"{len(records)} runs, {sum(failures.values())} failed"
    if failures:
        text += " (" + "; ".join(f"{n} x {why}" for why, n in failures.most_common()) + ")"
    return text + "; verification " + ", ".join(f"{k}: {v}" for k, v in sorted(checks.items()))


def run_job(job: Job, journal_path: Path, out: Path, lock_path: str = DEFAULT_LOCK,
            say=lambda line: print(line, file=sys.stderr, flush=True),
            outputs: Path | None = None, explained: tuple[Path, Path] | None = None,
            campaign: Campaign | None = None, account: dict | None = None) -> list[RunRecord]:
    """Run (or resume) a measurement job and write its runs table to ``out``; keep each
    run's output under ``outputs``, in a folder named after the journal's fingerprint
    (:func:`pinbench.measure.outputs.folder`).

    ``explained``: (journal, table) of the explained runs, when ``job.explain`` asks for
    them (:mod:`pinbench.results.explained` reads the table); ``campaign``: the campaign's
    other jobs, for the progress lines' estimate of the time left
    (:mod:`pinbench.measure.progress`); ``account``: filled with where this call's time went
    (:func:`new_account`)."""
    label = f"[{job.machine} {job.benchmark} t{job.threads}]"
    account = new_account() if account is None else account
    asked = time.monotonic()
    with MachineLock(lock_path, lambda line: say(f"{label} {line}")):
        account["lock_wait_s"] += time.monotonic() - asked
        parts = job.fingerprint_parts()
        with Journal(journal_path, formats.digest(parts),
                     header={"timer": TIMER, **described(parts, job.fingerprint_fields())},
                     migrate=lambda header: legacy.read_header(header, journal_path,
                                                               job)) as journal, \
                Launcher() as launcher:
            if journal.set_aside:
                say(warning(label, f"WARNING: the measurement changed ({journal.changed}): "
                            f"{journal.set_aside_runs} finished runs set aside in "
                            f"{journal.set_aside}, not used, and measured again"))
            with (kept_outputs.Outputs(kept_outputs.folder(outputs, journal.fingerprint),
                                       journal.runs)
                  if outputs is not None else contextlib.nullcontext()) as kept, \
                    _ExplainedRuns(job, explained, journal.fingerprint, launcher, label,
                                   say) as extra, \
                    workdir.scratch(job.scratch) if job.in_scratch else contextlib.nullcontext():
                records = _run_journaled(job, journal, launcher,
                                         journal.header.get("merged", True), kept, label, say,
                                         extra, campaign, account)
        write_runs(records, out)
    printed = printed_share(records, job.time_share_expected).text()
    say(Told(f"{label} {failure_summary(records)}" + (f"; {printed}" if printed else ""),
             "done", cell=cell_name(job.machine, job.benchmark, job.threads),
             runs=len(records), failed=sum(not r.ok for r in records)))
    if checked_a_wrapper(job, records):
        say(warning(label, f"{job.argv[0]} runs no OpenMP itself (a wrapper?): the binding "
                    "checked is its own; `verify: openmp` on the benchmark checks the OpenMP "
                    "programs it starts"))
    return records


def checked_a_wrapper(job: Job, records: list[RunRecord]) -> bool:
    """Whether runs were a mismatch because the process checked runs no OpenMP: the run
    command starts a wrapper, and the benchmark does not say ``verify: openmp``."""
    return job.verify == LAUNCHED and any(r.verification == MISMATCH for r in records) \
        and not verify.runs_openmp(executable(job.argv[0], base_environment() | job.env))


def new_account() -> dict:
    """Where a job's time goes, in seconds (besides what Python's start-up and the lock cost):
    ``runs`` measured by this call, ``measuring_s`` (their recorded wall times),
    ``quiet_wait_s`` (waiting for a quiet machine before them), ``explained_s`` (the explained
    runs' recorded wall times), ``lock_wait_s`` (waiting for the machine lock) and ``loop_s``
    (the whole loop over the runs; less the above: the launcher's own cost per run)."""
    return {"runs": 0, "measuring_s": 0.0, "quiet_wait_s": 0.0, "explained_runs": 0,
            "explained_s": 0.0, "lock_wait_s": 0.0, "loop_s": 0.0}


def _run_journaled(job: Job, journal: Journal, launcher: Launcher, merged: bool,
                   kept: kept_outputs.Outputs | None, label: str, say,
                   extra: "_ExplainedRuns | None" = None,
                   campaign: Campaign | None = None,
                   account: dict | None = None) -> list[RunRecord]:
    """The body of :func:`run_job`, under the machine lock: the runs the journal lacks
    (``merged``: the journal is one where identical placements are measured once; ``kept``:
    where each run's output goes)."""
    same_as = job.same_as if merged else {}
    measured = [s for s in job.placements if s not in same_as]
    stands_for = {s: [o for o in job.placements if same_as.get(o) == s] for s in measured}
    for strategy, others in stands_for.items():
        if others:
            say(f"{label} {', '.join([strategy, *others])} place the threads identically "
                f"(or up to a symmetry of the machine): one experiment, measured once "
                f"as {strategy}")
    seed = derive_seed(job.seed, "order", job.machine, job.benchmark, job.threads)
    order = rounds_order(measured, job.repetitions, seed) if job.stopping or job.sequential \
        else run_order(measured, job.repetitions, job.order, seed)
    design = _Sequential(job, measured, label, say) if job.sequential and \
        job.same_as.get(job.sequential["baseline"], job.sequential["baseline"]) in measured \
        else None
    journaled_pairs = {pair for pair in order if pair in journal.runs}
    journaled = len(journaled_pairs)
    if journaled:
        say(f"{label} resuming: {journaled} of {len(order)} runs already journaled")
        if journal.header.get("timer") != TIMER and journaled < len(order):
            say(warning(label, "WARNING: those runs were timed by an older launcher (Python's "
                        "fork path, about 2 ms more per run than the runs measured now); "
                        "re-measure the cell to time them all alike (README: re-measuring)"))
    progress = Progress(label, len(order), journaled, say, campaign,
                        (job.machine, job.benchmark, job.threads),
                        tell=events.tell if events.listening() else None)
    threshold, max_wait = job.quiet["threshold"], job.quiet["max_wait_s"]
    busy_for = job.quiet.get("busy_s", QUIET["busy_s"])
    busy = 0.0  # seconds of the last runs in a row during which others used > threshold
    times: dict[str, list[float]] = {strategy: [] for strategy in measured}
    if extra is not None:
        extra.plan(measured, stands_for, len(order))
    account = new_account() if account is None else account
    first = ""  # the failure every run so far had alike ("" once one differs or succeeds)
    noisy_runs, waits, waited_s = 0, 0, 0.0  # runs on a busy machine; the waits before runs
    loop_started = time.monotonic()
    for index, (strategy, rep) in enumerate(order):
        if design is not None and strategy in design.dropped:
            progress.update(index + 1, strategy, measured=False, final=index + 1 == len(order))
            if design.round_ends(order, index, times):
                break
            continue
        if extra is not None:
            extra.before(index)
        record = RunRecord(**journal.runs[(strategy, rep)]) \
            if (strategy, rep) in journal.runs else None
        if record is None:
            interrupt.check()
            waited = 0.0
            if busy >= busy_for:  # busy for long: wait for it to calm down, once, then measure
                waited = wait_until_quiet(threshold, max_wait, check=interrupt.check)[0]
                busy, waits, waited_s = 0.0, waits + 1, waited_s + waited
            with interrupt.journaling():  # a stop ends the run, or waits for its record
                record = measure_one(job, strategy, rep, index, launcher, kept)
                record.stands_for, record.quiet_wait_s = " ".join(stands_for[strategy]), waited
                journal.append(record.as_row())
            noisy = record.other_cpu is not None and record.other_cpu > threshold
            busy, noisy_runs = busy + (record.wall_s or 0.0) if noisy else 0.0, noisy_runs + noisy
            account["runs"] += 1
            account["measuring_s"] += record.wall_s or 0.0
            account["quiet_wait_s"] += waited
            if not record.ok:
                say(f"{label} {index + 1}/{len(order)} {strategy} "
                    f"rep {rep}: {record.wall_s:.3f} s FAILED ({record.failure})")
        following = order[index + 1][0] if index + 1 < len(order) else strategy
        progress.update(index + 1, following, measured=(strategy, rep) not in journaled_pairs,
                        strategy_ends=not job.stopping and job.order != "interleaved"
                        and following != strategy,
                        final=index + 1 == len(order))
        if record.counts:
            times[strategy].append(record.time_s)
        first = _failed_alike(first, "" if record.ok else record.failure, index)
        if first and index + 1 == max(len(measured), ALIKE_RUNS) and index + 1 < len(order):
            say(warning(label, f"the first {index + 1} runs all failed alike ({first}): "
                        f"stopping, {len(order) - index - 1} runs not measured (fix the "
                        "program; pinbench remeasure measures the cell again)"))
            progress.update(index + 1, strategy, measured=False, final=True)
            break
        if design is not None and design.round_ends(order, index, times):
            progress.update(index + 1, strategy, measured=False, final=True)
            break
        if job.stopping and _stops(job.stopping, times, index, len(measured), len(order)):
            say(f"{label} every strategy's median known to within "
                f"{job.stopping['precision']:.1%} after {rep + 1} rounds: stopping "
                f"({len(order) - index - 1} runs of {len(order)} saved)")
            progress.update(index + 1, strategy, measured=False, final=True)
            break
    if noisy_runs or waits:
        say(warning(label, f"{noisy_runs} runs measured while other processes used more than "
                    f"{threshold:.0%} of the CPUs (marked L); waited {duration(waited_s)} in "
                    f"all ({waits} waits, each after {busy_for:g} s busy; pinbench system "
                    "names them)", key="runs measured on a busy machine"))
    if extra is not None:
        extra.finish()
        account["explained_runs"], account["explained_s"] = extra.runs, extra.wall_s
    account["loop_s"] += time.monotonic() - loop_started
    return sorted((RunRecord(**run) for run in journal.runs.values()),
                  key=lambda record: record.order_index)


class _Sequential:
    """The sequential design of a job (:mod:`pinbench.stats.sequential`): looks after the
    rounds it names, says what it decided and dropped and when the cell is decided. Each look
    follows from the runs of the rounds before it: resumed, the job replays it."""

    def __init__(self, job: Job, measured: list[str], label: str, say):
        # NumPy and SciPy: only for this design
        from pinbench.stats.sequential import POWER, SPENDING, Cell, fixed_runs, maximum_for

        settings = job.sequential
        baseline = job.same_as.get(settings["baseline"], settings["baseline"])
        self.cell = Cell(baseline, [s for s in measured if s != baseline], job.repetitions,
                         settings["alpha"], settings.get("spending", SPENDING),
                         settings.get("power", POWER))
        self.label, self.say = label, say
        alpha, cell = settings["alpha"] / 2, self.cell
        say(f"{label}: sequential design, at most {cell.maximum} rounds, the power of "
            f"{fixed_runs(cell.maximum, alpha, cell.power, cell.spending)} fixed runs (the "
            f"power of {cell.maximum}: repetitions "
            f"{maximum_for(cell.maximum, alpha, cell.power, cell.spending)})")
        self.dropped: set[str] = set()

    def round_ends(self, order: list[tuple[str, int]], index: int,
                   times: dict[str, list[float]]) -> bool:
        """After pair ``index`` of ``order``: when it ends a round, look if one is due;
        whether the cell is decided (it stops here)."""
        rounds, total = order[index][1] + 1, len(order)
        if index + 1 < total and order[index + 1][1] == rounds - 1:
            return False
        if not self.cell.is_look(rounds) or rounds == self.cell.maximum:
            return False
        lines = self.cell.look(rounds, times)
        for line in lines:
            self.say(f"{self.label} after {rounds} rounds: {line}")
        self.dropped = {name for name, c in self.cell.comparisons.items() if c.dropped}
        if self.cell.done():
            self.say(f"{self.label} every comparison decided after {rounds} rounds of "
                     f"{self.cell.maximum}: stopping ({total - index - 1} runs of {total} saved)")
            return True
        return False


#: A job whose first max(this, strategies) runs (every strategy's first, in the shuffled
#: order usually) all failed alike stops there: the rest would fail the same way.
ALIKE_RUNS = 3


def _failed_alike(first: str, failure: str, index: int) -> str:
    """The failure the job's runs up to its ``index``-th (whose ``failure`` is "" when it
    succeeded) all had alike, or "". Alike: the same reason before any detail
    (``exit status 3``, ``timed out after 20 s``).

    >>> _failed_alike("", "exit status 3: x", 0), _failed_alike("exit status 3",
    ...     "exit status 3: y", 1), _failed_alike("exit status 3", "timed out", 1)
    ('exit status 3', 'exit status 3', '')
    >>> _failed_alike("exit status 3", "", 2)
    ''
    """
    reason = failure.split(": ")[0]
    if index == 0:
        return reason
    return first if reason == first else ""


#: The strategy names of the explained job's baseline runs (never a strategy's name).
T1_RUN, SEQUENTIAL_RUN = "@t1", "@sequential"


class _ExplainedRuns:
    """The explained runs of a job (``job.explain``), spread among its timing runs.

    Their journal's fingerprint is the timing journal's plus the explained plan, so a
    changed measurement sets both aside. Each row is a run record (:class:`RunRecord`'s
    columns) with ``kind`` (``explained``, ``t1``, ``sequential``), ``ompt`` (the tool's
    record, or None) and ``runtime`` (the OpenMP runtime it used, in words).
    """

    def __init__(self, job: Job, paths: tuple[Path, Path] | None, fingerprint: str,
                 launcher: Launcher, label: str, say):
        self.job, self.launcher, self.label, self.say = job, launcher, label, say
        self.active = bool(job.explain and paths)
        # asked for explained runs without a tool to run them with (the workflow found none
        # on the measured machine): the table is written empty, as Snakemake expects it
        self.empty_table = None if self.active or not paths else paths[1]
        self.order: list[tuple[str, str, int]] = []
        self.slots: list[int] = []
        self.next = 0
        self.warned = False
        self.runs, self.wall_s = 0, 0.0  # explained runs measured by this call
        if not self.active:
            return
        self.journal_path, self.table = paths
        plan = job.explained_plan()
        self.fingerprint = formats.digest([fingerprint, plan])
        parts = job.fingerprint_parts() | {"explain": formats.digest(plan)}
        self.journal = Journal(self.journal_path, self.fingerprint,
                               header={"timer": TIMER, "explain": plan, **described(
                                   parts, job.fingerprint_fields() | {"explain": plan})},
                               migrate=lambda header: legacy.read_header(
                                   header, self.journal_path, job, timing=fingerprint))
        if self.journal.set_aside:
            say(f"{label} explained runs: the measurement changed ({self.journal.changed}): "
                f"{self.journal.set_aside_runs} set aside in {self.journal.set_aside}")
        self.folder = self.journal_path.parent

    def __enter__(self) -> "_ExplainedRuns":
        return self

    def __exit__(self, *exc) -> None:
        if self.active:
            self.journal.close()

    def plan(self, measured: list[str], stands_for: dict[str, list[str]], timing_runs: int):
        """Draw the explained runs' order and where each goes among ``timing_runs``."""
        if not self.active:
            return
        self.stands_for = stands_for
        reps = self.job.explain.repetitions
        order = [("explained", s, r) for s in measured for r in range(reps)]
        if self.job.explain.t1_argv:
            order += [("t1", T1_RUN, r) for r in range(reps)]
        if self.job.explain.sequential_argv:
            order += [("sequential", SEQUENTIAL_RUN, r) for r in range(reps)]
        random.Random(derive_seed(self.job.seed, "explain", self.job.machine,
                                  self.job.benchmark, self.job.threads)).shuffle(order)
        self.order = order
        self.slots = [k * max(timing_runs, 1) // max(len(order), 1) for k in range(len(order))]
        done = sum((s, r) in self.journal.runs for _, s, r in order)
        self.say(f"{self.label} explained runs: {len(order)} ({done} already journaled), "
                 "on libomp under the OMPT tool, kept apart from the timing runs")

    def before(self, index: int) -> None:
        """Run the explained runs due before timing run ``index``."""
        while self.active and self.next < len(self.order) and self.slots[self.next] <= index:
            self._run(*self.order[self.next], index)
            self.next += 1

    def finish(self) -> None:
        """Run those not run yet (a job stopped early), then write the explained table."""
        if self.empty_table is not None:
            self.empty_table.parent.mkdir(parents=True, exist_ok=True)
            self.empty_table.write_text("")
        if not self.active:
            return
        while self.next < len(self.order):
            self._run(*self.order[self.next], len(self.slots))
            self.next += 1
        rows = sorted(self.journal.runs.values(), key=lambda row: row["order_index"])
        tmp = self.table.with_name(self.table.name + ".tmp")
        self.table.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "w") as handle:
            for row in rows:
                handle.write(json.dumps(formats.stamp("explained", row), sort_keys=True) + "\n")
        os.replace(tmp, self.table)
        failed = [row for row in rows if not row["ok"]]
        self.say(f"{self.label} explained runs: {len(rows)}, {len(failed)} failed"
                 + (f" ({failed[0]['failure']})" if failed else ""))

    def _run(self, kind: str, strategy: str, rep: int, index: int) -> None:
        if (strategy, rep) in self.journal.runs:
            return
        job, record_file = self.job, None
        if kind == "explained":
            placement = job.placements[strategy]
            # random: the timing runs' draws, in turn; a policy: libomp's places (explained
            # runs run under libomp)
            pus, policy = planned_binding(
                job, strategy, rep % len(placement.pus_by_repetition)
                if placement.per_repetition else rep, runtime="libomp")
            record_file = explaining.record_path(self.folder, strategy, rep)
            env = explaining.explain_environment(
                run_environment(job, None if policy else pus, policy, placement.regions),
                job.explain.tool, record_file)
        else:  # the baselines: one thread, not bound; T_1 on the explained runs' runtime
            job = dataclasses.replace(job, threads=1, argv=job.explain.t1_argv
                                      if kind == "t1" else job.explain.sequential_argv)
            pus, env = None, run_environment(job, None)
            if kind == "t1":
                record_file = explaining.record_path(self.folder, strategy, rep)
                env = explaining.explain_environment(env, job.explain.tool, record_file)
        with interrupt.journaling():
            record = run_recorded(job, strategy, rep, index, pus, env, None, self.launcher,
                                  regions=job.placements[strategy].regions
                                  if kind == "explained" else None)
            row = record.as_row()
            ompt = explaining.read_record(record_file) if record_file else None
            if kind == "explained" and record.ok and ompt is None:
                row.update(ok=False, failure=explaining.NO_RECORD)
            if kind == "explained":
                row["stands_for"] = " ".join(self.stands_for.get(strategy, []))
            row.update(kind=kind, ompt=ompt,
                       runtime=explaining.runtime_used(ompt, self.job.binary_path)
                       if kind == "explained" or ompt else "")
            self.journal.append(row)
        self.runs, self.wall_s = self.runs + 1, self.wall_s + (record.wall_s or 0.0)
        if not row["ok"] and not self.warned:
            self.warned = True
            self.say(warning(self.label, f"explained run of {strategy} failed: "
                             f"{row['failure']} (the timing runs go on)"))
