"""An append-only journal of finished runs, so a killed campaign loses nothing.

One JSON object per line. The first line is a header holding a fingerprint
of everything that defines the measurement (binary, command, environment,
placements, order); each later line is one finished run, written, flushed and
fsynced before the next run starts. A line cut short by a kill is dropped on
the next open. A journal whose fingerprint differs from the job's belongs to
another measurement: it is set aside (renamed to ``<name>.stale-<time>``), never
mixed in, with a note of what changed beside it (``<name>.stale-<time>.why``:
the parts of the fingerprint that differ, when the header holds them).
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Journal:
    """Finished runs of one measurement job, keyed by (strategy, repetition)."""

    def __init__(self, path: Path, fingerprint: str, also: tuple[str, ...] = (),
                 parts: dict[str, str] | None = None):
        """``also``: other fingerprints an existing journal may have and still be resumed
        (:attr:`fingerprint` is then the one it has); ``parts``: what the fingerprint is a
        hash of, kept in the header to say what changed when the journal is set aside."""
        self.path = path
        self.fingerprint = fingerprint
        self.parts = parts or {}
        self.runs: dict[tuple[str, int], dict] = {}
        self.set_aside: Path | None = None  #: where a stale journal went, if any
        self.set_aside_runs = 0  #: how many finished runs it held
        self.changed = ""  #: what differs from the stale journal, in words
        self._open(also)

    def _open(self, also: tuple[str, ...]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lines = self._read_complete_lines()
        header = json.loads(lines[0]) if lines else {}
        found = header.get("fingerprint")
        if found in also:
            self.fingerprint = found
        if lines and found != self.fingerprint:
            self._set_aside(header, len(lines) - 1)
            lines = []
        if not lines:
            header = {"fingerprint": self.fingerprint, "created": time.time(),
                      **({"parts": self.parts} if self.parts else {})}
            self._write(json.dumps(header), mode="w")
            _fsync_dir(self.path.parent)
            return
        for line in lines[1:]:
            run = json.loads(line)
            self.runs[(run["strategy"], run["repetition"])] = run

    def _set_aside(self, header: dict, runs: int) -> None:
        old = header.get("parts", {})
        if old:
            changed = [name for name in {**old, **self.parts}
                       if old.get(name) != self.parts.get(name)]
            self.changed = ", ".join(changed) + " changed"
        else:
            self.changed = "written by an older pinbench with another measurement"
        self.set_aside = self.path.with_name(
            f"{self.path.name}.stale-{time.strftime('%Y%m%dT%H%M%S')}")
        self.set_aside_runs = runs
        os.replace(self.path, self.set_aside)
        why = self.set_aside.with_name(self.set_aside.name + ".why")
        why.write_text(json.dumps({"runs": runs, "changed": self.changed,
                                   "set_aside": time.time()}) + "\n")

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

    def _write(self, line: str, mode: str = "a") -> None:
        with self.path.open(mode) as handle:
            handle.write(line + "\n")
            handle.flush()
            os.fsync(handle.fileno())

    def append(self, run: dict) -> None:
        """Record one finished run durably before anything else happens."""
        self._write(json.dumps(run))
        self.runs[(run["strategy"], run["repetition"])] = run
