"""``pinbench store add RESULTS_DIR | list [--json]``: campaigns' results kept in a SQLite
store, to compare them later (:mod:`pinbench.results.store`, ``pinbench compare``)."""
from __future__ import annotations

import argparse
import sqlite3
from pathlib import Path

from pinbench.commands.conventions import bad_input, json_option, print_json, verbosity_options
from pinbench.errors import InputError
from pinbench.results.store import DEFAULT_STORE, Store, from_results


def arguments(parser: argparse.ArgumentParser, name: str) -> None:
    """``add RESULTS_DIR`` and ``list``, each with ``--store``."""
    commands = parser.add_subparsers(dest="action", required=True, metavar="{add,list}",
                                     parser_class=type(parser))
    add = commands.add_parser("add", help="store a campaign's results folder; print its id")
    add.add_argument("results", type=Path, help="a campaign's results folder (results/NAME)")
    listing = commands.add_parser("list", help="every stored campaign")
    json_option(listing)
    for sub in (add, listing):
        verbosity_options(sub, argparse.SUPPRESS)
        sub.add_argument("--store", type=Path, default=DEFAULT_STORE,
                         help=f"the store's file (default {DEFAULT_STORE})")


def run(args: argparse.Namespace) -> int:
    """Add a campaign (print its id) or list the stored ones."""
    store = Store(args.store)
    try:
        with bad_input():
            if args.action == "add":
                ident, new = store.add(from_results(args.results))
                print(f"{ident}" + ("" if new else f" (stored before, unchanged: {args.results})"))
                return 0
            rows = store.listing()
    except sqlite3.Error as exc:
        raise InputError(f"{args.store}: {exc}") from exc
    if args.json:
        print_json(rows)
        return 0
    for row in rows:
        commit = (row["commit"] or "no commit")[:12]
        print(f"{row['id']:>4}  {row['name']:<20} {row['added_at']}  pinbench "
              f"{row['version'] or '?'} ({commit})  {row['machines'] or '-'}  {row['source']}")
    return 0
