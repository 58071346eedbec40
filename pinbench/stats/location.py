"""The verdict's test of one comparison: Brunner and Munzel's statistic, by permutation.

X holds the baseline's run times, Y a strategy's. The question is whether a run of the
strategy tends to be faster: the relative effect theta = P[Y < X] + P[Y = X] / 2 is above 1/2
(one-sided), or faster or slower: theta differs from 1/2 (two-sided, the verdicts'). Brunner and Munzel ("The nonparametric Behrens-Fisher problem: asymptotic theory
and a small-sample approximation", Biometrical Journal 42, 2000) studentize the rank-sum
difference with the variances of each sample's placements, so the test holds its level when
theta = 1/2 and the spreads differ, where the Wilcoxon-Mann-Whitney test (whose null is two
identical distributions) does not: with equal medians and a strategy spread 10% against a
baseline spread 2%, Holm over 8 Wilcoxon-Mann-Whitney tests named a winner in 8-9% of cells
at alpha = 0.05. For two lognormal samples with equal medians theta = 1/2 whatever the spreads,
so there the question is the median's; when shapes differ it is "a run tends to be faster".

Its t approximation is too liberal far in the tail (simulated with both samples from one
lognormal, n = 15: 2.5 times the nominal rate at p = 5e-4, 7 times at 5e-5), where a
report-wide decision over a hundred tests needs it. So its p-value is the permutation one
(Neubert and Brunner, "A studentized permutation test for the non-parametric Behrens-Fisher
problem", Computational Statistics & Data Analysis 51, 2007): exact when the two samples
come from one distribution, asymptotically valid when only theta = 1/2. Every relabelling of
the pooled runs is enumerated when there are at most
:data:`pinbench.stats.attainable.EXACT_LIMIT`. Beyond, untied samples (run times read to
the nanosecond) take the **reference distribution** of their (n_x, n_y): without ties the
statistic depends only on which pooled positions are the baseline's, so its permutation
distribution is the same for every such test, and
:data:`pinbench.stats.attainable.REFERENCE` random relabellings (seeded from n_x and n_y)
are drawn once per process and sorted; the p-value is
(b + 1) / (REFERENCE + 1), b of them reaching the observed statistic, found by bisection.
That is a valid p-value (the observed labelling and the reference's are exchangeable under
the null); its resolution is 4e-6, where the former 20,000 draws per test stopped at 5e-5,
and it costs microseconds per test instead of 20,000 statistics for every significant one
(issue 37: a 1,000-campaign simulation was out of reach). The reference's own Monte-Carlo
error is shared by every test of a (n_x, n_y): at p = 1e-3 about 6% of the p-value (one
standard deviation), against 22% of independent noise per test before. Tied samples (a
coarse clock) still draw relabellings of their own, until :data:`EXCEEDANCES` of them reach
the observed statistic or :data:`pinbench.stats.attainable.DRAWS` have been drawn, with
Besag and Clifford's sequential p-value ("Sequential Monte Carlo p-values", Biometrika 78,
1991: h / l when the h-th reaches it at draw l, else (k + 1) / draws when k of draws - 1
did), seeded from the samples, so a table analysed again gives the same p-values.

The verdicts test both directions at once (``two_sided``: the statistic's absolute value,
the direction read from the estimated relative effect, :func:`relative_effect`): a strategy
is then faster, slower, or not shown to differ.

The permutation distribution is the one of two samples with one spread; when the spreads
differ the statistic's own distribution has heavier tails at small n (towards the noisier
sample's n - 1 degrees of freedom: with 10 runs each, spreads 2% and 10%, the permutation
p-value fell at or below 0.001 about twice as often as it should). So a p-value below 1/2 is read as
the t quantile of n_x + n_y - 2 degrees of freedom (what the permutation distribution
approximates) and taken back at the Welch-Satterthwaite degrees of freedom of the samples'
log run times (:func:`welch_df`). These are never more than n_x + n_y - 2, so the p-value only
grows: it stays exact or conservative when the samples come from one distribution. (The
degrees of freedom of Brunner-Munzel's own placement variances were tried first: they are
undefined where the samples are apart, the very case of the smallest p-values, and corrected
less in the simulations.)

Ties (a coarse clock) take mid-ranks; a statistic with a zero variance (the samples apart)
is infinite, and the permutation distribution handles it.

How the test was chosen (against the Wilcoxon-Mann-Whitney test and Brunner-Munzel's t
approximation): ``python -m pinbench.stats.simulate``, docs/statistics-error-rates.md.
"""
from __future__ import annotations

import functools
import hashlib
import itertools
import math

import numpy as np
from scipy.special import stdtr, stdtrit

from pinbench.stats.attainable import DRAWS, EXACT_LIMIT, REFERENCE

#: Random relabellings stop once this many reach the observed statistic (Besag-Clifford's h).
EXCEEDANCES = 20
#: The first batch of random relabellings; each next batch doubles.
FIRST_BATCH = 256
#: Relabellings drawn at once for the reference distribution.
CHUNK = 2 ** 14


class _Pooled:
    """The pooled runs in increasing order, as blocks of tied values: each block's first
    position, size and mid-rank."""

    def __init__(self, values: np.ndarray):
        self.n = len(values)
        order = np.sort(values)
        new_block = np.append(True, np.diff(order) != 0)
        self.start = np.flatnonzero(new_block)
        self.size = np.diff(np.append(self.start, self.n))
        self.ranks = self.start + (self.size + 1) / 2
        self.tied = len(self.start) < self.n

    def statistic(self, labels: np.ndarray) -> np.ndarray:
        """Brunner-Munzel's W for each row of ``labels`` (True: a baseline run, in the
        pooled order), positive when the baseline's runs rank higher (slower)."""
        n_x = int(labels[0].sum())
        n_y = self.n - n_x
        # a run's placement (its pooled mid-rank less its mid-rank within its own sample)
        # is the number of the other sample's runs below it, ties counting one half
        if self.tied:
            upto_x = np.cumsum(labels, axis=1)[:, self.start + self.size - 1]
            in_x = np.diff(upto_x, axis=1, prepend=0)  # baseline runs in each block
            before_x = upto_x - in_x
            in_y = self.size - in_x
            placed_x, placed_y = self.start - before_x + in_y / 2, before_x + in_x / 2
            squares_x = np.einsum("ij,ij,ij->i", in_x, placed_x, placed_x)
            squares_y = np.einsum("ij,ij,ij->i", in_y, placed_y, placed_y)
            mean_x = in_x @ self.ranks / n_x
        else:  # integers: the strategy's runs below each position, and the baseline's
            below_x = np.cumsum(labels, axis=1, dtype=np.int64)
            below_y = np.arange(1, self.n + 1) - below_x
            below_y *= labels
            below_x *= ~labels
            squares_x, squares_y = (below_y * below_y).sum(axis=1), (below_x * below_x).sum(axis=1)
            mean_x = labels @ self.ranks / n_x
        mean_y = (self.ranks @ self.size - mean_x * n_x) / n_y
        # sum of (placement - its mean)^2; a sample's placements average mean - (size + 1) / 2
        var_x = (squares_x - n_x * (mean_x - (n_x + 1) / 2) ** 2) / (n_x - 1)
        var_y = (squares_y - n_y * (mean_y - (n_y + 1) / 2) ** 2) / (n_y - 1)
        top = n_x * n_y * (mean_x - mean_y)
        bottom = self.n * np.sqrt(np.maximum(n_x * var_x + n_y * var_y, 0.0))
        zero = bottom <= 1e-9 * self.n * self.n
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(zero, np.sign(np.round(top, 9)) * np.inf,
                            top / np.where(zero, 1.0, bottom))


def _reaches(values: np.ndarray, observed: float) -> np.ndarray:
    """Which statistics are at least the observed one (within rounding)."""
    return (values >= observed) | np.isclose(values, observed, rtol=1e-9, atol=1e-12)


def _seed(x: np.ndarray, y: np.ndarray) -> int:
    """A seed of the random relabellings from the samples themselves."""
    return int.from_bytes(hashlib.sha256(x.tobytes() + b"|" + y.tobytes()).digest()[:8], "big")


def brunner_munzel(x: np.ndarray, y: np.ndarray, draws: int = DRAWS, welch: bool = True,
                   two_sided: bool = False, reference: bool = True) -> tuple[float, str]:
    """One-sided p-value (H1: a run of Y tends to be faster than one of X) and its method;
    ``two_sided``: the p-value of H1: theta != 1/2 (the statistic's absolute value), whose
    direction is the sign of :func:`relative_effect` - 1/2.

    ``draws`` (at most :data:`pinbench.stats.attainable.DRAWS`): the most random
    relabellings (the smallest p-value is 1 / draws), where there are more than
    :data:`pinbench.stats.attainable.EXACT_LIMIT` relabellings. ``welch=False``: the
    permutation p-value alone, without the correction for unequal spreads;
    ``reference=False``: relabellings drawn for this test even without ties (the former
    test; both for comparison, ``python -m pinbench.stats.simulate_report``).

    >>> brunner_munzel(np.array([3.0, 4.5, 6.0]), np.array([1.0, 1.5, 2.0]))  # apart: 1 / 20
    (0.05, 'brunner-munzel-exact')
    >>> brunner_munzel(np.array([3.0, 4.5, 6.0]), np.array([1.0, 1.5, 2.0]), two_sided=True)
    (0.1, 'brunner-munzel-exact')
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    values = np.concatenate([x, y])
    pooled = _Pooled(values)
    observed = float(pooled.statistic(_labels_of(values, len(x))[None, :])[0])
    sides = 2 if two_sided else 1
    p, method = _permutation_p(pooled, abs(observed) if two_sided else observed, len(x),
                               draws, _seed(x, y), two_sided, reference)
    if welch and p < sides / 2:  # the permutation distribution's t quantile, at the samples' df
        quantile = -stdtrit(pooled.n - 2, p / sides)  # SciPy's t.isf and t.sf, without
        p = max(p, sides * float(stdtr(welch_df(x, y), -quantile)))  # scipy.stats' import
    return p, method


def relative_effect(x: np.ndarray, y: np.ndarray) -> float:
    """The estimated relative effect theta = P[Y < X] + P[Y = X] / 2 (above 1/2: a run of Y
    tends to be faster), from the samples' mid-ranks.

    >>> relative_effect(np.array([3.0, 4.0]), np.array([1.0, 4.0]))
    0.625
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    from scipy.stats import rankdata  # the analysis' alone: a measuring job does not import it

    ranks = rankdata(np.concatenate([x, y]))
    return float((ranks[:len(x)].mean() - (len(x) + 1) / 2) / len(y))


def welch_df(x: np.ndarray, y: np.ndarray) -> float:
    """The Welch-Satterthwaite degrees of freedom of the two samples' log run times (at
    most n_x + n_y - 2; that where both spreads are 0)."""
    part_x, part_y = np.var(np.log(x), ddof=1) / len(x), np.var(np.log(y), ddof=1) / len(y)
    spread = part_x ** 2 / (len(x) - 1) + part_y ** 2 / (len(y) - 1)
    return float((part_x + part_y) ** 2 / spread) if spread > 0 else len(x) + len(y) - 2.0


def _permutation_p(pooled: _Pooled, observed: float, n_x: int, draws: int, seed: int,
                   absolute: bool = False, reference: bool = True) -> tuple[float, str]:
    """The share of relabellings whose statistic (``absolute``: its absolute value) reaches
    the observed one: all of them, those of the reference distribution (untied samples,
    ``reference``), or drawn at random with Besag and Clifford's sequential p-value (see
    the module's text)."""
    def statistic(labels: np.ndarray) -> np.ndarray:
        values = pooled.statistic(labels)
        return np.abs(values) if absolute else values

    if math.comb(pooled.n, n_x) <= EXACT_LIMIT:
        every = statistic(_every_labelling(pooled.n, n_x))
        return float(_reaches(every, observed).mean()), "brunner-munzel-exact"
    if reference and not pooled.tied:
        reference = _reference(n_x, pooled.n - n_x)[1 if absolute else 0]
        cut = observed - (1e-12 + 1e-9 * abs(observed)) if np.isfinite(observed) else observed
        reached = len(reference) - int(np.searchsorted(reference, cut, side="left"))
        return (reached + 1) / (len(reference) + 1), "brunner-munzel-permutation"
    rng = np.random.default_rng(seed)
    done, reached, batch = 0, 0, FIRST_BATCH
    while done < draws - 1:
        batch = min(batch, draws - 1 - done)
        # a random choice of n_x positions: those whose random key is below the
        # (n_x + 1)-th smallest key of the row
        keys = rng.random((batch, pooled.n))
        drawn = keys < np.partition(keys, n_x, axis=1)[:, n_x:n_x + 1]
        counts = np.cumsum(_reaches(statistic(drawn), observed))
        if reached + counts[-1] >= EXCEEDANCES:
            at = int(np.searchsorted(counts, EXCEEDANCES - reached)) + 1
            return EXCEEDANCES / (done + at), "brunner-munzel-permutation"
        done, reached, batch = done + batch, reached + int(counts[-1]), batch * 2
    return (reached + 1) / draws, "brunner-munzel-permutation"


@functools.lru_cache(maxsize=8)
def _reference(n_x: int, n_y: int) -> tuple[np.ndarray, np.ndarray]:
    """The statistics of :data:`REFERENCE` random relabellings of n_x + n_y untied runs,
    sorted, and their absolute values, sorted (seeded from n_x and n_y; kept on disk between
    processes: :mod:`pinbench.stats.disk_cache`)."""
    from pinbench.stats.disk_cache import cached

    values = cached("reference", (n_x, n_y, REFERENCE, CHUNK), [__file__], (REFERENCE,),
                    lambda: _draw_reference(n_x, n_y))
    return values, np.sort(np.abs(values))


def _draw_reference(n_x: int, n_y: int) -> np.ndarray:
    """:func:`_reference`'s statistics, sorted, drawn."""
    pooled = _Pooled(np.arange(n_x + n_y, dtype=float))
    rng = np.random.default_rng([n_x, n_y])
    chunks = []
    for _ in range(REFERENCE // CHUNK):
        keys = rng.random((CHUNK, pooled.n))
        chunks.append(pooled.statistic(keys < np.partition(keys, n_x, axis=1)[:, n_x:n_x + 1]))
    return np.sort(np.concatenate(chunks))


@functools.lru_cache(maxsize=16)
def _every_labelling(n: int, n_x: int) -> np.ndarray:
    """Every choice of ``n_x`` baseline runs among ``n`` pooled ones, one row each."""
    chosen = np.fromiter(itertools.chain.from_iterable(itertools.combinations(range(n), n_x)),
                         dtype=np.intp).reshape(-1, n_x)
    every = np.zeros((len(chosen), n), dtype=bool)
    np.put_along_axis(every, chosen, True, axis=1)
    every.setflags(write=False)
    return every


def _labels_of(values: np.ndarray, n_x: int) -> np.ndarray:
    """The observed labelling in sorted order (True: a baseline run), ties split in
    order (the statistic does not depend on how tied runs are labelled)."""
    order = np.argsort(values, kind="stable")
    return order < n_x
