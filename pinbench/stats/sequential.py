"""The sequential design: a cell looks at its runs every few rounds and stops once decided.

A measurement job of ``design: sequential`` runs in rounds (every measured experiment once
per round, each round in a seeded random order: :func:`pinbench.measure.stopping.rounds_order`),
and looks at its runs after rounds :func:`look_rounds` (five looks, the last at
``repetitions``, the design's maximum). At each look, each experiment is compared with the
baseline by the fixed design's test, Brunner and Munzel's by permutation
(:func:`pinbench.stats.location.brunner_munzel`), two-sided with a sign: faster or slower,
each side at half the level. A side's one-sided p-value at look j is compared with that
look's nominal level from an alpha-spending function (Lan and DeMets, "Discrete sequential
boundaries for clinical trials", Biometrika 70, 1983): the boundaries z_1..z_K solve
P[Z_1 < z_1, ..., Z_{j-1} < z_{j-1}, Z_j >= z_j] = spent(t_j) - spent(t_{j-1}) on the
canonical joint distribution of the standardised statistics (independent increments; Jennison
and Turnbull, "Group Sequential Methods with Applications to Clinical Trials", 2000, ch. 7
and 19: the recursive numerical integration there), at information fractions t_j = n_j / N.
The spending function is :data:`SPENDING`, a t^1.5 for a one-sided level a (the power
family of Kim and DeMets): Lan-DeMets' O'Brien-Fleming type (``obf``), which spends almost
nothing at the first looks, puts their levels below any p-value the permutation test gives
on their few runs, so that no effect, however large, could stop a cell before its third look
(docs/statistics.md compares the choices). (``pocock``: a ln(1 + (e - 1) t).)

**Multiplicity over the report.** Cells stop at different n, in separate jobs, so no job
can know what Holm's step-down will let it spend. A job therefore decides each comparison
at the level the report gives its first Holm step, alpha / m_report (m_report: every test
of every cell, counted before measuring as for the warning of
:mod:`pinbench.stats.attainable`): a comparison crossing there is rejected by the analysis
whatever the others do. The analysis then applies Holm's step-down to the comparisons'
**sequential p-values** (:func:`sequential_p`: the smallest level at which the comparison's
group-sequential test rejects at one of the looks it reached). A group-sequential test
rejects at a level as soon as at any smaller one, so this is Holm's procedure with each
elementary test a group-sequential one, the graphical procedure of Maurer and Bretz
("Multiple testing in group sequential trials using graphical approaches", Statistics in
Biopharmaceutical Research 5, 2013) with Holm's graph: the family-wise error over the report
stays at alpha, whatever the cells' stopping. A comparison that stops before its last look
(its cell stopped, or it was dropped) has fewer chances to cross, never more, so stopping
and dropping can only lower the error (a non-binding futility rule).

**Dropping (racing, as F-race).** At a look, an experiment that the baseline, or the one
with the smallest median run time, beats at the report's first level (two-sided,
alpha / m_report) is dropped: it can no longer be the best. It is not measured again and
its comparison keeps the looks it reached.

**Futility (beta spending) and the maximum.** Most comparisons of a campaign have no
effect, and nothing above would stop them before the maximum. Each side also has a lower,
futility boundary a_1..a_K (Pampallona and Tsiatis 1994; Jennison and Turnbull ch. 7.3):
at the effect the design is made for, whose last look's z has mean ``drift``, the chance of
stopping below a_j at look j (staying between the boundaries before) is the share of
beta = 1 - ``power`` spent there, beta t (:func:`beta_spent`), and the drift is the one at which
the design's power, futility binding, is ``power`` (:func:`futility_design`, the same
recursive integration with a drift). At a look but the last, a comparison not yet decided
whose more favourable side's z is below a_j (neither side can plausibly cross: the inner
wedge of a two-sided design, Jennison and Turnbull ch. 5) stops as "no difference" (outcome
none), its experiment no longer measured. The rule is **non-binding**: the efficacy
boundaries are computed without it, and a stop for futility only takes away chances to
cross, so the error over the report stays at most alpha (also under Holm's graph, Maurer and
Bretz above). Its price is power, paid with runs: no rule that stops early can have more
power than the fixed design of its maximum (the fixed test is the most powerful on those
runs: Neyman-Pearson), so the design's maximum is larger than the fixed design it matches
(:func:`fixed_runs`: the most runs whose fixed test has at most ``power`` at the design's
effect, over a :data:`MARGIN` measured by simulation; :func:`maximum_for`: the least maximum
with the power of n fixed runs; 46 for 35 at the default campaign's 12 tests). A cell stops
when every experiment left is decided (faster or slower), dropped or stopped for futility, or
at its maximum.

``python -m pinbench.stats.simulate_sequential`` measures both designs' error rates, power
and runs (docs/statistics.md).
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import ndtr, ndtri

from pinbench.stats.attainable import DRAWS
from pinbench.stats.sample_size import MIN_N

if TYPE_CHECKING:
    from pinbench.stats.verdicts import Experiment

#: Looks of a cell, the last at the design's maximum.
LOOKS = 5
#: Levels (one-sided) at which the nominal levels are tabulated, for :func:`sequential_p`.
_LEVELS = np.logspace(-12, math.log10(0.5), 61)
#: The numerical integration's grid: points per unit of z, and where the tails are cut
#: (the standard normal's mass beyond them is below 1e-18 and 1e-32).
_PER_UNIT, _LOW, _HIGH = 16, -9.0, 12.0
#: The most random relabellings of one test at a look (its smallest p-value: 1 / this).
MAX_DRAWS = 1_000_000
#: The design's power at the effect it is made for (the campaign's ``power``): the fixed
#: design it matches finds that effect with this probability; its futility boundary spends
#: 1 - this.
POWER = 0.85
#: The efficacy boundaries' spending function (:func:`spent`): alpha t^1.5, chosen by
#: simulation against Lan-DeMets' O'Brien-Fleming type (docs/statistics.md): it lets a large
#: effect stop at the second look, where O'Brien-Fleming's level is below any p-value the
#: permutation test gives there.
SPENDING = "t^1.5"
#: The information a sequential design gives up against the normal model's match of a fixed
#: design: the simulation (6 cells x 4 strategies, one 5% faster) found the planted
#: strategies less often than the fixed design at the normal model's match (the rank test's
#: small samples at the early looks, a futility stop that Holm's step-down would have
#: rescued), as often or more with 5% more runs (docs/statistics.md).
MARGIN = 1.05
#: The futility boundary's spending function's exponent (:func:`beta_spent`), chosen by a
#: sweep of the runs under no effect against the maximum (docs/statistics.md).
RHO = 1.0


def _sf(z):
    """The standard normal's upper tail (SciPy's ufunc: ``stats.norm`` costs tens of
    microseconds a call, and the boundaries' integration makes thousands)."""
    return ndtr(-np.asarray(z, dtype=float))


def _isf(p):
    """The standard normal's upper quantile."""
    return -ndtri(np.asarray(p, dtype=float))


def _pdf(z):
    """The standard normal's density."""
    z = np.asarray(z, dtype=float)
    return np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)


def spent(t: float, alpha: float, spending: str = SPENDING) -> float:
    """The one-sided error spent up to information fraction ``t``: ``t^r``, alpha t^r (the
    power family of Kim and DeMets, "Design and analysis of group sequential tests based on
    the type I error spending rate function", Biometrika 74, 1987); ``obf``, Lan-DeMets'
    O'Brien-Fleming type; ``pocock``, Lan-DeMets' Pocock type.

    >>> round(spent(1.0, 0.025, "obf"), 6), round(spent(0.5, 0.025, "obf"), 6)
    (0.025, 0.001525)
    >>> round(spent(0.25, 0.02, "t^1.5"), 6)
    0.0025
    """
    if t <= 0:
        return 0.0
    t = min(t, 1.0)
    if spending.startswith("t^"):
        return alpha * t ** float(spending[2:])
    if spending == "obf":
        return float(2 * _sf(_isf(alpha / 2) / math.sqrt(t)))
    if spending == "pocock":
        return alpha * math.log(1 + (math.e - 1) * t)
    raise ValueError(f"unknown spending function {spending!r}: t^r, obf or pocock")


def look_rounds(maximum: int, looks: int = LOOKS, first: int = 3) -> list[int]:
    """The rounds after which a cell looks: every ceil(maximum / looks) rounds, at least
    ``first`` (the verdict's least runs), the last at ``maximum``.

    >>> look_rounds(35), look_rounds(10), look_rounds(3)
    ([7, 14, 21, 28, 35], [3, 6, 9, 10], [3])
    """
    step = max(first, math.ceil(maximum / looks))
    rounds = list(range(step, maximum, step))
    return rounds + [maximum]


def _simpson(z: np.ndarray) -> np.ndarray:
    """Simpson's weights on an odd number of equally spaced points ``z``."""
    h = (z[-1] - z[0]) / (len(z) - 1)
    w = np.ones(len(z))
    w[1:-1:2], w[2:-1:2] = 4, 2
    return w * h / 3


def _grid(lower: float, upper: float) -> np.ndarray:
    """The points of the continuation region between ``lower`` and ``upper``, cut at the
    tails."""
    lower, upper = max(lower, _LOW), min(max(upper, _LOW + 1), _HIGH)
    lower = min(lower, upper - 1 / _PER_UNIT)
    points = int((upper - lower) * _PER_UNIT) | 1
    return np.linspace(lower, upper, max(points, 3))


@dataclass
class _Walk:
    """The density of the standardised statistic Z_j at a look on its continuation region
    (Z_j has mean ``drift`` sqrt(t_j), independent increments: Jennison and Turnbull ch. 19,
    the recursive integration), look after look."""

    drift: float
    before: float = 0.0  #: the information fraction of the last look (0: none yet)
    grid: np.ndarray | None = None
    density: np.ndarray | None = None

    def _z(self, t: float, c: np.ndarray | float) -> np.ndarray:
        """Z_{j-1}'s points to the standardised increment that takes it to ``c`` at ``t``."""
        step = math.sqrt(t - self.before)
        return (np.asarray(c) * math.sqrt(t) - self.grid * math.sqrt(self.before)
                - self.drift * (t - self.before)) / step

    def beyond(self, t: float, c: float, above: bool = True) -> float:
        """The probability of reaching the look at ``t`` (staying in the continuation regions
        before it) with Z at least ``c`` (``above``) or below it."""
        tail = _sf if above else ndtr
        if self.grid is None:
            return float(tail(c - self.drift * math.sqrt(t)))
        return float(_simpson(self.grid) @ (self.density * tail(self._z(t, c))))

    def advance(self, t: float, lower: float, upper: float) -> None:
        """Move to the look at ``t``, its continuation region (``lower``, ``upper``)."""
        new = _grid(lower, upper)
        if self.grid is None:
            density = _pdf(new - self.drift * math.sqrt(t))
        else:
            step = math.sqrt(t - self.before)
            kernel = _pdf(self._z(t, new[:, None])) * (math.sqrt(t) / step)
            density = kernel @ (_simpson(self.grid) * self.density)
        self.grid, self.density, self.before = new, density, t


def _root(f: Callable[[float], float], low: float, high: float, xtol: float = 1e-10
          ) -> float:
    """The root of ``f`` in [low, high], where it changes sign, within ``xtol``: regula falsi
    with the Illinois step (the end kept twice in a row has its value halved) and halving
    when an end is kept more often (SciPy's brentq would import scipy.optimize, half a
    second of every sequential measuring job).

    >>> round(_root(lambda x: x * x - 2, 0.0, 2.0), 9)
    1.414213562
    """
    f_low, f_high = f(low), f(high)
    if min(abs(f_low), abs(f_high)) <= 1e-12:  # an end is the root, within rounding
        return low if abs(f_low) <= abs(f_high) else high
    if (f_low > 0) == (f_high > 0):
        raise ValueError(f"no sign change in [{low}, {high}]")
    kept = 0  # > 0: the low end kept that many times in a row; < 0: the high end
    while high - low > xtol:
        mid = (low * f_high - high * f_low) / (f_high - f_low)
        if abs(kept) > 2 or not low < mid < high:
            mid = (low + high) / 2
        f_mid = f(mid)
        if f_mid == 0:
            return mid
        if (f_mid > 0) == (f_low > 0):
            low, f_low, kept = mid, f_mid, min(kept, 0) - 1
            f_high = f_high / 2 if kept <= -2 else f_high
        else:
            high, f_high, kept = mid, f_mid, max(kept, 0) + 1
            f_low = f_low / 2 if kept >= 2 else f_low
    return (low + high) / 2


def _solve(chance: Callable[[float], float], share: float, low: float, high: float) -> float:
    """The z in [low, high] where the increasing ``chance`` reaches ``share``; the ends when
    it does not."""
    if chance(high) <= share:
        return high
    if chance(low) >= share:
        return low
    return _root(lambda z: chance(z) - share, low, high)


@functools.lru_cache(maxsize=4096)
def boundaries(fractions: tuple[float, ...], alpha: float, spending: str = SPENDING
               ) -> tuple[float, ...]:
    """The one-sided upper boundaries (z scale) of a design looking at ``fractions`` with
    level ``alpha`` spent by ``spending`` (see the module's text); inf where a look spends
    nothing."""
    bounds: list[float] = []
    walk = _Walk(0.0)
    for t in fractions:
        share = spent(t, alpha, spending) - spent(walk.before, alpha, spending)
        c = -_solve(lambda z, t=t: walk.beyond(t, -z), share, -40.0, 5.0) \
            if share > 0 else math.inf
        c = math.inf if c >= 40.0 else c
        bounds.append(c)
        walk.advance(t, -math.inf, c)
    return tuple(bounds)


def beta_spent(t: float, beta: float) -> float:
    """The type II error spent on futility up to information fraction ``t``:
    beta t^:data:`RHO` (Kim and DeMets' power family; the futility boundary's spending,
    Pampallona and Tsiatis 1994, Jennison and Turnbull ch. 7.3).

    >>> beta_spent(0.5, 0.15) == 0.15 * 0.5 ** RHO, beta_spent(1.0, 0.15)
    (True, 0.15)
    """
    return beta * min(max(t, 0.0), 1.0) ** RHO


def _futility_at(fractions: tuple[float, ...], upper: tuple[float, ...], beta: float,
                 drift: float) -> tuple[tuple[float, ...], float]:
    """The futility boundaries spending ``beta`` under ``drift`` (the last look's: its
    efficacy boundary) and the power there, the futility boundaries binding."""
    lower, power = [], 0.0
    walk = _Walk(drift)
    for k, (t, c) in enumerate(zip(fractions, upper)):
        top = min(c, _HIGH)
        share = beta_spent(t, beta) - beta_spent(walk.before, beta)
        a = top if k == len(fractions) - 1 else _solve(
            lambda z, t=t: walk.beyond(t, z, above=False), share, _LOW, top)
        power += walk.beyond(t, c)
        lower.append(a)
        walk.advance(t, a, c)
    return tuple(lower), power


@functools.lru_cache(maxsize=1024)
def futility_design(fractions: tuple[float, ...], alpha: float, power: float = POWER,
                    spending: str = SPENDING) -> tuple[tuple[float, ...], float]:
    """The one-sided futility boundaries (z scale: a side stops for futility when its z is
    below) of the design looking at ``fractions`` with level ``alpha`` spent by ``spending``,
    and the drift (the mean of the last look's z) of the effect it finds with ``power``:
    beta = 1 - power spent by :func:`beta_spent` under that effect, the drift the one whose
    power, futility binding, is ``power`` (Pampallona and Tsiatis, "Group sequential designs
    for one-sided and two-sided hypothesis testing with provision for early stopping in favor
    of the null hypothesis", J. Stat. Planning and Inference 42, 1994; Jennison and Turnbull
    ch. 7.3). The efficacy boundaries are :func:`boundaries`', computed without futility: the
    rule is non-binding."""
    upper = boundaries(fractions, alpha, spending)
    beta = 1 - power
    fixed = float(_isf(alpha) + _isf(beta))
    drift = _root(lambda d: _futility_at(fractions, upper, beta, d)[1] - power,
                  fixed, 3 * fixed, 1e-8)
    return _futility_at(fractions, upper, beta, drift)[0], drift


def fixed_runs(maximum: int, alpha: float, power: float = POWER, spending: str = SPENDING) -> int:
    """The runs of the fixed design the sequential one of ``maximum`` rounds matches: the most
    whose one-sided test at ``alpha`` has at most the sequential design's ``power`` at the
    effect that design is made for (:func:`futility_design`), in the normal model, over
    :data:`MARGIN` (what the rank tests of the early looks and Holm's step-down lose)."""
    drift = futility_design(fractions_of(look_rounds(maximum), maximum), alpha, power,
                            spending)[1]
    share = (_isf(alpha) + _isf(1 - power)) / drift
    return int(maximum * share * share / MARGIN + 1e-9)


def maximum_for(runs: int, alpha: float, power: float = POWER, spending: str = SPENDING) -> int:
    """The least maximum of a sequential design with the power of ``runs`` fixed runs
    (:func:`fixed_runs`), searched from the inflation of a design of ``runs``.

    >>> maximum_for(35, 0.05 / 24), maximum_for(20, 0.05 / 24), maximum_for(3, 0.05 / 24)
    (46, 27, 4)
    """
    def matched(maximum: int) -> int:
        return fixed_runs(maximum, alpha, power, spending)

    maximum = max(runs, round(runs * runs / max(matched(runs), 1)))
    while maximum > runs and matched(maximum - 1) >= runs:
        maximum -= 1
    while matched(maximum) < runs:
        maximum += 1
    return maximum


def nominal(fractions: tuple[float, ...], alpha: float, spending: str = SPENDING
            ) -> tuple[float, ...]:
    """The one-sided nominal level of each look: its p-value crosses when at most this."""
    return tuple(float(_sf(c)) for c in boundaries(fractions, alpha, spending))


@functools.lru_cache(maxsize=64)
def _table(fractions: tuple[float, ...], spending: str) -> np.ndarray:
    """The nominal levels of every look (columns) at every level of :data:`_LEVELS` (rows),
    kept on disk between processes (:mod:`pinbench.stats.disk_cache`)."""
    from pinbench.stats.disk_cache import cached

    return cached("levels", (fractions, spending), [__file__], (len(_LEVELS), len(fractions)),
                  lambda: np.array([nominal(fractions, float(a), spending) for a in _LEVELS]))


def sequential_p(p_values: Sequence[float], fractions: tuple[float, ...],
                 spending: str = SPENDING) -> float:
    """The smallest two-sided level (twice the one-sided one) at which a side's
    group-sequential test rejects, from its one-sided p-values at the first looks it reached.

    Read from a table of levels (log-linear between its rows, a level of the table's next
    row up when a p-value falls between: never smaller than the exact one by more than the
    interpolation).
    """
    table = _table(fractions, spending)
    best = 1.0
    for j, p in enumerate(p_values):
        column = table[:, j]
        above = int(np.searchsorted(column, p, side="left"))
        if above >= len(_LEVELS):
            continue
        if above == 0 or column[above] == p:
            level = float(_LEVELS[above])
        else:  # between two rows: log-linear in both
            lo, hi = column[above - 1], column[above]
            share = (math.log(p) - math.log(lo)) / (math.log(hi) - math.log(lo)) if lo > 0 else 1.0
            level = float(math.exp(math.log(_LEVELS[above - 1]) + share * (
                math.log(_LEVELS[above]) - math.log(_LEVELS[above - 1]))))
        best = min(best, level)
    return min(1.0, 2 * best)


def fractions_of(rounds: Sequence[int], maximum: int) -> tuple[float, ...]:
    """Information fractions of looks after ``rounds`` of a design of ``maximum`` rounds."""
    return tuple(r / maximum for r in rounds)


@dataclass
class Comparison:
    """One experiment's comparison with the baseline, look after look."""

    faster: list[float] = field(default_factory=list)  #: one-sided p-values, faster side
    slower: list[float] = field(default_factory=list)  #: slower side
    decided: str = ""  #: "faster", "slower" or "" (not yet)
    dropped: str = ""  #: why it was dropped, in words ("" while measured)
    futile: bool = False  #: stopped for futility (dropped, outcome none)
    at: int = 0  #: the rounds of the look that decided or dropped it (0: none did)

    def p(self, fractions: tuple[float, ...], spending: str) -> tuple[float, float]:
        """The sequential p-values (two-sided convention) of being faster and slower."""
        return (sequential_p(self.faster, fractions, spending),
                sequential_p(self.slower, fractions, spending))


def draws_for(level: float) -> int:
    """Random relabellings enough for a p-value to reach the one-sided ``level``: at least
    the fixed design's (:data:`pinbench.stats.attainable.DRAWS`), at most :data:`MAX_DRAWS`
    (a level below 2 / MAX_DRAWS cannot be reached: then the fixed design's)."""
    return DRAWS if level < 2 / MAX_DRAWS else max(DRAWS, math.ceil(2 / level))


def sides(base: Sequence[float], times: Sequence[float], draws: int = DRAWS
          ) -> tuple[float, float]:
    """One-sided permutation p-values of ``times`` being faster and slower than ``base``
    (only the side the medians point to is computed; the other is 1)."""
    return _sides(tuple(base), tuple(times), draws)


@functools.lru_cache(maxsize=4096)
def _sides(base: tuple[float, ...], times: tuple[float, ...], draws: int) -> tuple[float, float]:
    """:func:`sides`, kept: the analysis replays the looks the job made on the same runs."""
    from pinbench.stats.location import brunner_munzel

    x, y = np.array(base), np.array(times)
    if np.median(y) <= np.median(x):
        return brunner_munzel(x, y, draws)[0], 1.0
    return 1.0, brunner_munzel(y, x, draws)[0]


@dataclass
class Cell:
    """The sequential decision of one cell (:meth:`look` after each look's round)."""

    baseline: str
    experiments: list[str]  #: besides the baseline
    maximum: int  #: the design's maximum rounds (``repetitions``)
    alpha: float  #: the level each comparison is decided at: alpha / m_report
    spending: str = SPENDING
    power: float = POWER  #: at the effect the design is made for (:func:`futility_design`)
    comparisons: dict[str, Comparison] = field(default_factory=dict)

    def __post_init__(self):
        self.comparisons = {name: Comparison() for name in self.experiments}
        self.rounds = look_rounds(self.maximum)
        self.fractions = fractions_of(self.rounds, self.maximum)

    @property
    def measured(self) -> list[str]:
        """The experiments still measured, the baseline first."""
        return [self.baseline] + [e for e in self.experiments if not self.comparisons[e].dropped]

    def is_look(self, rounds: int) -> bool:
        """Whether the cell looks after ``rounds`` rounds."""
        return rounds in self.rounds

    def look(self, rounds: int, times: dict[str, list[float]]) -> list[str]:
        """Decide at the look after ``rounds`` rounds (one of :attr:`rounds`) from the
        successful run times of every measured experiment (``times``, in round order);
        return what changed, one line each."""
        lines, at = [], self.rounds.index(rounds)
        base = times[self.baseline]
        remaining = self.measured[1:]
        level = nominal(self.fractions, self.alpha / 2, self.spending)[at]
        tested = set()
        for name in remaining:
            comparison = self.comparisons[name]
            if min(len(base), len(times[name])) >= MIN_N:
                faster, slower = sides(base, times[name], draws_for(level))
                tested.add(name)
            else:
                faster, slower = 1.0, 1.0
            comparison.faster.append(faster)
            comparison.slower.append(slower)
            p_faster, p_slower = comparison.p(self.fractions, self.spending)
            if not comparison.decided and min(p_faster, p_slower) <= self.alpha:
                comparison.decided = "faster" if p_faster <= p_slower else "slower"
                comparison.at = rounds
                lines.append(f"{name} {comparison.decided} than {self.baseline} "
                             f"(sequential p {min(p_faster, p_slower):.2g} <= {self.alpha:.2g})")
        medians = {e: float(np.median(times[e])) for e in [self.baseline, *remaining]
                   if len(times[e]) >= MIN_N}
        best = min(medians, key=medians.get, default=self.baseline)
        for name in remaining:
            comparison = self.comparisons[name]
            if comparison.decided == "slower":
                comparison.dropped = f"slower than {self.baseline}"
            elif name != best and best != self.baseline and name in medians and \
                    sides(times[name], times[best], draws_for(level))[0] <= level:
                comparison.dropped = f"cannot beat {best}"
            elif not comparison.decided and name in tested and rounds < self.maximum:
                z, bound = self.futility(comparison, at)
                if z < bound:
                    comparison.futile = True
                    comparison.dropped = (f"futile, no difference expected (z {z:.2f} below "
                                          f"the futility boundary {bound:.2f})")
            if comparison.dropped:
                comparison.at = comparison.at or rounds
                lines.append(f"{name} dropped: {comparison.dropped}")
        return lines

    def futility(self, comparison: Comparison, at: int) -> tuple[float, float]:
        """The z-statistic of ``comparison``'s more favourable side at look ``at`` and the
        look's futility boundary (:func:`futility_design`): below it, neither side can
        plausibly cross (the inner wedge of a two-sided design, Jennison and Turnbull ch. 5)."""
        lower = futility_design(self.fractions, self.alpha / 2, self.power, self.spending)[0]
        z = float(_isf(min(comparison.faster[at], comparison.slower[at])))
        return z, lower[at]

    def decided_by(self, name: str) -> str:
        """How the design decided experiment ``name``'s comparison, in words."""
        c = self.comparisons[name]
        if c.futile:
            return f"futility after {c.at} rounds"
        if c.decided:
            return f"{c.decided} after {c.at} rounds"
        if c.dropped:
            return f"dropped after {c.at} rounds: {c.dropped}"
        return f"the maximum ({self.maximum} rounds)"

    def done(self) -> bool:
        """Whether every experiment still measured is decided against the baseline."""
        return all(self.comparisons[e].decided for e in self.measured[1:])


def decisions_text(decided: list[str], power: float) -> str:
    """One line on what decided a report's comparisons under the sequential design, from
    each one's :meth:`Cell.decided_by`.

    >>> decisions_text(["futility after 14 rounds", "faster after 7 rounds",
    ...                 "the maximum (35 rounds)", "futility after 21 rounds"], 0.85)[32:]
    'of 4 comparisons, 1 decided before the maximum, 2 futile (no difference), 1 ran to the maximum'
    """
    kinds = {"decided before the maximum": 0, "futile (no difference)": 0, "dropped": 0,
             "ran to the maximum": 0}
    for how in decided:
        kind = "futile (no difference)" if how.startswith("futility") else \
            "dropped" if how.startswith("dropped") else \
            "ran to the maximum" if how.startswith("the maximum") else "decided before the maximum"
        kinds[kind] += 1
    said = ", ".join(f"{count} {kind}" for kind, count in kinds.items() if count)
    return f"sequential design (power {power:g}): of {len(decided)} comparisons, {said}"


def run_rule(cell: Cell, upto: Callable[[str, int], list[float]]) -> dict[str, int]:
    """The job's rule on ``cell`` (looks at each of its looks but the last, till it is
    done), ``upto(s, n)`` giving experiment s's run times of the rounds before n: the rounds
    each experiment runs."""
    done = dict.fromkeys([cell.baseline, *cell.experiments], cell.maximum)
    for n in cell.rounds[:-1]:
        measured = cell.measured
        cell.look(n, {s: upto(s, n) for s in measured})
        for s in measured[1:]:
            if cell.comparisons[s].dropped:
                done[s] = n
        if cell.done():
            return {s: min(done[s], n) for s in done}
    return done


def stopping_rounds(baseline: str, times: dict[str, list[float]], maximum: int, alpha: float,
                    power: float = POWER) -> dict[str, int]:
    """The rounds each experiment of a cell runs under the job's rule (:class:`Cell`), from
    every experiment's run times of all ``maximum`` rounds in round order (a simulation, or a
    fixed-design campaign replayed)."""
    cell = Cell(baseline, [s for s in times if s != baseline], maximum, alpha,
                power=power)
    return run_rule(cell, lambda s, n: times[s][:n])


def decided_by(design: dict, base: Experiment, others: list[Experiment]) -> dict[str, str]:
    """How the sequential ``design`` (as :func:`analysis_test`'s) decided each of ``others``'
    comparisons with ``base`` (:meth:`Cell.decided_by`), its job's looks replayed on the runs
    of the rounds before each."""
    cell = Cell(base.name, [g.name for g in others], design["maximum"], design["alpha"],
                design.get("spending", SPENDING), design.get("power", POWER))
    runs = {g.name: g for g in [base, *others]}
    run_rule(cell, lambda s, n: [t for t, r in zip(runs[s].times, runs[s].rounds) if r < n])
    return {g.name: cell.decided_by(g.name) for g in others}


def analysis_test(design: dict) -> Callable[[Experiment, Experiment], float]:
    """The analysis' two-sided p-value of an experiment against the baseline under the
    sequential ``design`` (:func:`pinbench.workflow.jobsettings.sequential_design`, with its
    ``maximum``; ``looks``: how many, default :data:`LOOKS`; at 1, the fixed design's test,
    two-sided with a sign): the looks the job made, replayed on both experiments' runs (those
    of the rounds before each look) with the job's relabellings, each side read as
    :func:`sequential_p`, the smaller of the two (the job decides faster or slower alike; the
    direction is the effect's, as under the fixed design)."""
    rounds = look_rounds(design["maximum"], design.get("looks", LOOKS))
    fractions = fractions_of(rounds, design["maximum"])
    spending = design.get("spending", SPENDING)
    levels = nominal(fractions, design["alpha"] / 2, spending)

    def test(base: Experiment, other: Experiment) -> float:
        reached = min(max(base.rounds, default=-1), max(other.rounds, default=-1)) + 1
        comparison = Comparison()
        for n, level in zip(rounds, levels):
            if n > reached:
                break
            x = [t for t, r in zip(base.times, base.rounds) if r < n]
            y = [t for t, r in zip(other.times, other.rounds) if r < n]
            faster, slower = sides(x, y, draws_for(level)) if min(len(x), len(y)) >= MIN_N \
                else (1.0, 1.0)
            comparison.faster.append(faster)
            comparison.slower.append(slower)
        return min(comparison.p(fractions, spending))
    return test
