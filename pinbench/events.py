"""What the processes of a campaign call tell its terminal, and by which way.

``pinbench run`` and ``pinbench plan`` set the call's verbosity (:data:`VERBOSITY`: -1 quiet,
0 the default, 1 verbose) for the Snakemake process and every process it starts. When the
call's terminal shows pinbench's display (:mod:`pinbench.workflow.terminal`: every call but a
verbose one), its file of events is named in :data:`EVENTS`: the rules (threads of the
Snakemake process) and the measuring processes append one JSON object a line to it, and the
display reads them (a measurement job's progress after each run, a warning it then says once
with a count, a job's last line). Without it (``-v``, a plain ``snakemake`` call, a measuring
process started by hand) each line is printed where it always was.

A line keeps its kind when it is passed along as a plain ``str`` (:class:`Told`): the
callers' ``say(line)`` stays one argument. Standard library only: the measuring process
imports it.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TextIO

#: The call's verbosity in the environment: -1 quiet, 0 default, 1 or more verbose.
VERBOSITY = "PINBENCH_VERBOSITY"
#: The call's file of events, in the environment, when a display reads it.
EVENTS = "PINBENCH_EVENTS"
#: The kinds of line: said as it comes (``line``, shown by a verbose call only), a warning
#: (said once with a count), a measurement job's progress, the last line of a job, and an
#: error (printed at once, display or not).
KINDS = ("line", "warning", "progress", "done", "error")


class Told(str):
    """A line with its :data:`KINDS` kind, a ``key`` that tells alike warnings of different
    jobs apart from different ones (the line without its job's label), and ``fields`` for
    the display (a progress's numbers)."""

    kind: str = "line"
    key: str = ""
    fields: dict

    def __new__(cls, text: str, kind: str = "line", key: str = "", **fields) -> "Told":
        told = super().__new__(cls, text)
        told.kind, told.key, told.fields = kind, key or text, fields
        return told


def warning(label: str, text: str, key: str = "") -> Told:
    """A warning of the job ``label`` (``"[machine bench tN]"``, or "" for the call's); ``key``
    tells it from other warnings when its text holds the job's own numbers (default: the
    text)."""
    return Told(f"{label} {text}" if label else text, "warning", key=key or text)


def verbosity() -> int:
    """The call's verbosity (:data:`VERBOSITY`); 1 in a process no ``pinbench run`` started
    (a plain ``snakemake`` call, a measuring process started by hand): it says everything."""
    try:
        return int(os.environ[VERBOSITY])
    except (KeyError, ValueError):
        return 1


def listening() -> Path | None:
    """The call's file of events when a display reads it (:data:`EVENTS`), else None."""
    path = os.environ.get(EVENTS)
    return Path(path) if path else None


def tell(line: str, stream: TextIO | None = None) -> None:
    """Say ``line`` (a :class:`Told`, or a plain line): to the display when one listens,
    else printed on ``stream`` (stderr) as it always was, as an error is always; a progress
    without a display is not printed (its job prints its own lines)."""
    told = line if isinstance(line, Told) else Told(line)
    path = listening()
    if path is not None and told.kind != "error":
        try:
            append(path, {"kind": told.kind, "text": str(told), "key": told.key,
                          **told.fields})
            return
        except OSError:
            pass  # a display that cannot be told (its folder gone): printed instead
    if told.kind != "progress":
        print(told, file=stream or sys.stderr, flush=True)


def append(path: Path, event: dict) -> None:
    """Append one event to the file ``path`` in one write (whole lines, whoever writes)."""
    data = (json.dumps(event, sort_keys=True) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def read(path: Path, offset: int = 0) -> tuple[list[dict], int]:
    """The events appended to ``path`` from byte ``offset`` on (whole lines only), and the
    offset after the last of them."""
    try:
        with path.open("rb") as handle:
            handle.seek(offset)
            data = handle.read()
    except FileNotFoundError:
        return [], offset
    whole = data[:data.rfind(b"\n") + 1]
    events = []
    for line in whole.splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    return events, offset + len(whole)
