"""How a file set aside is named: ``<name>.stale-<time>`` beside it, with a note of why,
``<name>.stale-<time>.why``.

A journal of another measurement (:mod:`pinbench.measure.journal`), or of a job measured
again on request (:mod:`pinbench.measure.remeasure`), is renamed so, never deleted; the kept
outputs of its job move aside with the same stamp (:mod:`pinbench.measure.outputs`); the
reports list what was set aside (:meth:`pinbench.results.layout.Layout.set_aside_journals`).
"""
from __future__ import annotations

import time
from pathlib import Path

MARK = ".stale-"


def name(path: Path, stamp: str) -> Path:
    """Where ``path`` goes aside with ``stamp``."""
    return path.with_name(f"{path.name}{MARK}{stamp}")


def new_name(path: Path) -> Path:
    """Where ``path`` goes aside now: stamped with the time (``20260101T120000``), never over
    another one set aside."""
    stamp = time.strftime("%Y%m%dT%H%M%S")
    target, k = name(path, stamp), 1
    while target.exists():
        k += 1
        target = name(path, f"{stamp}-{k}")
    return target


def stamp(target: Path) -> str:
    """The stamp of a file set aside.

    >>> stamp(Path("t2.jsonl.stale-20260101T120000-2"))
    '20260101T120000-2'
    """
    return target.name.rpartition(MARK)[2]


def note(target: Path) -> Path:
    """The note beside a file set aside."""
    return target.with_name(target.name + ".why")


def pattern(names: str) -> str:
    """A glob of the files set aside from the files ``names`` (a glob too), not their notes.

    >>> pattern("t*.jsonl")
    't*.jsonl.stale-*[0-9]'
    """
    return f"{names}{MARK}*[0-9]"
