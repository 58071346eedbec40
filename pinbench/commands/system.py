"""``pinbench system [--window SECONDS] [--json]``: is this machine quiet and stable enough to
measure? (:mod:`pinbench.measure.system`)"""
from __future__ import annotations

import argparse

from pinbench.commands.conventions import json_option, print_json
from pinbench.errors import UsageError
from pinbench.measure.system import as_dicts, format_checks, system_checks


def arguments(parser: argparse.ArgumentParser, name: str) -> None:
    """The window of the CPU use check; ``--json``."""
    parser.epilog = "exit status: 0 every check ok, 1 one of them is a problem"
    parser.add_argument("--window", type=float, default=0.5,
                        help="seconds over which other processes' CPU use is measured")
    json_option(parser)


def run(args: argparse.Namespace) -> int:
    """Print the checks (``--json``: ``{"ok": ..., "checks": [...]}``); 1 when one of them
    is a problem."""
    if not args.window >= 0:
        raise UsageError(f"--window must be at least 0, not {args.window}")
    checks = system_checks(args.window)
    ok = all(check.ok for check in checks)
    if args.json:
        print_json({"ok": ok, "checks": as_dicts(checks)})
    else:
        print(format_checks(checks), end="")
    return 0 if ok else 1
