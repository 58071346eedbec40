"""The sequential design: its boundaries against published values, a measuring job that stops
on a planted effect and runs to its maximum without one, and a tiny simulation of both designs
(the full figures: ``python -m pinbench.stats.simulate_sequential``)."""
import json
import math
import random

import pytest
from test_launcher import TWO_PUS, job, placement

import pinbench.measure.job as measuring
from pinbench.measure.job import run_job
from pinbench.results.runs import RunRecord
from pinbench.stats.analyse import verdict_tables
from pinbench.stats import sequential
from pinbench.stats.sequential import boundaries, fractions_of, look_rounds, sequential_p, spent

FIVE = fractions_of([1, 2, 3, 4, 5], 5)


def test_obrien_fleming_type_boundaries_are_the_published_ones():
    """Lan-DeMets O'Brien-Fleming type, one-sided 0.025, 5 equally spaced looks: 4.8769,
    3.3569, 2.6803, 2.2898, 2.0310 (Jennison and Turnbull 2000, table 7.6's design; R's
    gsDesign sfLDOF, ldbounds); Pocock type: 2.4380, 2.4268, 2.4101, 2.3966, 2.3859."""
    assert boundaries(FIVE, 0.025) == pytest.approx([4.8769, 3.3569, 2.6803, 2.2898, 2.0310],
                                                    abs=2e-4)
    assert boundaries(FIVE, 0.025, "pocock") == pytest.approx(
        [2.4380, 2.4268, 2.4101, 2.3966, 2.3859], abs=2e-4)
    assert boundaries((1.0,), 0.05) == pytest.approx([1.6449], abs=1e-4)  # one look: fixed
    assert spent(1.0, 0.05) == pytest.approx(0.05) and spent(0.2, 0.05) < 1e-4


def test_the_sequential_p_value_is_the_smallest_level_that_crosses():
    nominal = sequential.nominal(FIVE, 0.01)
    # at the last look, exactly its nominal level at 0.01 (one-sided): 0.02 two-sided
    assert sequential_p([0.5, 0.5, 0.5, 0.5, nominal[-1]], FIVE) == pytest.approx(0.02, rel=1e-3)
    # an earlier crossing at the same level counts as much; a larger p-value, a larger level
    assert sequential_p([0.5, 0.5, nominal[2]], FIVE) == pytest.approx(0.02, rel=1e-3)
    assert sequential_p([0.5, 0.5, 0.5, 0.5, 2 * nominal[-1]], FIVE) > 0.02
    assert sequential_p([0.9], FIVE) == 1.0


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
               sequential={"baseline": "os", "alpha": 0.05 / 12, "spending": "obf"})
    said = []
    records = run_job(spec, tmp_path / "j.jsonl", tmp_path / "t.csv", str(tmp_path / "lock"),
                      said.append)
    journaled = [json.loads(line)["strategy"]
                 for line in (tmp_path / "j.jsonl").read_text().splitlines()[1:]]
    assert len(journaled) == len(records)  # runs only: the looks follow from them
    return records, said


def test_a_job_stops_early_on_a_large_effect_and_drops_the_loser(monkeypatch, tmp_path):
    records, said = sequential_job({"compact": 0.8, "scatter": 1.0}, monkeypatch, tmp_path)
    assert look_rounds(20) == [4, 8, 12, 16, 20]
    runs = {s: sum(r.strategy == s for r in records) for s in PLACEMENTS}
    assert runs["compact"] == runs["os"] < 20  # decided before the maximum
    assert runs["scatter"] <= runs["os"]  # dropped: it cannot beat compact
    assert any("compact faster than os" in line for line in said)
    assert any("scatter dropped: cannot beat compact" in line for line in said)
    assert any("every comparison decided after" in line and "runs of 60 saved" in line
               for line in said)
    # the analysis replays the looks: compact faster at the job's level, in the cell and over
    # the report, and the verdict says which design made it
    design = {"baseline": "os", "alpha": 0.05 / 12, "spending": "obf", "maximum": 20}
    [verdict], comparisons = verdict_tables(records, "os", 0.05, sequential=design)
    assert verdict["design"] == "sequential" and verdict["best_report"] == "compact"
    assert next(c for c in comparisons if c["strategy"] == "compact")["p_raw"] <= 0.05 / 12


def test_a_job_without_an_effect_runs_to_its_maximum(monkeypatch, tmp_path):
    records, said = sequential_job({}, monkeypatch, tmp_path)
    assert len(records) == 60
    assert not any("dropped" in line or "decided" in line for line in said)


def test_a_tiny_simulation_of_both_designs():
    from pinbench.stats.simulate_sequential import Condition, measure

    rates = measure(Condition("planted", cells=2, strategies=3, n=15, planted={"s1": 0.8}),
                    campaigns=2, seed=4)
    fixed, sequential = rates["fixed, two-sided"], rates["sequential"]
    assert fixed["power"] == sequential["power"] == 1.0  # 20% faster: found by both
    assert sequential["runs"] < fixed["runs"] == 15  # the sequential design stopped early
    assert sequential["false"] == fixed["false"] == 0.0
