"""A run's time as the program printed it, read as its benchmark's ``time`` says, in seconds.

The setting (:data:`pinbench.measure.settings.TimeSetting`) names a regex whose first group
is the number, and three choices:

- ``stream``: ``stdout``, ``stderr``, or ``both`` (stdout's matches, then stderr's: the
  launcher keeps the two streams apart, so which line came first between them is lost);
- ``match``: the ``first`` match, the ``last`` (the total of a clock printed after every step),
  or the ``sum`` of all (a time printed per step);
- ``unit``: ``s``, ``ms``, ``us`` or ``ns``, converted to seconds here, once, when the run's
  row is made: the runs table, the statistics, the report and the models hold seconds.

The runtime's affinity lines (pinbench's, on stdout or stderr) are never read as the
program's. The launcher keeps the last MiB of each stream for these checks
(:data:`pinbench.measure.spawn.OUTPUT_LIMIT`): ``first`` and ``sum`` see only that part of a
longer output.
"""
from __future__ import annotations

import collections
import itertools
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass

from pinbench.measure.settings import UNITS, TimeSetting, time_reading
from pinbench.measure.verify import TOKEN

#: The largest printed time a run may have, in the program's unit (a nanosecond count of 11
#: days): beyond it, a sum of a cell's times could overflow a float. Not finite (``nan``,
#: ``inf``) or larger: the run fails, its time is not recorded.
LARGEST_TIME = 1e15
#: The units' names in the failures' words.
UNIT_NAMES = {"s": "seconds", "ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds"}
#: A number printed with its thousands grouped by commas: ``839,437`` or ``1,234,567.89``.
_GROUPED = re.compile(r"[+-]?[0-9]{1,3}(,[0-9]{3})+(\.[0-9]*)?([eE][+-]?[0-9]+)?")
_STREAMS = {"stdout": ("stdout",), "stderr": ("stderr",), "both": ("stdout", "stderr")}


def number(text: str) -> tuple[float, float] | None:
    """A number as a program printed it, and its resolution: one unit of its last digit.
    Thousands grouped by commas read as one number; a decimal comma (``0,5``) is no number.

    >>> number("0.01"), number("12"), number("1.50e-3"), number("x")
    ((0.01, 0.01), (12.0, 1.0), (0.0015, 1e-05), None)
    >>> number("839,437"), number("1,234,567.5"), number("0,5"), number("12,34")
    ((839437.0, 1.0), (1234567.5, 0.1), None, None)
    >>> number("0e999"), number("1e" + "9" * 5000)
    ((0.0, inf), (inf, inf))
    """
    if _GROUPED.fullmatch(text.strip()):
        text = text.strip().replace(",", "")
    try:
        value = float(text)
    except ValueError:
        return None
    mantissa, _, exponent = text.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    try:
        return value, float(f"1e{int(exponent or 0) - decimals}")
    except ValueError:  # an exponent of more digits than Python reads (4300): no finite step
        return value, math.inf


@dataclass(frozen=True)
class PrintedTime:
    """A run's printed time in seconds and its resolution (one unit of the last digit, of
    the coarsest number summed), or why the run cannot take it."""

    seconds: float | None  #: None: no number, or none a run can take
    resolution_s: float | None
    failure: str = ""  #: why the run fails for its time ("": it does not)
    #: whether the regex found the text (a failure then quotes it: a time the program printed
    #: that is none is said beside what else failed its run)
    matched: bool = True


def groups(pattern: str, text: str) -> Iterator[str]:
    """The first group of each match of ``pattern`` in ``text`` (MULTILINE), but in the
    runtime's affinity lines.

    >>> list(groups(r"t=(\\d+)", "t=1\\npinbench-affinity t=0\\nt=2"))
    ['1', '2']
    """
    for found in re.finditer(pattern, text, re.MULTILINE):
        if not text.startswith(TOKEN, text.rfind("\n", 0, found.start()) + 1):
            yield found.group(1) or ""


def read_time(setting: TimeSetting, stdout: str, stderr: str) -> PrintedTime:
    """The time a run printed, read as ``setting`` says (see the module's text).

    >>> read_time({"regex": "step .*: (\\\\S+) ms", "unit": "ms", "stream": "stderr",
    ...            "match": "sum"}, "", "step 1: 2.5 ms\\nstep 2: 1.25 ms\\n")
    PrintedTime(seconds=0.00375, resolution_s=0.0001, failure='', matched=True)
    >>> read_time("^t: (\\\\S+)$", "t: 1.5\\nt: 3.0", "").seconds
    1.5
    >>> read_time("^t: (\\\\S+)$", "t: 1.5\\x1b[2J", "").failure
    "time regex '^t: (\\\\\\\\S+)$' found no number in stdout (it matched '1.5\\\\x1b[2J')"
    """
    reading = time_reading(setting)
    regex, unit, match = reading["regex"], reading["unit"], reading["match"]
    texts = {"stdout": stdout, "stderr": stderr}
    found = (text for stream in _STREAMS[reading["stream"]]
             for text in groups(regex, texts[stream]))
    chosen = list(itertools.islice(found, 1) if match == "first" else
                  collections.deque(found, maxlen=1) if match == "last" else found)
    numbers = [number(text) for text in chosen]
    if not numbers or None in numbers:
        failure = not_found(reading, stdout, stderr)
        if chosen:  # what it matched, quoted: no number
            failure += f" (it matched {quoted(chosen[numbers.index(None)])})"
        return PrintedTime(None, None, failure, matched=bool(chosen))
    value = sum(value for value, _ in numbers)
    step = max(step for _, step in numbers)
    if not (math.isfinite(value) and math.isfinite(step)) or value > LARGEST_TIME:
        printed = quoted(chosen[0]) if len(chosen) == 1 else \
            f"{value:g} (the sum of {len(chosen)} matches)"
        return PrintedTime(None, None, f"printed time {printed} is not a finite number of "
                                       f"{UNIT_NAMES[unit]} up to {LARGEST_TIME:g}")
    seconds = value * UNITS[unit]
    resolution = step * UNITS[unit]
    failure = "" if seconds > 0 else \
        f"printed time {seconds:g} s is not positive (printed to {resolution:g} s)"
    return PrintedTime(seconds, resolution, failure)


def quoted(text: str, limit: int = 40) -> str:
    """A program's text in a failure: its first ``limit`` characters, escaped (``repr``).

    >>> quoted("1.5\\x1b[2J"), quoted("1" * 50)
    ("'1.5\\\\x1b[2J'", "'1111111111111111111111111111111111111111'... (50 characters)")
    """
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text)} characters)"


def not_found(reading: dict, stdout: str, stderr: str) -> str:
    """The failure of a run in whose ``stream`` the regex found no number, one line; it
    names the other stream when the regex finds one there.

    >>> not_found({"regex": "t: (.+)", "stream": "stdout"}, "", "t: 0.5")
    "time regex 't: (.+)' found no number in stdout (it finds one in stderr: time: {stream: stderr})"
    """
    regex, stream = reading["regex"], reading["stream"]
    text = f"time regex {regex!r} found no number in {' or '.join(_STREAMS[stream])}"
    other = {"stdout": "stderr", "stderr": "stdout"}.get(stream)
    if other and any(number(found) for found in groups(regex, {"stdout": stdout,
                                                                "stderr": stderr}[other])):
        text += f" (it finds one in {other}: time: {{stream: {other}}})"
    return text
