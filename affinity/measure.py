"""One measurement job: every strategy x repetition of one (machine, benchmark, threads).

Runs go in a seeded random interleaved order (or back to back, as in the
pinning study), one at a time, under a machine-wide lock. Each finished run
is journaled before the next starts; a resumed job skips what the journal
holds. The job ends by writing the runs table (one row per run).
"""
from __future__ import annotations

import argparse
import contextlib
import csv
import datetime
import fcntl
import hashlib
import json
import os
import random
import re
import shutil
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from affinity import verify
from affinity.journal import Journal
from affinity.launcher import RunResult, base_environment, run_once
from affinity.placement import omp_places, pus_for
from affinity.seeding import derive_seed

DEFAULT_LOCK = "/tmp/pinbench-machine.lock"
RUN_COLUMNS = [
    "machine", "benchmark", "threads", "strategy", "repetition", "order_index", "ok",
    "failure", "time_s", "time_source", "wall_s", "user_s", "sys_s", "exit_status",
    "timed_out", "validated", "verification", "pus", "observed", "load_1m", "governor",
    "started_at",
]


@dataclass
class Job:
    """Everything one measurement job needs; built by the workflow from the campaign."""

    machine: str
    benchmark: str
    threads: int
    argv: list[str]
    env: dict[str, str]
    validate: str
    time_regex: str | None
    timeout_s: float
    repetitions: int
    seed: int
    order: str
    placements: dict[str, dict]  #: strategy -> placement record

    def fingerprint(self) -> str:
        """Hash of all that defines the measurement, the binary's bytes included."""
        digest = hashlib.sha256(Path(self.argv[0]).read_bytes()).hexdigest()
        blob = json.dumps([self.__dict__, digest], sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()


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


def run_environment(job: Job, pus: list[int] | None) -> dict[str, str]:
    """The full environment of one run: fixed base, campaign extras, OpenMP binding."""
    env = base_environment() | job.env
    env.update(OMP_NUM_THREADS=str(job.threads), OMP_DISPLAY_AFFINITY="TRUE",
               OMP_AFFINITY_FORMAT=verify.AFFINITY_FORMAT)
    if pus is not None:
        env.update(OMP_PLACES=omp_places(pus), OMP_PROC_BIND="close")
    return env


def governor(pus: list[int] | None) -> str:
    """The CPU frequency governor of the PUs used (``unreadable`` when sysfs has none)."""
    found = set()
    for pu in pus if pus is not None else [0]:
        path = Path(f"/sys/devices/system/cpu/cpu{pu}/cpufreq/scaling_governor")
        try:
            found.add(path.read_text().strip())
        except OSError:
            pass
    return "/".join(sorted(found)) or "unreadable"


def judge(job: Job, result: RunResult) -> tuple[str, bool, float | None, str]:
    """(failure reason or "", validated, time_s, time source) of one run."""
    validated = re.search(job.validate, result.stdout, re.MULTILINE) is not None
    time_s: float | None = result.wall_s
    source = "wall"
    if job.time_regex:
        match = re.search(job.time_regex, result.stdout, re.MULTILINE)
        source = "regex"
        try:
            time_s = float(match.group(1)) if match else None
        except ValueError:
            time_s = None
    if result.error:
        failure = result.error
    elif result.timed_out:
        failure = f"timeout after {job.timeout_s:g} s"
    elif result.exit_status != 0:
        failure = f"exit status {result.exit_status}"
    elif not validated:
        failure = "validation regex not found in the output"
    elif time_s is None:
        failure = "time regex found no number in the output"
    else:
        failure = ""
    return failure, validated, time_s, source


def measure_one(job: Job, strategy: str, repetition: int, order_index: int,
                scratch: Path) -> dict:
    """Run one repetition of one strategy and return its row."""
    pus = pus_for(job.placements[strategy], repetition)
    env = run_environment(job, pus)
    load_1m = os.getloadavg()[0]
    gov = governor(pus)
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")
    result = run_once(job.argv, env, job.timeout_s, scratch)
    failure, validated, time_s, source = judge(job, result)
    observed = verify.observed_binding(result.stdout + "\n" + result.stderr)
    messages = [line for line in result.stderr.splitlines()
                if line.strip() and not line.startswith(verify.TOKEN)]
    if failure and messages:
        failure += ": " + messages[-1][:200]
    return {
        "machine": job.machine, "benchmark": job.benchmark, "threads": job.threads,
        "strategy": strategy, "repetition": repetition, "order_index": order_index,
        "ok": not failure, "failure": failure, "time_s": time_s, "time_source": source,
        "wall_s": result.wall_s, "user_s": round(result.user_s, 6),
        "sys_s": round(result.sys_s, 6),
        "exit_status": result.exit_status, "timed_out": result.timed_out,
        "validated": validated, "verification": verify.verify(pus, observed),
        "pus": " ".join(map(str, pus)) if pus is not None else "",
        "observed": verify.format_binding(observed), "load_1m": load_1m, "governor": gov,
        "started_at": started,
    }


class MachineLock:
    """An exclusive ``flock`` that keeps two measurements off the machine at once.

    It is released by the kernel when its holder dies, even by SIGKILL.
    """

    def __init__(self, path: str, say):
        self.path, self.say, self.fd = path, say, -1

    def __enter__(self) -> "MachineLock":
        try:
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        except PermissionError:  # another user's lock file: lock it, leave its text alone
            self.fd = os.open(self.path, os.O_RDONLY)
        else:
            with contextlib.suppress(OSError):
                os.fchmod(self.fd, 0o666)  # every user of the machine shares the lock
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(self.fd, 64, 0).decode(errors="replace").strip()
            self.say(f"waiting for the machine lock {self.path} (held by {holder or 'another job'})")
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        with contextlib.suppress(OSError):
            os.ftruncate(self.fd, 0)
            os.pwrite(self.fd, f"pid {os.getpid()}\n".encode(), 0)
        return self

    def __exit__(self, *exc) -> None:
        os.close(self.fd)


def write_runs(rows: list[dict], path: Path) -> None:
    """Write the runs table atomically (a reader never sees half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, RUN_COLUMNS)
        writer.writeheader()
        writer.writerows(sorted(rows, key=lambda r: r["order_index"]))
    os.replace(tmp, path)


def failure_summary(rows: list[dict]) -> str:
    """Counts of runs, failures by reason, and verification results."""
    failures = Counter(r["failure"].split(":")[0] for r in rows if not r["ok"])
    checks = Counter(r["verification"] for r in rows)
    text = f"{len(rows)} runs, {sum(failures.values())} failed"
    if failures:
        text += " (" + "; ".join(f"{n} x {why}" for why, n in failures.most_common()) + ")"
    return text + "; verification " + ", ".join(f"{k}: {v}" for k, v in sorted(checks.items()))


def run_job(job: Job, journal_path: Path, out: Path, lock_path: str = DEFAULT_LOCK,
            say=lambda line: print(line, file=sys.stderr, flush=True)) -> list[dict]:
    """Run (or resume) a measurement job and write its runs table to ``out``."""
    label = f"[{job.machine} {job.benchmark} t{job.threads}]"
    order = run_order(list(job.placements), job.repetitions, job.order,
                      derive_seed(job.seed, "order", job.machine, job.benchmark, job.threads))
    with MachineLock(lock_path, lambda line: say(f"{label} {line}")):
        journal = Journal(journal_path, job.fingerprint())
        if journal.set_aside:
            say(f"{label} the measurement changed; previous journal kept as {journal.set_aside}")
        todo = [(i, s, r) for i, (s, r) in enumerate(order) if (s, r) not in journal.runs]
        if len(todo) < len(order):
            say(f"{label} resuming: {len(order) - len(todo)} of {len(order)} runs already journaled")
        scratch = journal_path.parent / f".scratch-{journal_path.stem}"
        last_report = 0.0
        for done, (index, strategy, rep) in enumerate(todo, 1):
            row = measure_one(job, strategy, rep, index, scratch)
            journal.append(row)
            now = time.monotonic()
            if not row["ok"] or done == len(todo) or now - last_report > 5:
                last_report = now
                status = "ok" if row["ok"] else f"FAILED ({row['failure']})"
                say(f"{label} {len(order) - len(todo) + done}/{len(order)} {strategy} "
                    f"rep {rep}: {row['wall_s']:.3f} s {status}")
        rows = list(journal.runs.values())
        write_runs(rows, out)
        shutil.rmtree(scratch, ignore_errors=True)
    say(f"{label} {failure_summary(rows)}")
    return rows


def main(argv: list[str] | None = None) -> int:
    """Command-line entry used by the workflow's measure rule."""
    parser = argparse.ArgumentParser(prog="python -m affinity.measure", description=__doc__)
    parser.add_argument("--spec", required=True, help="the job as JSON (see affinity.measure.Job)")
    parser.add_argument("--placements", nargs="+", type=Path, required=True)
    parser.add_argument("--journal", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--lock", default=os.environ.get("PINBENCH_LOCK", DEFAULT_LOCK))
    parser.add_argument("--log", type=Path, help="also append progress lines to this file")
    args = parser.parse_args(argv)
    spec = json.loads(args.spec)
    placements = {}
    for path in args.placements:
        record = json.loads(path.read_text())
        placements[record["strategy"]] = record
    spec["placements"] = {s: placements[s] for s in spec.pop("strategies")}
    if args.log:
        args.log.parent.mkdir(parents=True, exist_ok=True)
    log = args.log.open("a") if args.log else None

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)
        if log:
            log.write(line + "\n")
            log.flush()

    run_job(Job(**spec), args.journal, args.out, args.lock, say)
    return 0


if __name__ == "__main__":
    sys.exit(main())
