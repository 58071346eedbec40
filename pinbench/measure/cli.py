"""``python -m pinbench.measure``: the measuring process of one job, started by the measure rule.

    python -m pinbench.measure --spec JSON --placements FILE... --journal FILE --out FILE.csv
        [--lock FILE] [--log FILE] [--outputs DIR] [--explained JOURNAL TABLE]
        [--campaign-root DIR --cells M/B/N...] [--account FILE.json]

The spec is the job's settings (:class:`pinbench.measure.settings.JobSettings`, as JSON);
the job (:class:`pinbench.measure.job.Job`) adds the placements, read from the placement
files. A file of a version this pinbench cannot read stops it with one line (status 2).
This process imports only what measuring needs: no placement algorithm, no statistics.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from pinbench.measure.job import Job, new_account, run_job
from pinbench.measure.lock import DEFAULT_LOCK
from pinbench.measure.progress import Campaign, parse_cell
from pinbench.measure.settings import JobSettings
from pinbench.measure.system import process_age_s
from pinbench.results import formats
from pinbench.results.placements import read_placement


def main(argv: list[str] | None = None) -> int:
    """Run (or resume) one measurement job and write its runs table."""
    startup_s = process_age_s()
    parser = argparse.ArgumentParser(prog="python -m pinbench.measure", description=main.__doc__)
    parser.add_argument("--spec", required=True,
                        help="the job's settings as JSON "
                        "(see pinbench.measure.settings.JobSettings)")
    parser.add_argument("--placements", nargs="+", type=Path, required=True)
    parser.add_argument("--journal", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--lock", default=os.environ.get("PINBENCH_LOCK", DEFAULT_LOCK))
    parser.add_argument("--log", type=Path, help="also append progress lines to this file")
    parser.add_argument("--outputs", type=Path,
                        help="keep each run's output (compressed) in this folder")
    parser.add_argument("--explained", nargs=2, type=Path, metavar=("JOURNAL", "TABLE"),
                        help="journal and table of the explained runs (spec's explain)")
    parser.add_argument("--campaign-root", help="the campaign's results folder; with --cells, "
                        "the progress lines estimate the time left of the campaign")
    parser.add_argument("--cells", nargs="*", default=[], metavar="MACHINE/BENCH/N",
                        help="every measurement job of the campaign")
    parser.add_argument("--account", type=Path, help="write where this process's time went "
                        "(JSON: start-up, lock, runs, waits; the campaign's time by stage)")
    args = parser.parse_args(argv)
    if args.log:
        args.log.parent.mkdir(parents=True, exist_ok=True)
    log = args.log.open("a") if args.log else None

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)
        if log:
            log.write(line + "\n")
            log.flush()

    campaign = Campaign(args.campaign_root, [parse_cell(c) for c in args.cells]) \
        if args.campaign_root else None
    account = {"startup_s": startup_s, **new_account()}
    try:
        job = Job.of(JobSettings.from_json(json.loads(args.spec)),
                     map(read_placement, args.placements))
        run_job(job, args.journal, args.out, args.lock, say, args.outputs,
                tuple(args.explained) if args.explained else None, campaign, account)
    except formats.FormatError as exc:
        say(f"python -m pinbench.measure: error: {exc}")
        return 2
    if args.account:
        account["process_s"] = process_age_s()
        args.account.parent.mkdir(parents=True, exist_ok=True)
        partial = args.account.with_name(args.account.name + ".part")
        partial.write_text(json.dumps(formats.stamp("account", account), sort_keys=True)
                           + "\n")
        os.replace(partial, args.account)
    return 0
