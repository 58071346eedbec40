"""Each run's output, kept (compressed, bounded) so that what was read from it can be checked.

One file per measurement job, ``<root>/<fingerprint>/runs.txt.gz`` (:func:`folder`: the
first 16 hex digits of its journal's fingerprint), opened once by :class:`Outputs` and
appended to with one ``write`` per run (about 20 us with the compression, where creating a
file per run cost 0.15-0.3 ms): one gzip member per run, holding
``== run <strategy> r<repetition>``, the exit status, then the last :data:`KEEP_BYTES` of the
program's standard output and of its standard error. Gzip members one after another are one
gzip stream: ``zcat`` shows every run in the order they ran. Each member ends with the CRC
and length of its text, so a member cut short by a kill is told from a whole one; it is cut
off the file when the job opens it again, as is a whole member whose run the journal lacks
(killed between the two writes): each member left is a journaled run's. A run's member is
appended before its run is journaled (no ``fsync`` per run: a kill loses nothing the kernel
has; the file is fsynced when the job ends). Folders written by older pinbench hold one
``<strategy>-r<repetition>.txt.gz`` per run instead. This module is the only one that knows
the layout: :func:`read` is its reader, :func:`set_aside` moves a job's folder aside.
"""
from __future__ import annotations

import os
import zlib
from collections.abc import Container, Iterator
from pathlib import Path

from pinbench.results import stale

#: Bytes kept from the end of each stream of a run.
KEEP_BYTES = 64 << 10
#: The file of a job's folder that holds its runs' outputs.
RUNS_FILE = "runs.txt.gz"
#: Compressed bytes fed to the decompressor at a time while reading.
_CHUNK = 1 << 16


def folder(root: Path, fingerprint: str) -> Path:
    """The folder of the kept outputs of the job whose journal has ``fingerprint``."""
    return root / fingerprint[:16]


def set_aside(root: Path, fingerprint: str, stamp: str) -> Path | None:
    """Move that folder aside with ``stamp``, as its journal was (:mod:`pinbench.results.stale`);
    return where it went, None when the job kept no output."""
    kept = folder(root, fingerprint)
    if not fingerprint or not kept.is_dir():
        return None
    moved = stale.name(kept, stamp)
    os.replace(kept, moved)
    return moved


def _tail(text: str) -> str:
    data = text.encode("utf-8", "replace")
    if len(data) <= KEEP_BYTES:
        return text
    return (f"[... {len(data) - KEEP_BYTES} earlier bytes not kept ...]\n"
            + data[-KEEP_BYTES:].decode("utf-8", "replace"))


def _members(data: bytes) -> Iterator[tuple[int, tuple[str, int], str]]:
    """(end offset, (strategy, repetition), text after the ``== run`` line) of each whole
    member of a runs file, in order; stops at a member cut short or damaged."""
    view, start = memoryview(data), 0
    while start < len(data):
        inflate, parts, at = zlib.decompressobj(wbits=31), [], start
        try:
            while not inflate.eof and at < len(data):
                parts.append(inflate.decompress(view[at:at + _CHUNK]))
                at = min(at + _CHUNK, len(data))
        except zlib.error:
            return
        if not inflate.eof:
            return
        start = at - len(inflate.unused_data)
        first, _, text = b"".join(parts).decode("utf-8", "replace").partition("\n")
        strategy, _, repetition = first.removeprefix("== run ").rpartition(" r")
        if not first.startswith("== run ") or not repetition.isdigit():
            return
        yield start, (strategy, int(repetition)), text


def read(kept: Path) -> dict[tuple[str, int], str]:
    """The kept output of each run in a job's folder, keyed by (strategy, repetition): the
    exit status line, then stdout and stderr (the last member of a run measured twice)."""
    path = kept / RUNS_FILE
    data = path.read_bytes() if path.exists() else b""
    return {run: text for _, run, text in _members(data)}


def _gzip(data: bytes) -> bytes:
    """One gzip member of ``data`` (as ``gzip.compress(data, 6, mtime=0)``), its window no
    larger than the data needs: a run's few lines cost 3 us instead of 12 (zlib's default
    state, 256 KiB of which it clears a part, for 60 bytes), and compress as well (a
    window covering the whole data finds every match the largest one would)."""
    window = min(15, max(9, (len(data) - 1).bit_length()))
    deflate = zlib.compressobj(6, zlib.DEFLATED, 16 + window, min(8, window - 6))
    return deflate.compress(data) + deflate.flush()


class Outputs:
    """A job's runs file, open for appending; :meth:`keep` adds one run's output.

    Opening it cuts off the members after the last one whose run ``journaled`` holds (one
    cut short by a kill, or one whose run was never journaled).
    """

    def __init__(self, kept: Path, journaled: Container[tuple[str, int]]):
        kept.mkdir(parents=True, exist_ok=True)
        self.path = kept / RUNS_FILE
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC,
                           0o644)
        end = 0
        for offset, run, _ in _members(self.path.read_bytes()):
            if run in journaled:
                end = offset
        if end < os.fstat(self._fd).st_size:
            os.ftruncate(self._fd, end)

    def keep(self, strategy: str, repetition: int, exit_status: int, stdout: str,
             stderr: str) -> None:
        """Append one run's output (one ``write`` of one gzip member)."""
        text = (f"== run {strategy} r{repetition}\n== exit status {exit_status}\n"
                f"== stdout\n{_tail(stdout)}"
                f"{'' if stdout.endswith(chr(10)) or not stdout else chr(10)}"
                f"== stderr\n{_tail(stderr)}")
        data = memoryview(_gzip(text.encode("utf-8", "replace")))
        try:
            while data:
                data = data[os.write(self._fd, data):]
        except OSError as exc:  # a full disk: say which file
            raise OSError(exc.errno, exc.strerror, str(self.path)) from None

    def close(self) -> None:
        """Make the file durable (``fsync``) and close it."""
        if self._fd >= 0:
            os.fsync(self._fd)
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> "Outputs":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
