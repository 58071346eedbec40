"""The verdict's test (pinbench.stats.location): Brunner-Munzel's statistic against SciPy's,
its permutation p-value against every relabelling, its validity under H0 and with unequal
spreads; what n runs can reach (pinbench.stats.attainable) and detect
(pinbench.stats.detectable)."""
import itertools
import math

import numpy as np
import pytest
from scipy import stats

from pinbench.stats.attainable import least_repetitions, smallest_p
from pinbench.stats.detectable import detectable_speedup
from pinbench.stats.location import _labels_of, _Pooled, brunner_munzel, relative_effect
from pinbench.stats.simulate import standard_error


def statistic(x, y) -> float:
    values = np.concatenate([x, y])
    return float(_Pooled(values).statistic(_labels_of(values, len(x))[None, :])[0])


@pytest.mark.parametrize("seed", range(4))
def test_the_statistic_is_brunner_munzels(seed):
    """SciPy's statistic (its sign: positive when y ranks higher), ties (a coarse clock)
    included."""
    rng = np.random.default_rng(seed)
    x, y = rng.lognormal(0, 0.05, 7), rng.lognormal(0, 0.05, 9)
    if seed % 2:
        x, y = np.round(x, 2), np.round(y, 2)
    assert statistic(x, y) == pytest.approx(-stats.brunnermunzel(x, y).statistic)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # SciPy's, on relabellings apart
def test_the_exact_p_value_counts_every_relabelling():
    """5 against 6 runs: the share of the 462 relabellings whose statistic reaches the
    observed one, by SciPy's statistic; without the correction for unequal spreads (two
    samples from one distribution: it can only raise the p-value)."""
    rng = np.random.default_rng(7)
    x, y = rng.lognormal(0.05, 0.05, 5), rng.lognormal(0, 0.05, 6)
    values = np.concatenate([x, y])
    reached = 0
    for chosen in itertools.combinations(range(11), 5):
        other = np.delete(values, list(chosen))
        reached += -stats.brunnermunzel(values[list(chosen)], other).statistic >= \
            -stats.brunnermunzel(x, y).statistic - 1e-12
    p, method = brunner_munzel(x, y, welch=False)
    assert method == "brunner-munzel-exact" and p == pytest.approx(reached / 462)
    assert brunner_munzel(x, y)[0] >= p


def test_samples_apart_reach_the_smallest_p_value():
    """With equal spreads (of the log times); unequal ones raise it (the correction)."""
    faster = np.array([1.0, 1.1, 1.2, 1.3])
    assert brunner_munzel(2 * faster, faster) == (pytest.approx(1 / 70), "brunner-munzel-exact")
    assert 1 / 70 < brunner_munzel(faster + 1, faster)[0] < 0.05
    assert brunner_munzel(faster, 2 * faster)[0] == 1.0  # a slowdown is never significant
    p, method = brunner_munzel(np.linspace(2, 3, 35), np.linspace(1, 1.5, 35))
    assert method == "brunner-munzel-permutation" and p == smallest_p(35, 35)
    same = np.array([1.0, 1.0, 2.0, 2.0])
    assert brunner_munzel(same, same)[0] > 0.5  # all tied with each other: nothing to find


def test_the_p_value_depends_on_the_samples_only():
    rng = np.random.default_rng(2)
    x, y = rng.lognormal(0.02, 0.05, 30), rng.lognormal(0, 0.05, 30)
    assert brunner_munzel(x, y) == brunner_munzel(x.copy(), y.copy())


def test_the_level_holds_under_h0_and_with_unequal_spreads():
    """500 comparisons of 12 against 12 runs (random relabellings) from one lognormal, and
    500 with equal medians and spreads 2% (baseline) and 10%: the share of p-values at or
    below 0.05 stays within alpha and 3 Monte-Carlo standard errors; the
    Wilcoxon-Mann-Whitney test, which assumes one distribution, leaves it with unequal
    spreads and unequal numbers of runs (24 of the noisier)."""
    rng = np.random.default_rng(11)
    bound = 0.05 + 3 * standard_error(0.05, 500)
    same = [brunner_munzel(rng.lognormal(0, 0.05, 12), rng.lognormal(0, 0.05, 12))[0]
            for _ in range(500)]
    assert np.mean(np.array(same) <= 0.05) <= bound
    spread = [(rng.lognormal(0, 0.10, 12), rng.lognormal(0, 0.02, 24)) for _ in range(500)]
    ours = [brunner_munzel(x, y)[0] for x, y in spread]
    wmw = [stats.mannwhitneyu(x, y, alternative="greater").pvalue for x, y in spread]
    assert np.mean(np.array(ours) <= 0.05) <= bound < np.mean(np.array(wmw) <= 0.05)


def test_what_n_runs_can_reach():
    assert smallest_p(3, 3) == 1 / 20 and smallest_p(4, 4) == 1 / 70
    # whatever the observed spreads: the correction for unequal spreads at its most
    assert least_repetitions(1, 0.05) == 4 and least_repetitions(2, 0.05) == 5
    assert least_repetitions(144, 0.05) == 9
    assert least_repetitions(10 ** 6, 0.05) is None  # below 1 / (REFERENCE + 1): never
    # the verdicts' test is two-sided: two relabellings put the samples apart
    assert smallest_p(3, 3, sides=2) == 1 / 10
    assert least_repetitions(1, 0.05, sides=2) == 5 and least_repetitions(72, 0.05, sides=2) == 9


def test_the_detectable_speedup_follows_noise_runs_and_level():
    base = detectable_speedup(0.07, 35, 35, 0.05)
    assert 1 < base < detectable_speedup(0.14, 35, 35, 0.05)  # noisier
    assert detectable_speedup(0.07, 70, 70, 0.05) < base  # more runs
    assert detectable_speedup(0.07, 35, 35, 0.05 / 144) > base  # a report-wide level
    assert detectable_speedup(0.07, 3, 3, 0.025) is None  # 1/20 can never be <= 0.025
    # Noether's formula at theta: log S = noise * Phi^-1(theta)
    theta = 0.5 + (stats.norm.ppf(0.95) + stats.norm.ppf(0.8)) * math.sqrt(71 / (12 * 35 * 35))
    assert math.log(base) == pytest.approx(0.07 * stats.norm.ppf(theta))


def test_two_sided_finds_either_direction_and_the_effect_says_which():
    faster = np.array([1.0, 1.1, 1.2, 1.3])
    for x, y in ((2 * faster, faster), (faster, 2 * faster)):
        assert brunner_munzel(x, y, two_sided=True) == (pytest.approx(2 / 70),
                                                        "brunner-munzel-exact")
    assert relative_effect(2 * faster, faster) == 1.0 and relative_effect(faster, 2 * faster) == 0
    rng = np.random.default_rng(5)  # untied, 35 runs: the reference distribution
    x, y = rng.lognormal(0, 0.05, 35), rng.lognormal(0, 0.05, 35)
    one, two = brunner_munzel(x, y)[0], brunner_munzel(x, y, two_sided=True)[0]
    assert two == pytest.approx(2 * min(one, 1 - one), rel=0.05, abs=1e-4)
