"""An append-only journal of finished runs, so a killed campaign loses nothing.

One JSON object per line. The first line is a header holding the journal's version
(``format``: :mod:`pinbench.results.formats`), a fingerprint of everything that defines
the measurement (binary, command, environment, placements, order), and what the caller adds
(how the runs are timed); each later line is one finished run, written and made durable
before the next run starts (through a descriptor kept open: one ``pwrite`` and one
``fdatasync`` per run).

The runs' lines go into zero bytes written ahead: while a job runs, the file ends in
up to :data:`CHUNK` bytes of NUL padding, written and made durable once per chunk (with
the run whose line starts it), so that each other run's line overwrites bytes already
on disk in place and the file size does not change. ``fdatasync`` then need not write the
inode: an append changes the size, which it must write too (on this machine's ext4 without
a journal, a second synchronous disk write per run; on ext4 with a journal, a journal
commit), while the modification time alone is not needed to read the data. Here that saves
the inode's write whenever the modification time did not change either (no clock tick
between two runs, no fine-grained stamp: see ``launcher.c``'s ``tail``): 2.3 device writes
per run, the flush included, instead of 3.0-3.15, and 0.13-0.20 ms a run instead of
0.16-0.28 (10th percentile-median, ``perf/launcher_overhead.py``). The padding is
written zeros, not ``fallocate``'d space (unwritten extents, whose conversion on the first
write is metadata again). JSON lines never hold a NUL, so the data ends at the first NUL:
every reader of a journal reads it through :mod:`pinbench.results.journals`, which stops
there. Closing the journal cuts the padding off, so a finished job's journal is plain JSON
lines; a killed job's keeps it until the job is opened again.

``fdatasync`` rather than ``fsync``: what must survive is the line (and, for the run that
writes a new chunk, the file size that reaches it), not the modification time. A line
cut short by a kill is dropped on the next open, as is everything after the data's end (the
padding, and whatever a torn write left in it), before new lines are written there. A
journal whose fingerprint differs from the job's belongs to another measurement:
it is set aside (renamed to ``<name>.stale-<time>``), never mixed in, with a note
of what changed beside it (``<name>.stale-<time>.why``: the parts of the
fingerprint that differ, and in each the settings that differ, when both headers hold
them: :func:`described`, :func:`what_changed`).
"""
from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

from pinbench.results import formats, stale
from pinbench.results.journals import whole_lines

#: Bytes of zeros written ahead of the runs' lines at a time (about 90 runs' lines).
CHUNK = 64 << 10


def set_aside(path: Path, runs: int, changed: str, **note) -> Path:
    """Rename a journal ``<name>.stale-<time>`` (never over another one:
    :mod:`pinbench.results.stale`) with a note of why beside it (``.why``: ``runs``,
    ``changed``, ``set_aside`` and ``note``'s fields); return the new path. Reports list such
    journals (:meth:`Layout.set_aside_journals`)."""
    target = stale.new_name(path)
    os.replace(path, target)
    stale.note(target).write_text(json.dumps(formats.stamp(
        "note", {"runs": runs, "changed": changed, "set_aside": time.time()} | note)) + "\n")
    return target


def described(parts: dict[str, str], fields: dict[str, dict]) -> dict:
    """What a header keeps of the measurement, to say what changed when the journal is set
    aside: the hash of each part of the fingerprint (``parts``), and of each setting a part
    is made of (``fields``: part -> setting -> value)."""
    return {"parts": parts,
            "fields": {part: {name: formats.digest(value) for name, value in settings.items()}
                       for part, settings in fields.items()}}


def what_changed(old: dict, new: dict) -> str:
    """In words, what differs between the measurement of a journal's header ``old`` and that
    of a job's header ``new`` (:func:`described`): each part that differs, with the settings
    in it that differ when both headers name them.

    >>> what_changed({"parts": {"binary": "a", "command": "b"},
    ...               "fields": {"command": {"env": "e", "validate": "v"}}},
    ...              {"parts": {"binary": "a", "command": "c"},
    ...               "fields": {"command": {"env": "e", "validate": "w"}}})
    'command (validate) changed'
    """
    before, after = old.get("parts"), new.get("parts")
    if not (before and after):
        return "written by an older pinbench with another measurement"
    changed = []
    for part in {**before, **after}:
        if before.get(part) == after.get(part):
            continue
        was = old.get("fields", {}).get(part, {})
        now = new.get("fields", {}).get(part, {})
        names = [name for name in {**was, **now} if was.get(name) != now.get(name)] \
            if was and now else []
        changed.append(f"{part} ({', '.join(names)})" if names else part)
    return ", ".join(changed) + " changed"


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Journal:
    """Finished runs of one measurement job, keyed by (strategy, repetition)."""

    def __init__(self, path: Path, fingerprint: str, header: dict | None = None,
                 migrate: Callable[[dict], dict] | None = None):
        """``header``: more fields for the header of a new journal (:attr:`header` is the
        header the journal has, in the current version); ``migrate``: reads an existing
        journal's header in the current version, matched against the measurement
        (:func:`pinbench.results.formats.migrate_journal_1`; default: as it is written).
        The journal resumes when that header's fingerprint is ``fingerprint``."""
        self.path = path
        self.fingerprint = fingerprint
        self.runs: dict[tuple[str, int], dict] = {}
        self.set_aside: Path | None = None  #: where a stale journal went, if any
        self.set_aside_runs = 0  #: how many finished runs it held
        self.changed = ""  #: what differs from the stale journal, in words
        self.header: dict = {}
        self._fd = -1
        self._open(header or {}, migrate or (
            lambda found: formats.read("journal", found, self.path)))

    def _open(self, extra: dict, migrate: Callable[[dict], dict]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lines = self._read_complete_lines()
        self.header = migrate(json.loads(lines[0])) if lines else {}
        if lines and self.header.get("fingerprint") != self.fingerprint:
            self._set_aside(what_changed(self.header, extra), len(lines) - 1)
            lines = []
        if not lines:
            self.header = {"fingerprint": self.fingerprint, "created": time.time(), **extra}
            with self.path.open("w") as handle:
                handle.write(json.dumps(formats.stamp("journal", self.header)) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            _fsync_dir(self.path.parent)
        for line in lines[1:]:
            run = json.loads(line)
            self.runs[(run["strategy"], run["repetition"])] = run
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CLOEXEC)
        # the file is now exactly its whole lines: the next line goes at its end, and the
        # first append writes the padding after it
        self._end = self._capacity = os.fstat(self._fd).st_size

    def _set_aside(self, changed: str, runs: int) -> None:
        self.changed = changed
        self.set_aside_runs = runs
        self.set_aside = set_aside(self.path, runs, self.changed)

    def _read_complete_lines(self) -> list[str]:
        """The journal's whole lines; what follows them (the padding a killed job left, a
        torn last line) is cut off the file, so new lines go right after them."""
        if not self.path.exists():
            return []
        data = self.path.read_bytes()
        end, lines = whole_lines(data)
        if end < len(data):
            with self.path.open("r+b") as handle:
                handle.truncate(end)
                os.fsync(handle.fileno())
        return lines

    def append(self, run: dict) -> None:
        """Record one finished run durably (written in place of padding, then
        ``fdatasync``) before anything else happens."""
        data = (json.dumps(run, allow_nan=False) + "\n").encode()
        end, capacity = self._end + len(data), self._capacity
        if end > capacity:  # a new chunk: this line, then zeros up to its end
            capacity = (end + CHUNK) // CHUNK * CHUNK
            data += bytes(capacity - end)
        try:
            self._write(data, self._end)
            os.fdatasync(self._fd)
        except OSError as exc:  # a full disk: say which file
            raise OSError(exc.errno, exc.strerror, str(self.path)) from None
        self._end, self._capacity = end, capacity
        self.runs[(run["strategy"], run["repetition"])] = run

    def _write(self, data: bytes, at: int) -> None:
        view = memoryview(data)
        while view:
            written = os.pwrite(self._fd, view, at)
            view, at = view[written:], at + written

    def close(self) -> None:
        """Cut the padding off (every appended run is already on disk) and close the
        journal's descriptor."""
        if self._fd < 0:
            return
        try:
            if self._capacity > self._end:
                os.ftruncate(self._fd, self._end)
                os.fdatasync(self._fd)
        finally:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> "Journal":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
