"""The verdicts' error rates and power over simulated campaigns that go through the analysis's
own data path (pinbench.stats.simulate, its small grid: 18 cells per campaign, 4 strategies
one of which shares another's placement, 20 runs). The full grid, with the figures of
docs/statistics-error-rates.md: python -m pinbench.stats.simulate.

Each rate is checked against alpha plus 3 Monte-Carlo standard errors of its own count."""
import pytest

from pinbench.stats.simulate import grid, measure, standard_error

#: Simulations and Snakemake runs of several seconds each: outside `make test-fast`.
pytestmark = pytest.mark.slow

ALPHA = 0.05
CONDITIONS = {condition.name.split(",")[0]: (condition, campaigns)
              for condition, campaigns in grid("small", ALPHA)}


@pytest.fixture(scope="module")
def rates() -> dict[str, dict]:
    return {name: measure(condition, campaigns, ALPHA, seed=100 + k)
            for k, (name, (condition, campaigns)) in enumerate(CONDITIONS.items())}


def within_alpha(rate: float, count: int) -> bool:
    return rate <= ALPHA + 3 * standard_error(ALPHA, count)


def test_nothing_differs(rates):
    """The report-wide decision names a winner in at most alpha of the campaigns, each cell's
    verdict in at most alpha of the cells; read together, the cells' verdicts name one in
    most campaigns (what the closing line used to count)."""
    r = rates["H0: nothing differs"]
    assert within_alpha(r["campaign_false_report"], r["campaigns"])
    assert within_alpha(r["cell_false"], r["cells"])
    assert r["campaign_false_cell"] > 0.3


def test_two_equal_winners_are_rarely_called_clear(rates):
    r = rates["two strategies equally 5% faster"]
    assert within_alpha(r["clear"], r["cells"])
    assert r["cell_found"] > 0.6 and r["report_found"] < r["cell_found"]


def test_unequal_spreads(rates):
    r = rates["equal medians"]
    assert within_alpha(r["cell_false"], r["cells"])
    assert within_alpha(r["campaign_false_report"], r["campaigns"])


def test_autocorrelated_runs_without_drift(rates):
    """Drift flags at most alpha of the jobs and campaigns; the former test, several times."""
    r = rates["no drift"]
    assert within_alpha(r["drift_job"], r["jobs"])
    assert within_alpha(r["drift_campaign"], r["campaigns"])
    assert r["drift_job_former"] > 3 * ALPHA


def test_the_detectable_speedup_is_found_as_often_as_it_says(rates):
    """A strategy faster by the speedup :mod:`pinbench.stats.detectable` gives for these runs
    is found in about 80% of the cells (the formula is an approximation)."""
    [name] = [n for n in rates if n.startswith("s1 faster by its detectable speedup")]
    r = rates[name]
    assert 0.65 <= r["cell_found"] <= 0.95
    assert r["report_found"] < r["cell_found"]  # the report-wide level is stricter


def test_too_few_runs_find_nothing(rates):
    """3 runs and two tests per cell: not even a 50% speedup can be significant."""
    r = rates["3 runs"]
    assert r["cell_found"] == r["report_found"] == 0
