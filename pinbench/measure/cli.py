"""The measuring process of one job, started by the measure rule as ``python -m pinbench.measure``
(its arguments: :mod:`pinbench.commands.measure`).

    python -m pinbench.measure --spec JSON --placements FILE... --journal FILE --out FILE.csv
        [--lock FILE] [--log FILE] [--outputs DIR] [--explained JOURNAL TABLE]
        [--campaign-root DIR --cells M/B/N...] [--account FILE.json]

The spec is the job's settings (:class:`pinbench.measure.settings.JobSettings`, as JSON);
the job (:class:`pinbench.measure.job.Job`) adds the placements, read from the placement
files. The runs start in the job's scratch folder under ``--campaign-root``
(:meth:`pinbench.results.layout.Layout.scratch`), unless the benchmark names a ``cwd``. A
file of a version this pinbench cannot read stops it with one line (status 2).
This process imports only what measuring needs: no placement algorithm, no statistics.

Stopping, each in one line: SIGINT, SIGTERM or SIGHUP, or the workflow's process gone
(:mod:`pinbench.measure.interrupt`), end the run under way unjournaled (status 128 + the
signal, 1 for the workflow); a full disk (or another error writing the results) ends the
job with what is journaled kept (status 1), and a job does not start on a file system with
less than :data:`MIN_FREE_BYTES` free. The next call resumes from the journal.
"""
from __future__ import annotations

import argparse
import contextlib
import errno
import json
import os
import sys
from pathlib import Path

from pinbench import events
from pinbench.events import Told
from pinbench.measure import interrupt
from pinbench.measure.job import Job, new_account, run_job
from pinbench.measure.progress import Campaign, parse_cell
from pinbench.measure.settings import JobSettings
from pinbench.measure.system import process_age_s
from pinbench.results import formats
from pinbench.results.layout import Layout
from pinbench.results.placements import read_placement


ME = "python -m pinbench.measure"
#: The free space a job needs on its results' file system to start (its journal, kept outputs
#: and tables: about 1 KiB per run, up to 128 KiB per run of kept output).
MIN_FREE_BYTES = 64 << 20
#: Write errors that end a job in one line: the file system is full, over quota, or failing.
WRITE_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS)


def free_bytes(path: Path) -> int:
    """The bytes an unprivileged user may still write on the file system of ``path`` (or of
    its nearest existing parent)."""
    while not path.exists():
        path = path.parent
    found = os.statvfs(path)
    return found.f_bavail * found.f_frsize


def measure(args: argparse.Namespace) -> int:
    """Run (or resume) the measurement job of ``args`` (:mod:`pinbench.commands.measure`) and
    write its runs table; the process's exit status."""
    startup_s = process_age_s()
    interrupt.install()  # done already by ``python -m pinbench.measure``, before its imports
    free = free_bytes(args.journal.parent)
    if free < MIN_FREE_BYTES:
        print(f"{ME}: error: only {free >> 20} MiB free on the file system of "
              f"{args.journal.parent} (a job needs {MIN_FREE_BYTES >> 20} MiB to start): "
              "free some space, then run again", file=sys.stderr)
        return 1
    log = None

    def say(line: str) -> None:
        events.tell(line)  # to the call's display, or printed (pinbench.events)
        if log:
            with contextlib.suppress(OSError):  # a full disk is said once, by main
                log.write(line + "\n")
                log.flush()

    try:
        interrupt.started()
        if args.log:
            args.log.parent.mkdir(parents=True, exist_ok=True)
            log = args.log.open("a")
        _measure(args, say, startup_s)
    except formats.FormatError as exc:
        say(Told(f"{ME}: error: {exc}", "error"))
        return 2
    except interrupt.Interrupted as stop:
        say(Told(f"{ME}: stopped ({stop}): the run under way is not journaled, the finished "
                 "ones are; the next call resumes", "error"))
        return 128 + stop.signum if stop.signum else 1
    except OSError as exc:
        if exc.errno not in WRITE_ERRORS:
            raise
        say(Told(f"{ME}: error: {exc.strerror} writing {exc.filename or 'the results'}: "
                 "the finished runs are journaled; free some space (or fix the file system), "
                 "then run again", "error"))
        return 1
    return 0


def _measure(args: argparse.Namespace, say, startup_s: float | None) -> None:
    """The job of :func:`main`'s arguments, and its account."""
    campaign = Campaign(args.campaign_root, [parse_cell(c) for c in args.cells]) \
        if args.campaign_root else None
    account = {"startup_s": startup_s, **new_account()}
    settings = JobSettings.from_json(json.loads(args.spec))
    scratch = Layout(args.campaign_root).scratch(settings.machine, settings.benchmark,
                                                  settings.threads) if args.campaign_root else None
    job = Job.of(settings, map(read_placement, args.placements),
                 scratch and os.path.abspath(scratch))
    run_job(job, args.journal, args.out, args.lock, say, args.outputs,
            tuple(args.explained) if args.explained else None, campaign, account)
    if args.account:
        account["process_s"] = process_age_s()
        args.account.parent.mkdir(parents=True, exist_ok=True)
        partial = args.account.with_name(args.account.name + ".part")
        partial.write_text(json.dumps(formats.stamp("account", account), sort_keys=True)
                           + "\n")
        os.replace(partial, args.account)
