"""The version of every file pinbench writes and reads back, and the one way to read older ones.

Each such file says which version of its kind it is (its *format*); a writer stamps the
current one (:func:`stamp`), a reader takes the file's content through :func:`read`, which
applies the migrations ``migrate_<kind>_<v>`` (version v to v + 1) in turn, so that the rest
of pinbench sees the current version only. A file without a version was written before
versions existed: it is version 1. A version newer than this pinbench knows stops the reader
with one line (:class:`FormatError`).

The kinds (paths: :mod:`pinbench.results.layout`), and where each keeps its version:

- ``placement``: ``<machine>/placements/<bench>/t<N>/<strategy>.json``, a ``"format"`` key;
- ``journal``: ``<machine>/journal/<bench>/t<N>.jsonl`` and the explained runs'
  ``<machine>/explained/<bench>/t<N>.journal.jsonl``, ``"format"`` in the header (first line);
- ``runs``: ``<machine>/runs/<bench>/t<N>.csv`` and ``runs.csv``, a ``format`` column;
- ``explained``: ``<machine>/explained/<bench>/t<N>.jsonl``, ``"format"`` in each row;
- ``stats``: ``stats/stats.json``, a ``"format"`` key;
- ``sidecar``: an affinity matrix's ``<machine>/affinity/<bench>/t<N>.json``, a ``"format"``
  key (the tracers write it without; the trace step completes it and adds the version);
- ``environment``: ``<machine>/environment.json``, a ``"format"`` key;
- ``account``: a measuring process's ``timings/measure/<machine>/<bench>/t<N>.json``, a
  ``"format"`` key;
- ``note``: ``<journal>.stale-<time>.why`` (why a journal was set aside), a ``"format"`` key.

A runs table stays plain CSV, read by R and pandas as it is: its version is one more column,
``format``, the last, holding the version on every row. A comment or a second header line
would break those readers; a column does not, and it survives what users do with tables
(concatenating campaigns keeps each row's version). The explained runs are JSON lines
without a header, so each row carries its own. The affinity matrix beside a sidecar stays the
plain CSV other tools read. The analysis' tables (``stats/*.csv``) and the report are not
read back as state but made again from the runs: the analyse rule takes the ``stats``
version as a parameter, so Snakemake analyses again when it changes.

Version 3 of ``stats`` is the analysis with report-wide decisions (:func:`migrate_stats_2`),
version 4 the one that checks the printed times (:func:`migrate_stats_3`), version 5 the one
with three-way outcomes and a choice of report-wide decision (:func:`migrate_stats_4`).
Version 3 of ``placement`` no longer stores the lowest object each pair of threads shares
(:func:`migrate_placement_2`): it is derived from the topology when needed; it also adds the
runtime policies' ``policy`` and ``places_by_runtime``, which an older file never has.
Version 3 of ``runs`` adds the column ``output_bytes`` (:func:`migrate_runs_2`), version 4
the column ``counters`` (:func:`migrate_runs_3`).
Version 2 adds the version: a version 1 file reads as it is, but for the placement files
made before placements had an objective (:func:`migrate_placement_1`) and the journals,
whose header is matched against the job that resumes them
(:func:`pinbench.measure.legacy.migrate_journal_1`, through :func:`read`'s ``steps``).
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

from pinbench.errors import PinbenchError

#: The key (and column) that holds a file's version.
KEY = "format"

#: The current version of each kind, and what a file of that kind is, in words.
CURRENT = {"placement": 3, "journal": 2, "runs": 4, "explained": 2, "stats": 5, "sidecar": 2,
           "environment": 2, "account": 2, "note": 2}
WHAT = {"placement": "placement file", "journal": "journal", "runs": "runs table",
        "explained": "explained runs table", "stats": "stats.json",
        "sidecar": "affinity matrix sidecar", "environment": "environment.json",
        "account": "measuring process's account", "note": "set-aside journal's note"}


class FormatError(PinbenchError, ValueError):
    """A file of a version this pinbench cannot read (one line: which file, which version)."""


def stamp(kind: str, content: dict) -> dict:
    """``content`` with the current version of ``kind``, as it is written."""
    return {KEY: CURRENT[kind], **content}


def version(kind: str, data: dict, source) -> int:
    """The version of a file's ``data`` (1 without one; a CSV row's is text). FormatError for
    a version this pinbench does not know."""
    found = data.get(KEY)
    if found is None or found == "":
        return 1
    try:
        number = int(found)
    except (TypeError, ValueError):
        number = 0
    if isinstance(found, bool) or number < 1 or str(number) != str(found):
        raise FormatError(f"{source}: format {found!r} is no version of a {WHAT[kind]}")
    if number > CURRENT[kind]:
        raise FormatError(f"{source}: a {WHAT[kind]} of format {number}, newer than this "
                          f"pinbench reads (up to {CURRENT[kind]}): read it with a newer pinbench")
    return number


def read(kind: str, data, source, steps: dict[int, Callable[[dict], dict]] | None = None
         ) -> dict:
    """The content of a file of ``kind`` (``data``: its JSON object, or one row of a table) in
    the current version, without the version key: migrated step by step from its own.
    ``steps``: migrations that replace those of :data:`MIGRATIONS` (by the version they start
    from), for a reader that knows more than the file (the job that opens a journal:
    :func:`pinbench.measure.legacy.read_header`). FormatError for a version this pinbench
    does not know, or no JSON object."""
    if not isinstance(data, dict):
        raise FormatError(f"{source}: not a {WHAT[kind]} (no JSON object)")
    found = version(kind, data, source)
    content = {name: value for name, value in data.items() if name != KEY}
    migrations = MIGRATIONS[kind] | (steps or {})
    for step in range(found, CURRENT[kind]):
        content = migrations[step](content)
    return content


def digest(value) -> str:
    """SHA-256 of a JSON value, keys sorted: how journal fingerprints are made."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def migrate_unchanged_1(content: dict) -> dict:
    """Version 1 to 2 of every kind: the content did not change (a journal's header read
    for what it holds; the job that opens one matches it against itself:
    :func:`pinbench.measure.legacy.migrate_journal_1`)."""
    return content


def migrate_placement_1(content: dict) -> dict:
    """Version 1 to 2 of a placement file: the files written before placements had an
    objective have no ``J`` (None: unknown)."""
    return {"J": None} | content


def migrate_placement_2(content: dict) -> dict:
    """Version 2 to 3 of a placement file: the thread pairs' lowest shared objects
    (``shared_level``, N x N) are left out; they follow from the topology
    (:func:`pinbench.results.placements.shared_levels`). The file itself is not rewritten,
    so the workflow does not see it changed."""
    return {name: value for name, value in content.items() if name != "shared_level"}


def migrate_runs_2(content: dict) -> dict:
    """Version 2 to 3 of a runs table's row: the bytes each run wrote were not counted (the
    column ``output_bytes``, absent, reads as None)."""
    return content


def migrate_runs_3(content: dict) -> dict:
    """Version 3 to 4 of a runs table's row: no counters were kept (the column ``counters``,
    absent, reads as "")."""
    return content


def migrate_stats_2(content: dict) -> dict:
    """Version 2 to 3 of ``stats.json``: none. Version 3 is the analysis of issue 26
    (report-wide decisions, another test per comparison, the study's tables' number of
    benchmarks needed); an older analysis is made again from the runs, not converted."""
    raise FormatError("stats.json was written by an older analysis (format 2): "
                      "pinbench run analyses the runs again")


def migrate_stats_3(content: dict) -> dict:
    """Version 3 to 4 of ``stats.json``: none. Version 4 is the analysis that checks the
    printed times against the runs' wall times (issue 35: a cell whose printed times are none
    of its runs' gets no verdict); an older analysis is made again from the runs."""
    raise FormatError("stats.json was written by an older analysis (format 3): "
                      "pinbench run analyses the runs again")


def migrate_stats_4(content: dict) -> dict:
    """Version 4 to 5 of ``stats.json``: none. Version 5 is the analysis of issue 37 (two-sided
    tests with a faster / slower / none outcome, the report-wide decision of the campaign's
    ``report_decision``, what too few runs cannot decide); an older analysis is made again
    from the runs."""
    raise FormatError("stats.json was written by an older analysis (format 4): "
                      "pinbench run analyses the runs again")


#: Per kind, the migration from each older version to the next.
MIGRATIONS: dict[str, dict[int, Callable[..., dict]]] = {
    kind: {1: migrate_unchanged_1} for kind in CURRENT
} | {"placement": {1: migrate_placement_1, 2: migrate_placement_2},
     "stats": {1: migrate_unchanged_1, 2: migrate_stats_2, 3: migrate_stats_3,
              4: migrate_stats_4},
     "runs": {1: migrate_unchanged_1, 2: migrate_runs_2, 3: migrate_runs_3}}
