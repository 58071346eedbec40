"""A journal on disk read back: its whole lines and the finished runs it holds.

The measuring process writes journals (:mod:`pinbench.measure.journal`: one JSON object per
line, the header first, ending in NUL padding while a job runs); the progress lines, the set
aside journals' notes (:meth:`pinbench.results.layout.Layout.set_aside_journals`) and
``pinbench remeasure`` read them. JSON lines never hold a NUL, so the data ends at the first
NUL, and a line cut short by a kill is not a run: every reader of a journal on disk reads it
through :func:`read_lines` (or :func:`finished_runs`), which stop there.
"""
from __future__ import annotations

from pathlib import Path


def whole_lines(data: bytes) -> tuple[int, list[str]]:
    """Where a journal's whole lines end (before the padding, the first NUL, and before a
    line cut short), and those lines, blank ones left out.

    >>> whole_lines(b'{"h": 1}\\n{"r": 1}\\n{"r": 2\\0\\0')
    (18, ['{"h": 1}', '{"r": 1}'])
    """
    padding = data.find(b"\0")
    end = data.rfind(b"\n", 0, len(data) if padding < 0 else padding) + 1
    return end, [line for line in data[:end].decode().splitlines() if line.strip()]


def read_lines(path: Path) -> list[str]:
    """A journal's whole lines (the header first), without the padding or a torn last line;
    [] without a journal. Every reader of a journal on disk reads it through this."""
    try:
        return whole_lines(Path(path).read_bytes())[1]
    except FileNotFoundError:
        return []


def finished_runs(path: Path) -> int:
    """The finished runs a journal on disk holds (its whole lines less the header)."""
    return max(0, len(read_lines(path)) - 1)
