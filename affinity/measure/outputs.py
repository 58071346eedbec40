"""Each run's output, kept (compressed, bounded) so that what was read from it can be checked.

One gzip file per run, ``<dir>/<strategy>-r<repetition>.txt.gz``: the exit status, then
the last :data:`KEEP_BYTES` of the program's standard output and of its standard error.
``zcat`` shows it. Written before the run is journaled, so every journaled run has one.
"""
from __future__ import annotations

import gzip
import os
from pathlib import Path

#: Bytes kept from the end of each stream of a run.
KEEP_BYTES = 64 << 10


def _tail(text: str) -> str:
    data = text.encode("utf-8", "replace")
    if len(data) <= KEEP_BYTES:
        return text
    return (f"[... {len(data) - KEEP_BYTES} earlier bytes not kept ...]\n"
            + data[-KEEP_BYTES:].decode("utf-8", "replace"))


def output_path(folder: Path, strategy: str, repetition: int) -> Path:
    """Where one run's output is kept."""
    return folder / f"{strategy}-r{repetition}.txt.gz"


def keep(folder: Path, strategy: str, repetition: int, exit_status: int, stdout: str,
         stderr: str) -> Path:
    """Write one run's output (atomically: a killed launcher leaves no half file)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = output_path(folder, strategy, repetition)
    text = (f"== exit status {exit_status}\n== stdout\n{_tail(stdout)}"
            f"{'' if stdout.endswith(chr(10)) or not stdout else chr(10)}"
            f"== stderr\n{_tail(stderr)}")
    partial = path.with_name(path.name + ".part")
    with gzip.open(partial, "wt", encoding="utf-8", compresslevel=6) as handle:
        handle.write(text)
    os.replace(partial, path)
    return path
