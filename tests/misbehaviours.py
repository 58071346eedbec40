"""Misbehaviours of a program, combined at random (issue 40): what ``tests/data/misbehave.c``
is told to do in one run, and what the run's record must then say.

One generator for the fuzz test of the measuring path (``tests/test_fuzz_measure.py``, through
hypothesis) and for ``perf/fault_injection.py`` (through a seeded :class:`random.Random`):
:func:`drawn` takes the chooser, so both draw from the same choices. The measuring process
never imports this module.
"""
from __future__ import annotations

import dataclasses
import re
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

#: The program's source (built with OpenMP by the test or the script).
SOURCE = Path(__file__).resolve().parent / "data" / "misbehave.c"
#: The time setting of the runs: the issue's regex; ``match`` is drawn.
TIME_REGEX = r"elapsed: (\S+)"
#: Printed times (bytes, any) and whether a run can take each as its time.
PRINTED = {
    b"0.0125": True, b"1,234.5": True, b"1e-320": True, b"7": True,
    b"nan": False, b"inf": False, b"-inf": False, b"-0": False, b"0": False,
    b"1e308": False, b"1e400": False, b"0e999": False, b"1e" + b"9" * 5000: False,
    b"1" * 3000: False, b"": False, b"\xff\xfe": False, b"0.5\xff": False,
    b"1.5\x1b[2J": False, b"0.25\x00": False, b"12,34": False,
}
#: The metric's regex (the runs' ``metrics: {rate: ...}``) and printed values: taken or not.
METRIC_REGEX = r"^rate: (\S+)$"
METRICS = {b"12.5": True, b"839,437": True, b"nan": False, b"inf": False, b"": False,
           b"1e" + b"9" * 5000: False, b"\x1b[2J": False}
#: Signals whose default action ends the program without a core file.
SIGNALS = tuple(map(int, (signal.SIGKILL, signal.SIGTERM, signal.SIGUSR1, signal.SIGHUP)))


@dataclass(frozen=True)
class Misbehaviour:
    """What the program does in a run (each field's choices: :data:`CHOICES`; the defaults:
    a program that behaves)."""

    time: bytes = b"0.0125"
    metric: bytes = b"12.5"
    times: int = 1
    match: str = "first"
    stream: int = 1
    exit: int = 0
    signal: int = 0
    validate: int = 1
    child: int = 0
    stop: str = ""
    sleep: int = 0
    rebind: int = 0
    flood: int = 0
    binary: int = 0

    def __str__(self) -> str:
        """What it does unlike a program that behaves, in words (``behaves``: nothing).

        >>> str(Misbehaviour(time=b"nan", child=1))
        "time=b'nan' child=1"
        """
        done = [f"{field.name}={value!r:.40}" for field in dataclasses.fields(self)
                if (value := getattr(self, field.name)) != field.default]
        return " ".join(done) or "behaves"

    @property
    def waits(self) -> bool:
        """Whether the run lasts until its timeout (it sleeps, or it or its launcher stops)."""
        return bool(self.sleep or self.stop)

    def words(self, timeout_s: float) -> list[str]:
        """The program's arguments (``misbehave.c``), sleeping past ``timeout_s`` if it sleeps."""
        words = [f"time={self.time.hex()}", f"metric={self.metric.hex()}",
                 f"times={self.times}", f"stream={self.stream}",
                 f"exit={self.exit}", f"validate={self.validate}", f"child={self.child}",
                 f"rebind={self.rebind}", f"flood={self.flood}", f"binary={self.binary}"]
        if self.signal:
            words.append(f"signal={self.signal}")
        if self.stop:
            words.append(f"stop={self.stop}")
        if self.sleep:
            words.append(f"sleep={timeout_s * 20:g}")
        return words

    @property
    def time_setting(self) -> dict:
        """The benchmark's ``time`` setting of the runs."""
        return {"regex": TIME_REGEX, "unit": "s", "stream": "stdout", "match": self.match}

    def time_fails(self) -> bool:
        """Whether the run cannot take its printed time (none found, or none a time)."""
        return self.times == 0 or self.stream != 1 or not PRINTED[self.time]

    def failures(self) -> tuple[str, bool]:
        r"""A regular expression that each failure a run may have matches whole ("": it cannot
        fail), and whether it may succeed: one list of reasons (:meth:`reasons`), but with a
        SIGTSTP of the launcher, which the kernel discards when the launcher's process group is
        orphaned (a campaign started in a session of its own): the run then goes on as if
        not stopped.

        >>> Misbehaviour(exit=3, time=b"nan").failures()
        ('(?:(?:exit status 3).*(?:printed time|time regex).*)', False)
        >>> Misbehaviour().failures(), Misbehaviour(stop="launcher-tstp").failures()[1]
        (('', True), True)
        """
        outcomes = [self.reasons()]
        if self.stop == "launcher-tstp":
            outcomes.append(dataclasses.replace(self, stop="").reasons())
        patterns = [".*".join(f"(?:{reason})" for reason in reasons) + ".*"
                    for reasons in outcomes if reasons]
        return "|".join(f"(?:{pattern})" for pattern in patterns), [] in outcomes

    def reasons(self) -> list[str]:
        """Regular expressions the failure of each run names, in order, the first at its start
        (none: the run succeeds): what ended or failed it, then a printed time that is none
        when the program ended by itself (a program stopped or killed by the timeout printed
        no time to judge, and one that failed otherwise and printed none is not said to lack
        one), or a metric that is none when nothing else failed it."""
        if self.waits:  # the timeout may come before a stop of the launcher, and a launcher
            # that kills at the timeout may answer after a short grace on a busy machine
            return [r"timeout after|the launcher \(pid \d+\) did not answer"]
        first = rf"exit status -{self.signal}" if self.signal else \
            f"exit status {self.exit}" if self.exit else \
            r"left 1 process running after it exited \(killed\)" if self.child else \
            re.escape("validation regex") if not self.validate else ""
        matched = self.times > 0 and self.stream == 1 and self.time != b""
        time = "printed time|time regex" if self.time_fails() and (matched or not first) else ""
        metric = re.escape("metric regex") if not (first or time or METRICS[self.metric]) \
            else ""
        return [reason for reason in (first, time, metric) if reason]


#: The harmless program: each field's default.
HARMLESS = Misbehaviour()
#: The choices of each misbehaviour, the harmless one first (hypothesis shrinks to it) and
#: repeated, so that each run meets a few misbehaviours, not all at once.
CHOICES: dict[str, Sequence] = {
    "time": [HARMLESS.time] * 3 + list(PRINTED),
    "metric": [HARMLESS.metric] * 6 + list(METRICS),
    "times": [HARMLESS.times] * 3 + [0, 3],  # time lines (0: missing; 3: several matches)
    "match": [HARMLESS.match] * 2 + ["last", "sum"],
    "stream": [HARMLESS.stream] * 3 + [2],  # the time line on stdout (1) or stderr (2)
    "exit": [HARMLESS.exit] * 6 + [1, 3, 255],
    "signal": [HARMLESS.signal] * 9 + list(SIGNALS),
    "validate": [HARMLESS.validate] * 6 + [0],
    "child": [HARMLESS.child] * 5 + [1],
    "stop": [HARMLESS.stop] * 20 + ["launcher", "launcher-tstp", "self", "self-tstp"],
    "sleep": [HARMLESS.sleep] * 15 + [1],  # 1: sleeps past the run's timeout
    "rebind": [HARMLESS.rebind] * 4 + [1],
    "flood": [HARMLESS.flood] * 5 + [2 << 20],  # 2 MiB on stdout: more than the MiB kept
    "binary": [HARMLESS.binary] * 4 + [1],
}


def drawn(choose: Callable[[Sequence], object]) -> Misbehaviour:
    """A misbehaviour made of ``choose``'s pick among each field's :data:`CHOICES`:
    ``random.Random(seed).choice``, or a hypothesis draw of ``sampled_from``."""
    return Misbehaviour(**{name: choose(options) for name, options in CHOICES.items()})
