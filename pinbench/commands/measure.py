"""``python -m pinbench.measure``: the measuring process's arguments (the measure rule starts
it on the measured machine; :mod:`pinbench.measure.cli` measures).

    python -m pinbench.measure --spec JSON --placements FILE... --journal FILE --out FILE.csv
        [--lock FILE] [--log FILE] [--outputs DIR] [--explained JOURNAL TABLE]
        [--campaign-root DIR --cells M/B/N...] [--account FILE.json]

It imports what measuring needs and nothing more (tests/test_architecture.py). An argument
it cannot use is one line and status 2; a launcher ``pinbench setup`` has not built, one line
and status 1 (the statuses of a stop or a full disk: :mod:`pinbench.measure.cli`).
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from pinbench.commands.conventions import Parser
from pinbench.errors import UsageError
from pinbench.measure.cli import ME, measure
from pinbench.measure.lock import DEFAULT_LOCK
from pinbench.native import NotBuilt


def arguments(parser: argparse.ArgumentParser) -> None:
    """The job's settings, placements and files."""
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
    parser.add_argument("--campaign-root", help="the campaign's results folder: the runs start "
                        "in the job's scratch folder there unless the benchmark names a cwd; "
                        "with --cells, the progress lines estimate the time left of the campaign")
    parser.add_argument("--cells", nargs="*", default=[], metavar="MACHINE/BENCH/N",
                        help="every measurement job of the campaign")
    parser.add_argument("--account", type=Path, help="write where this process's time went "
                        "(JSON: start-up, lock, runs, waits; the campaign's time by stage)")


def main(argv: list[str] | None = None) -> int:
    """Run (or resume) one measurement job and write its runs table; the exit status."""
    parser = Parser(prog=ME, description="Run (or resume) one measurement job and write its "
                                         "runs table.")
    arguments(parser)
    try:
        return measure(parser.parse_args(argv))
    except UsageError as exc:
        print(f"{ME}: error: {exc}", file=sys.stderr)
        return 2
    except NotBuilt as exc:
        print(f"{ME}: error: {exc}", file=sys.stderr)
        return 1
