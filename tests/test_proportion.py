"""Proportion intervals against R's prop.test (reference data from R 4.2)."""
import json
import math
from pathlib import Path

import pytest

from pinbench.stats.proportion import approximation_warning, benchmarks_needed, wilson_interval

REFERENCE = Path(__file__).resolve().parent / "data" / "speedup-test-cases.json"  # R 4.2.2 reference
CASES = json.loads(REFERENCE.read_text())["proportions"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['a']}of{c['b']}")
def test_matches_prop_test(case):
    low, high = wilson_interval(case["a"], case["b"], case["level"])
    assert low == pytest.approx(case["low"], abs=1e-6)
    assert high == pytest.approx(case["high"], abs=1e-6)


def test_interval_contains_the_estimate_and_narrows_with_more_benchmarks():
    for a, b in [(1, 4), (3, 7), (10, 20), (19, 20)]:
        low, high = wilson_interval(a, b)
        assert low <= a / b <= high
    assert (lambda w: w[1] - w[0])(wilson_interval(50, 100)) < (lambda w: w[1] - w[0])(wilson_interval(5, 10))


def test_warnings_and_sample_size():
    assert approximation_warning(9, 9) and not approximation_warning(50, 100)
    assert benchmarks_needed(5, 10, 0.1) == 97  # 1.96^2 * 0.25 / 0.01 = 96.04
    # none or all of b benchmarks: not 0 needed, but as many as the interval's nearest share
    # to 1/2 asks, fewer the more benchmarks agree
    for b in (3, 10, 40):
        low, high = wilson_interval(0, b)
        assert benchmarks_needed(0, b, 0.1) == benchmarks_needed(b, b, 0.1) == \
            math.ceil(1.959964 ** 2 * min(high, 0.5) * (1 - min(high, 0.5)) / 0.01)
    assert benchmarks_needed(0, 3, 0.1) == 97 > benchmarks_needed(0, 10, 0.1) == 87 > \
        benchmarks_needed(0, 40, 0.1)
    with pytest.raises(ValueError):
        wilson_interval(3, 2)
