"""An append-only journal of finished runs, so a killed campaign loses nothing.

One JSON object per line. The first line is a header holding a fingerprint
of everything that defines the measurement (binary, command, environment,
placements, order), and what the caller adds (how the runs are timed); each later
line is one finished run, written and made durable before the next run starts (through
a descriptor kept open: one ``write`` and one ``fdatasync`` per run). ``fdatasync``
rather than ``fsync``: what must survive is the line and the file size that reaches it,
not the modification time; for an append both write the same (on this machine's ext4,
the data block, then the inode for the size: 0.15-0.25 ms, the largest part of what a
run costs besides the program). A line cut short by a kill is dropped on the next open. A
journal whose fingerprint differs from the job's belongs to another measurement:
it is set aside (renamed to ``<name>.stale-<time>``), never mixed in, with a note
of what changed beside it (``<name>.stale-<time>.why``: the parts of the
fingerprint that differ, when both headers hold them as ``parts``).
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path


def set_aside(path: Path, runs: int, changed: str, **note) -> Path:
    """Rename a journal ``<name>.stale-<time>`` (never over another one) with a note of why
    beside it (``.why``: ``runs``, ``changed``, ``set_aside`` and ``note``'s fields); return
    the new path. Reports list such journals (:meth:`Layout.set_aside_journals`)."""
    stamp = time.strftime("%Y%m%dT%H%M%S")
    target, k = path.with_name(f"{path.name}.stale-{stamp}"), 1
    while target.exists():
        k += 1
        target = path.with_name(f"{path.name}.stale-{stamp}-{k}")
    os.replace(path, target)
    why = target.with_name(target.name + ".why")
    why.write_text(json.dumps({"runs": runs, "changed": changed, "set_aside": time.time()}
                              | note) + "\n")
    return target


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Journal:
    """Finished runs of one measurement job, keyed by (strategy, repetition)."""

    def __init__(self, path: Path, fingerprint: str, also: tuple[str, ...] = (),
                 header: dict | None = None):
        """``also``: other fingerprints an existing journal may have and still be resumed
        (:attr:`fingerprint` is then the one it has); ``header``: more fields for the
        header of a new journal (:attr:`header` is the header the journal has)."""
        self.path = path
        self.fingerprint = fingerprint
        self.runs: dict[tuple[str, int], dict] = {}
        self.set_aside: Path | None = None  #: where a stale journal went, if any
        self.set_aside_runs = 0  #: how many finished runs it held
        self.changed = ""  #: what differs from the stale journal, in words
        self.header: dict = {}
        self._file = None
        self._open(also, header or {})

    def _open(self, also: tuple[str, ...], extra: dict) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lines = self._read_complete_lines()
        self.header = json.loads(lines[0]) if lines else {}
        found = self.header.get("fingerprint")
        if found in also:
            self.fingerprint = found
        if lines and found != self.fingerprint:
            self._set_aside(self.header.get("parts", {}), extra.get("parts", {}), len(lines) - 1)
            lines = []
        if not lines:
            self.header = {"fingerprint": self.fingerprint, "created": time.time(), **extra}
            with self.path.open("w") as handle:
                handle.write(json.dumps(self.header) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            _fsync_dir(self.path.parent)
        for line in lines[1:]:
            run = json.loads(line)
            self.runs[(run["strategy"], run["repetition"])] = run
        self._file = open(self.path, "ab", buffering=0)  # unbuffered: close() closes it

    def _set_aside(self, old: dict, new: dict, runs: int) -> None:
        if old and new:
            changed = [name for name in {**old, **new} if old.get(name) != new.get(name)]
            self.changed = ", ".join(changed) + " changed"
        else:
            self.changed = "written by an older pinbench with another measurement"
        self.set_aside_runs = runs
        self.set_aside = set_aside(self.path, runs, self.changed)

    def _read_complete_lines(self) -> list[str]:
        """The journal's whole lines; a torn last line is cut off the file."""
        if not self.path.exists():
            return []
        data = self.path.read_bytes()
        end = data.rfind(b"\n") + 1
        if end < len(data):
            with self.path.open("r+b") as handle:
                handle.truncate(end)
                os.fsync(handle.fileno())
        lines = data[:end].decode().splitlines()
        return [line for line in lines if line.strip()]

    def append(self, run: dict) -> None:
        """Record one finished run durably (written, then ``fdatasync``) before anything else
        happens."""
        data = (json.dumps(run) + "\n").encode()
        written = 0
        while written < len(data):
            written += self._file.write(data[written:])
        os.fdatasync(self._file.fileno())
        self.runs[(run["strategy"], run["repetition"])] = run

    def close(self) -> None:
        """Close the journal's descriptor (every appended run is already on disk)."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> "Journal":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
