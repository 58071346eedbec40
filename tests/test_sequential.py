"""The sequential design: its boundaries against published values, its futility rule against
hand values, a measuring job that stops on a planted effect, and without one runs to its
maximum or stops for futility, and a tiny simulation of both designs (the full figures:
``python -m pinbench.stats.simulate_sequential``)."""
import json
import math
import random

import pytest
from scipy import stats
from test_launcher import TWO_PUS, job, placement

import pinbench.measure.job as measuring
from pinbench.measure.job import run_job
from pinbench.results.layout import STATS_FILES
from pinbench.results.runs import RunRecord, write_runs
from pinbench.stats.analyse import analyse, verdict_tables
from pinbench.stats import sequential
from pinbench.stats.sequential import (Cell, boundaries, fixed_runs, fractions_of,
                                       futility_design, look_rounds, maximum_for, sequential_p,
                                       spent, stopping_rounds)

FIVE = fractions_of([1, 2, 3, 4, 5], 5)


def test_obrien_fleming_type_boundaries_are_the_published_ones():
    """Lan-DeMets O'Brien-Fleming type, one-sided 0.025, 5 equally spaced looks: 4.8769,
    3.3569, 2.6803, 2.2898, 2.0310 (Jennison and Turnbull 2000, table 7.6's design; R's
    gsDesign sfLDOF, ldbounds); Pocock type: 2.4380, 2.4268, 2.4101, 2.3966, 2.3859."""
    assert boundaries(FIVE, 0.025, "obf") == pytest.approx(
        [4.8769, 3.3569, 2.6803, 2.2898, 2.0310], abs=2e-4)
    assert boundaries(FIVE, 0.025, "pocock") == pytest.approx(
        [2.4380, 2.4268, 2.4101, 2.3966, 2.3859], abs=2e-4)
    assert boundaries((1.0,), 0.05) == pytest.approx([1.6449], abs=1e-4)  # one look: fixed
    assert spent(1.0, 0.05, "obf") == pytest.approx(0.05) and spent(0.2, 0.05, "obf") < 1e-4


def test_the_power_family_boundaries_spend_alpha_t_to_the_rho():
    """The design's spending, alpha t^1.5 (Kim and DeMets): the first look's boundary is
    the normal quantile of what it spends, and a seeded Monte Carlo of the canonical joint
    distribution (200000 paths) crosses each look first with the increments of alpha t^1.5,
    one-sided 0.025, five equally spaced looks."""
    import numpy as np

    assert sequential.SPENDING == "t^1.5"
    upper = boundaries(FIVE, 0.025)
    assert upper[0] == pytest.approx(stats.norm.isf(0.025 * 0.2 ** 1.5), abs=1e-6)
    assert list(upper) == sorted(upper, reverse=True)  # the boundaries fall look after look
    steps = np.random.default_rng(3).standard_normal((200_000, 5)) * math.sqrt(0.2)
    z = np.cumsum(steps, axis=1) / np.sqrt(FIVE)
    first = np.where((z >= upper).any(axis=1), (z >= upper).argmax(axis=1), -1)
    crossed = [(first == k).mean() for k in range(5)]
    spends = np.diff([0.0] + [0.025 * t ** 1.5 for t in FIVE])
    assert crossed == pytest.approx(spends, abs=5e-4)
    with pytest.raises(ValueError, match="unknown spending function"):
        spent(0.5, 0.05, "linear")


def test_the_sequential_p_value_is_the_smallest_level_that_crosses():
    nominal = sequential.nominal(FIVE, 0.01)
    # at the last look, exactly its nominal level at 0.01 (one-sided): 0.02 two-sided
    assert sequential_p([0.5, 0.5, 0.5, 0.5, nominal[-1]], FIVE) == pytest.approx(0.02, rel=1e-3)
    # an earlier crossing at the same level counts as much; a larger p-value, a larger level
    assert sequential_p([0.5, 0.5, nominal[2]], FIVE) == pytest.approx(0.02, rel=1e-3)
    assert sequential_p([0.5, 0.5, 0.5, 0.5, 2 * nominal[-1]], FIVE) > 0.02
    assert sequential_p([0.9], FIVE) == 1.0


def test_the_futility_boundaries_spend_beta_and_give_the_power_they_are_made_for():
    """A seeded Monte Carlo of the canonical joint distribution (Brownian motion at the five
    looks, 40000 paths): under no effect the efficacy boundaries alone cross with
    probability alpha (futility non-binding); at the design's effect each look's futility
    boundary is crossed first with probability beta (t_j - t_{j-1}) (linear spending) and
    the efficacy ones with the design's power, the futility boundaries binding."""
    import numpy as np

    alpha, power = 0.05 / 24, 0.85
    lower, drift = futility_design(FIVE, alpha, power)
    upper = boundaries(FIVE, alpha)
    assert lower[-1] == upper[-1] and all(a < c for a, c in zip(lower[:-1], upper))
    steps = np.random.default_rng(11).standard_normal((40_000, 5)) * math.sqrt(0.2)
    for effect in (0.0, drift):
        z = np.cumsum(steps + effect * 0.2, axis=1) / np.sqrt(FIVE)
        alive = np.ones(len(z), bool)
        efficacy, futile = np.zeros(5), np.zeros(5)
        for k in range(5):
            up = alive & (z[:, k] >= upper[k])
            down = alive & ~up & (z[:, k] < lower[k]) if effect else np.zeros(len(z), bool)
            efficacy[k], futile[k] = up.mean(), down.mean()
            alive &= ~(up | down)
        if effect:
            assert efficacy.sum() == pytest.approx(power, abs=0.006)
            assert futile[:-1] == pytest.approx([0.15 * 0.2] * 4, abs=0.004)
        else:
            assert efficacy.sum() == pytest.approx(alpha, abs=0.0012)


def test_the_design_matches_the_fixed_design_it_names():
    """The drift of the design's effect at its maximum is larger than the fixed design's
    z_alpha + z_beta by the maximum's inflation: at the default campaign's 12 tests (each
    side at 0.05 / 24), 46 rounds at most have the power of 35 fixed runs (the normal
    model's match of 35 runs times the margin, 1.05), 45 have less."""
    alpha = 0.05 / 24
    assert maximum_for(35, alpha) == 46
    assert fixed_runs(46, alpha) >= 35 > fixed_runs(45, alpha)
    drift = futility_design(fractions_of(look_rounds(46), 46), alpha)[1]
    fixed = float(stats.norm.isf(alpha) + stats.norm.isf(0.15))
    # the fixed design of fixed_runs(46) x the margin runs has at most the power 0.85 there
    runs = fixed_runs(46, alpha) * sequential.MARGIN
    assert drift * math.sqrt(runs / 46) <= fixed < drift * math.sqrt((runs + 1) / 46)


def test_a_look_stops_a_comparison_for_futility_below_its_boundary():
    """At the second of five looks (14 of 35 rounds), two samples alike (z about 0) are
    below the futility boundary (about 1.0): futile; at the first (z about 0.5 above a
    boundary about 0), not yet."""
    rng = random.Random(2)
    times = {s: [1 + 0.01 * rng.gauss(0, 1) for _ in range(14)] for s in ("os", "a")}
    cell = Cell("os", ["a"], 35, 0.05 / 12)
    comparison = cell.comparisons["a"]
    assert cell.look(7, {s: t[:7] for s, t in times.items()}) == []
    z, bound = cell.futility(comparison, 0)
    assert not comparison.futile and z >= bound and abs(bound) < 0.1
    lines = cell.look(14, times)
    z, bound = cell.futility(comparison, 1)
    assert abs(z) < 0.5 < bound == pytest.approx(1.02, abs=0.01) and comparison.futile
    assert cell.done()
    assert lines == [f"a dropped: futile, no difference expected (z {z:.2f} below the "
                     f"futility boundary {bound:.2f})"]
    assert cell.decided_by("a") == "futility after 14 rounds"


def test_futility_stops_most_cells_without_an_effect_and_none_with_a_large_one():
    """A tiny seeded simulation (3% noise, 35 rounds, 8 cells of two comparisons each)."""
    import numpy as np

    rng = np.random.default_rng(5)
    under_h0, planted = [], []
    for _ in range(8):
        noise = {s: list(np.exp(0.03 * rng.standard_normal(35))) for s in ("os", "a", "b")}
        under_h0.append(stopping_rounds("os", noise, 35, 0.05 / 16))
        noise["a"] = [0.9 * t for t in noise["a"]]  # 10% faster: decided, never futile
        cell = Cell("os", ["a", "b"], 35, 0.05 / 16)
        planted.append(sequential.run_rule(cell, lambda s, n, noise=noise: noise[s][:n]))
        assert cell.comparisons["a"].decided == "faster" and not cell.comparisons["a"].futile
    assert sum(r["os"] < 35 for r in under_h0) >= 6
    assert sum(sum(r.values()) for r in under_h0) < 0.7 * 8 * 3 * 35


PLACEMENTS = {"os": placement("os", None), "compact": placement("compact", TWO_PUS),
              "scatter": placement("scatter", TWO_PUS)}


def planted(factors: dict[str, float], seed: int = 3, other_cpu: float | None = None):
    """A measure_one that times each strategy's runs as its factor x lognormal noise (2%)
    (``other_cpu``: what each run says other processes used)."""
    rng = random.Random(seed)

    def measure_one(job, strategy, rep, index, launcher=None, kept=None):
        time_s = factors.get(strategy, 1.0) * math.exp(0.02 * rng.gauss(0, 1))
        return RunRecord(job.machine, job.benchmark, job.threads, strategy, rep, index, True, "",
                         time_s, "wall", time_s, time_s, 0.0, 0, False, True, "n/a", "", "",
                         0.0, "", "", other_cpu=other_cpu)
    return measure_one


def sequential_job(factors, monkeypatch, tmp_path):
    monkeypatch.setattr(measuring, "measure_one", planted(factors))
    spec = job("/bin/true", PLACEMENTS, repetitions=20, quiet={"threshold": 0.1, "max_wait_s": 0},
               sequential={"baseline": "os", "alpha": 0.05 / 12, "power": 0.85})
    said = []
    records = run_job(spec, tmp_path / "j.jsonl", tmp_path / "t.csv", str(tmp_path / "lock"),
                      said.append)
    journaled = [json.loads(line)["strategy"]
                 for line in (tmp_path / "j.jsonl").read_text().splitlines()[1:]]
    assert len(journaled) == len(records)  # runs only: the looks follow from them
    return records, said


def test_a_job_stops_early_on_a_large_effect_and_drops_the_loser(monkeypatch, tmp_path):
    records, said = sequential_job({"compact": 0.8, "scatter": 0.95}, monkeypatch, tmp_path)
    assert said[0].endswith("sequential design, at most 20 rounds, the power of 15 fixed runs "
                            "(the power of 20: repetitions 27)")
    assert look_rounds(20) == [4, 8, 12, 16, 20]
    runs = {s: sum(r.strategy == s for r in records) for s in PLACEMENTS}
    assert runs["compact"] == runs["os"] < 20  # decided before the maximum
    assert runs["scatter"] <= runs["os"]  # faster than os, dropped: it cannot beat compact
    assert any("compact faster than os" in line for line in said)
    assert any("scatter dropped: cannot beat compact" in line for line in said)
    assert any("every comparison decided after" in line and "runs of 60 saved" in line
               for line in said)
    # the analysis replays the looks: compact faster at the job's level, in the cell and over
    # the report, and the verdict says which design made it
    design = {"baseline": "os", "alpha": 0.05 / 12, "maximum": 20}
    [verdict], comparisons = verdict_tables(records, "os", 0.05, sequential=design)
    assert verdict["design"] == "sequential" and verdict["best_report"] == "compact"
    assert next(c for c in comparisons if c["strategy"] == "compact")["p_raw"] <= 0.05 / 12


def test_the_analysis_names_slower_what_the_job_decided_slower(monkeypatch, tmp_path):
    """Both sides count in the analysis as in the job: a cell whose strategies are all 25%
    slower is a slower cell, as under the fixed design, not a cell without a difference."""
    records, said = sequential_job({"compact": 1.25, "scatter": 1.25}, monkeypatch, tmp_path)
    assert any("compact slower than os" in line for line in said)
    design = {"baseline": "os", "alpha": 0.05 / 12, "maximum": 20}
    [verdict], comparisons = verdict_tables(records, "os", 0.05, sequential=design)
    assert verdict["outcome"] == "slower" and verdict["best_report"] == ""
    assert {c["outcome"] for c in comparisons if c["strategy"] != "os"} == {"slower"}


def test_a_job_without_an_effect_stops_for_futility_and_the_analysis_says_so(monkeypatch,
                                                                             tmp_path):
    records, said = sequential_job({}, monkeypatch, tmp_path)
    assert len(records) < 60
    assert any("dropped: futile, no difference expected" in line for line in said)
    design = {"baseline": "os", "alpha": 0.05 / 12, "maximum": 20,
              "power": 0.85}
    [verdict], comparisons = verdict_tables(records, "os", 0.05, sequential=design)
    assert verdict["best_report"] == ""
    decided = {c["strategy"]: c["decided_by"] for c in comparisons}
    assert decided["os"] == "" and any(d.startswith("futility after") for d in decided.values())
    write_runs(records, tmp_path / "runs.csv")  # the analysis' summary counts them
    outputs = {kind: tmp_path / name for kind, name in STATS_FILES.items()}
    text = analyse(tmp_path / "runs.csv", outputs, campaign="c", baseline="os",
                   confidence=0.95, sequential=design)
    assert text.startswith("sequential design (power 0.85): of 2 comparisons, ")
    assert "futile (no difference)" in text.splitlines()[0]
    runs = {s: sum(r.strategy == s for r in records) for s in PLACEMENTS}
    for strategy, how in decided.items():  # the analysis' replay stops where the job did
        if how.startswith("futility after"):
            assert runs[strategy] == int(how.split()[2])


def test_a_tiny_simulation_of_both_designs():
    import numpy as np

    from pinbench.stats.simulate_sequential import Condition, _times, measure

    rates = measure(Condition("planted", cells=2, strategies=3, n=15, planted={"s1": 0.8}),
                    campaigns=2, seed=4)
    fixed, sequential = rates["fixed, two-sided"], rates["sequential"]
    assert fixed["power"] == sequential["power"] == 1.0  # 20% faster: found by both
    assert sequential["lost"] == sequential["gained"] == 0
    assert sequential["runs"] < fixed["runs"] == 15  # the sequential design stopped early
    assert sequential["false"] == fixed["false"] == 0.0
    nothing = measure(Condition("H0", cells=2, strategies=3, n=15), campaigns=2, seed=4)
    assert nothing["sequential"]["runs"] < 0.8 * 15 and nothing["sequential"]["power"] is None
    # a real campaign's effects, cell by cell: one planted faster strategy, found by both
    by_cell = measure(Condition("cells", cells=2, strategies=1, n=15, by_cell=({"s1": 0.8}, {})),
                      campaigns=1, seed=4)
    assert by_cell["sequential"]["planted"] == 1 == by_cell["sequential"]["found"]
    # a real campaign's runs drawn again (a bootstrap): s1's runs are all below the baseline's
    samples = ({"os": tuple(1 + 0.01 * k for k in range(10)),
                "s1": tuple(0.5 + 0.01 * k for k in range(10))},)
    condition = Condition("runs", cells=1, strategies=1, n=15, by_cell=({"s1": 0.5},),
                          samples=samples)
    times = _times(condition, np.random.default_rng(1), 0, 40)
    assert all(set(times[s]) <= set(samples[0][s]) for s in ("os", "s1"))
    drawn = measure(condition, campaigns=2, seed=4)
    assert drawn["sequential"]["found"] == 2 == drawn["fixed, two-sided"]["found"]
    assert drawn["sequential"]["runs"] < 15


def test_the_spread_of_a_campaign_is_its_experiments_median_spread_of_log_times():
    from pinbench.stats.simulate_sequential import spread_of

    times = {"os": [1.0, math.e, math.e ** 2], "a": [1.0, math.e ** 2, math.e ** 4]}
    records = [RunRecord("m", "b", 2, s, k, k, True, "", t, "wall", t, t, 0.0, 0, False, True,
                         "n/a", "", "", 0.0, "", "") for s, ts in times.items()
               for k, t in enumerate(ts)]
    assert spread_of(records) == pytest.approx(1.5)  # standard deviations 1 and 2


def test_the_normal_model_of_the_design_has_the_fixed_power_in_fewer_runs():
    """The design's comparison in the normal model (``--normal``): at the effect the fixed
    design of 35 runs finds with 85%, at least 85% (the margin's more), in fewer runs than
    35 under no effect and at that effect; O'Brien-Fleming's spending needs more runs at
    twice that effect (it cannot stop early on it)."""
    from pinbench.stats.simulate_sequential import normal_model

    design = normal_model(sequential.SPENDING, paths=8000)
    assert design["maximum"] == maximum_for(35, 0.05 / 48) == 45
    assert design[1.0]["power"] >= 0.85 and design[2.0]["power"] > 0.99
    assert design[0.0]["runs"] < 0.6 and design[1.0]["runs"] < 0.85 and design[2.0]["runs"] < 0.4
    assert normal_model("obf", paths=8000)[2.0]["runs"] > 1.4 * design[2.0]["runs"]
