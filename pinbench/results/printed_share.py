"""Whether the times a program printed can be its runs' times: their share of the wall time.

A time a program prints (its benchmark's ``time``) is a part of its run: at most the run's
wall time, and usually most of it. Two things say it is not the time the campaign meant:

- **above** the run's wall time (by more than :data:`ABOVE_TOLERANCE` and the number's
  resolution), in any run: no time inside the run can be; a unit read wrong (milliseconds
  read as seconds), a sum over threads;
- **below** :data:`SHARE_EXPECTED` of the wall time (or the benchmark's
  ``time_share_expected``) in every run of a job: a step of the run rather than the run (the
  first line of a clock printed after every step), or a kernel inside a long set-up.

Either is said in the job's line, on the report's benchmark page and first page. A job whose
printed times are all one or the other gets no verdict
(:func:`pinbench.stats.verdicts.cell_verdict`: no test, no winner) until the benchmark reads
the time right (``time: {unit, match, ...}``) or says that so small a share is meant
(``time_share_expected`` at or below it).
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from pinbench.results.runs import RunRecord

#: The least share of a run's wall time a printed time is expected to be, unless its
#: benchmark's ``time_share_expected`` says another.
SHARE_EXPECTED = 0.1
#: How far a printed time may lie above the run's wall time (a share of it; beyond its own
#: resolution): the program's clock and the launcher's are not one.
ABOVE_TOLERANCE = 0.05


def percent(share: float) -> str:
    """A share in per cent, two significant digits.

    >>> percent(0.031), percent(0.0042), percent(0.1)
    ('3.1%', '0.42%', '10%')
    """
    return f"{100 * share:.2g}%"


def floor_1(value: float) -> float:
    """``value`` (above 0) rounded down to one significant digit.

    >>> floor_1(0.036), floor_1(0.0071), floor_1(0.5)
    (0.03, 0.007, 0.5)
    """
    scale = 10 ** math.floor(math.log10(value))
    return float(f"{math.floor(value / scale + 1e-9) * scale:.1g}")


@dataclass(frozen=True)
class PrintedShare:
    """The printed times of one job against its runs' wall times."""

    runs: int  #: successful runs with a printed time
    above: int  #: of them, printed above the run's wall time
    below: int  #: of them, printed below the share expected of it
    expected: float  #: the least share expected (``time_share_expected``, or the default)
    median: float | None = None  #: the median share (printed / wall time)
    smallest: float | None = None  #: the smallest share

    @property
    def implausible(self) -> bool:
        """Every printed time is above its run's wall time or below the share expected:
        the job gets no verdict."""
        return self.runs > 0 and self.above + self.below == self.runs

    def text(self) -> str:
        """What is to be said of the printed times, in one line; "" when nothing."""
        said = []
        if self.above:
            said.append(f"above the run's wall time in {self.above} of {self.runs} runs "
                        f"(median {self.median:.3g} times it: is time.unit the program's?)")
        if self.below == self.runs and self.runs:
            said.append(f"{percent(self.median)} of the run's wall time (median), below the "
                        f"{percent(self.expected)} expected in every run: a step rather than "
                        "the run? (time.match: last or sum)")
        if not said:
            return ""
        text = "printed time " + "; ".join(said)
        if not self.implausible:
            return text
        if self.above:
            return text + ": no verdict"
        return (text + f": no verdict (time_share_expected: {floor_1(self.smallest):g} says "
                "so small a share is meant)")


def printed_share(records: Iterable[RunRecord], expected: float | None = None) -> PrintedShare:
    """The printed times of a job's ``records`` against their wall times (``expected``: the
    benchmark's ``time_share_expected``; None: :data:`SHARE_EXPECTED`). Runs that failed or
    were timed by the launcher are not counted."""
    floor = SHARE_EXPECTED if expected is None else expected
    printed = [r for r in records
               if r.ok and r.time_source == "regex" and r.time_s is not None and r.wall_s > 0]
    if not printed:
        return PrintedShare(0, 0, 0, floor)
    shares = sorted(r.time_s / r.wall_s for r in printed)
    above = sum(r.time_s - (r.time_resolution_s or 0.0) > r.wall_s * (1 + ABOVE_TOLERANCE)
                for r in printed)
    middle = len(shares) // 2  # the median, without the statistics module in the measuring process
    median = shares[middle] if len(shares) % 2 else (shares[middle - 1] + shares[middle]) / 2
    return PrintedShare(len(printed), above, sum(share < floor for share in shares), floor,
                        median, shares[0])
