"""Scalability models by the real Extra-P (.venv-extrap): planted laws recovered, too few
thread counts, a missing Extra-P, and the evaluator that refuses anything but a formula."""
import math
import random

import pytest
from conftest import ROOT, run_record
from optional_tools import COMPILERS

from pinbench.stats.cells import describe_cells
from pinbench.stats.models import (MAX_SMAPE, Formula, ModelError, extrap_path, model_rows,
                                   models, read_models)

EXTRAP = extrap_path(ROOT)
COUNTS = [1, 2, 3, 4, 5, 6, 8]
LAWS = {"overhead": lambda p: 3 + 0.5 * p * math.log2(p),  # construct-like: grows with p
        "u": lambda p: 10 / p + 0.3 * p,  # strong scaling with an overhead: best near 5.8
        "strong": lambda p: 2 + 12 / p}


def planted(counts=COUNTS, noise=0.02, seed=3):
    rng = random.Random(seed)
    return [run_record(benchmark=bench, threads=p, strategy="compact", repetition=k,
                       time_s=law(p) * (1 + rng.gauss(0, noise)))
            for bench, law in LAWS.items() for p in counts for k in range(7)]


@pytest.fixture(scope="module")
def rows():
    if not EXTRAP.is_file():
        pytest.fail(f"{EXTRAP} is missing: run scripts/setup.sh")
    return model_rows(planted(), EXTRAP, horizon=12, pus={"m": 2})


def selected(rows, bench, statistic="median"):
    [row] = [r for r in rows if r["benchmark"] == bench and r.get("selected")
             and r["quantity"].endswith(statistic)]
    return row


@pytest.mark.slow
def test_planted_terms_are_recovered(rows):
    row = selected(rows, "overhead")
    assert row["quantity"] == "time_median" and "p^(1) * log2(p)^(1)" in row["model"]
    constant, coefficient = (float(t.split(" * ")[0]) for t in row["model"].split(" + "))
    assert constant == pytest.approx(3, rel=0.1) and coefficient == pytest.approx(0.5, rel=0.1)
    assert row["smape"] < 3 and row["ar2"] > 0.99 and row["best_threads"] == 1


def test_best_thread_count_near_the_true_argmin(rows):
    row = selected(rows, "u")
    assert row["best_threads"] in (5, 6, 7) and row["turning_threads"] in (5, 6, 7)
    assert row["extrapolated"] == (f"up to 12: best {row['best_threads']}, turning point "
                                   f"{row['turning_threads']}")  # nothing new beyond 8
    assert selected(rows, "u", "mean")["best_threads"] in (5, 6, 7)
    # still falling at 8: the best in the measured range is its edge, no turning point there;
    # beyond it, the model's best is an extrapolation, and says so
    strong = selected(rows, "strong")
    assert strong["best_threads"] == 8 and strong["turning_threads"] == ""
    assert strong["extrapolated"] == "up to 12: best 12, turning point none"
    assert all(r["oversubscribed"] == "3 4 5 6 8" and r["pus"] == 2 for r in rows)
    assert all(r["reliable"] for r in rows if r.get("model"))  # planted laws pass the gate


def test_a_model_that_does_not_predict_its_points_is_refused(tmp_path):
    """Five thread counts on a 2-core machine, the time stepping up once the cores are
    oversubscribed: no PMNF term predicts the left-out points (cross-validated SMAPE well
    above the gate), so there is no reliable model, no best thread count, and the summary
    says why; the planted laws beside it keep theirs."""
    rng = random.Random(7)
    step = [run_record(benchmark="step", threads=p, strategy="os", repetition=k,
                       time_s=(1.0 if p <= 2 else 2.5) * (1 + rng.gauss(0, 0.02)))
            for p in range(1, 6) for k in range(7)]
    text = models(step + planted(counts=[1, 2, 3, 4, 5]), EXTRAP, 5, {"m": 2},
                  tmp_path / "m.csv", tmp_path / "m.txt")
    found = [r for r in read_models(tmp_path / "m.csv") if r.benchmark == "step"
             and r.quantity.endswith("_median")]
    assert len(found) == 2 and all(r.model and r.reliable is False for r in found)
    assert not any(r.selected or r.best_threads for r in found)
    assert all(r.smape > MAX_SMAPE for r in found)
    [line] = [x for x in text.splitlines() if x.startswith("m/step os: ")]
    assert "time_median: no reliable model: cross-validated SMAPE" in line and \
        "cost_median: no reliable model" in line
    assert "m/u compact: median T(p) = " in text


@pytest.mark.slow
def test_the_gate_passes_planted_laws_and_refuses_what_no_term_predicts():
    """The second part of python -m pinbench.stats.simulate_explain, small (5 cells each, runs
    spread 2%): every planted PMNF law gets a reliable model within 5% of the law; a step
    past the cores and an odd-even zigzag never do."""
    from pinbench.stats.simulate_explain import LAWS, gate_rates
    found = gate_rates(EXTRAP, trials=5, seed=1, spreads=(0.02,))
    assert len(found) == 12
    for r in found:
        if r["shape"] in LAWS:
            assert r["accepted"] == 1 and r["error_worst"] < 0.05, r
        elif r["shape"] in ("step up past 2 cores", "odd-even zigzag"):
            assert r["accepted"] == 0, r


@pytest.mark.slow
def test_cells_measured_at_other_thread_counts_are_modelled_apart(tmp_path):
    """Extra-P models every callpath of one input at the same points: a cell that lost a thread
    count (its runs failed there) is modelled in a call of its own, not the machine's all."""
    runs = [r for r in planted() if not (r.benchmark == "strong" and r.threads == 3)]
    found = model_rows(runs, EXTRAP, horizon=8, pus={})
    strong = selected(found, "strong")
    assert strong["thread_counts"] == "1 2 4 5 6 8" and strong["reliable"]
    assert selected(found, "u")["thread_counts"] == "1 2 3 4 5 6 8"


def test_best_and_turning_point_of_a_model_that_rises_then_falls():
    """1 + 3·log2(p)/p rises from p = 1 to 3, then falls: its best in 1..5 is 1, and it has no
    turning point (it still falls at 5); the first p with T(p + 1) >= T(p) would say 1."""
    from pinbench.stats.models import Fit, _cell_rows
    fit = Fit("1 + 3 * p^(-1) * log2(p)^(1)", "1+3*p**(-1)*log2(p)**(1)", 1.0, 0.9, 0, 0)
    fits = {("c", f"{kind}_{s}"): fit for kind in ("time", "cost") for s in ("median", "mean")}
    fits |= {("c", f"cost_{s}"): Fit("9", "9", 50.0, 0, 0, 0) for s in ("median", "mean")}
    [time_row, cost_row, *_] = _cell_rows({"machine": "m"}, {p: [1.0] for p in range(1, 6)},
                                          fits, "c", horizon=5)
    assert time_row["selected"] and time_row["best_threads"] == 1
    assert time_row["turning_threads"] == "" and "extrapolated" not in time_row
    assert cost_row["reliable"] is False and not cost_row.get("selected")


def test_fewer_than_five_thread_counts_get_no_model(tmp_path):
    text = models(planted(counts=[1, 2, 4, 8]), EXTRAP, 8, {}, tmp_path / "m.csv",
                  tmp_path / "m.txt")
    found = read_models(tmp_path / "m.csv")
    assert len(found) == 3 and not any(r.model for r in found)
    # one line per benchmark, the strategies that share the reason in it
    assert "m/overhead compact: 4 thread counts: Extra-P needs at least 5; no model" in text


def test_a_report_without_models_says_why(tmp_path):
    """Too few thread counts on every machine: the models rule does not run, and the report's
    models section (and the terminal, through the same words) says why."""
    from pinbench.report.campaign_data import model_sections
    found = model_sections([], None, describe_cells(planted(counts=[1, 2, 4, 8])))
    assert found == {"note": "no scalability models on m: 4 thread counts (1 2 4 8); Extra-P "
                             "needs at least 5", "sections": []}


def test_missing_extrap_is_one_line_and_no_model(tmp_path):
    text = models(planted(), tmp_path / "no-extrap", 8, {}, tmp_path / "m.csv",
                  tmp_path / "m.txt")
    assert text.splitlines()[0].startswith("no scalability models: Extra-P is not installed")
    assert read_models(tmp_path / "m.csv") == []


@pytest.mark.parametrize("text", [
    "__import__('os').system('true')", "p.real", "open('x')", "q + 1", "[p]", "p if p else 1",
    "log(p)", "log2(p, 2)", "lambda: 1", "'text'", "1; 2", "p < 2", "True + p",
])
def test_the_evaluator_refuses_anything_but_a_formula(text):
    with pytest.raises(ModelError):
        Formula(text)


def test_the_evaluator_computes_extraps_forms():
    assert Formula("2.5+-1.5*p**(-3/2)*log2(p)**(2)")(4) == pytest.approx(2.5 - 1.5 / 8 * 4)
    assert Formula("-p + 2*p")(3) == 3
    with pytest.raises(ModelError):
        Formula("1/(p-1)")(1)


@pytest.mark.parametrize("name", ["constructs", "scaling"])
def test_model_campaigns_validate(name):
    from pathlib import Path

    from pinbench.workflow import campaign, config_file
    config = config_file.load(ROOT / "config" / "campaigns" / f"{name}.yaml")
    config, machines = campaign.load_campaign(config, ROOT)
    assert config["oversubscribe"] and all(len(m.threads) >= 5 for m in machines.values())
    if name == "constructs":
        assert len(config["benchmarks"]) == 16
        build = campaign.build_command(config, "constructs-atomic-clang", "out")
        assert build.startswith("clang -O2 -fopenmp -o ") and Path(build.split()[-2]).is_file()


@pytest.mark.parametrize("cc", COMPILERS)
def test_constructs_program_builds_and_validates(tmp_path, cc):
    import subprocess

    from conftest import compile_c
    binary = compile_c(ROOT / "benchmarks" / "constructs.c", tmp_path / "constructs", cc)
    for construct in ("parallel", "for", "barrier", "reduction", "single", "critical", "lock",
                      "atomic"):
        run = subprocess.run([str(binary), f"construct={construct}", "reps=200"],
                             capture_output=True, text=True, timeout=60,
                             env={"OMP_NUM_THREADS": "3", "PATH": "/usr/bin:/bin"})
        assert run.returncode == 0 and "validation: OK" in run.stdout, run.stdout + run.stderr
        assert f"construct: {construct}" in run.stdout and "overhead_us: " in run.stdout
    bad = subprocess.run([str(binary), "construct=task"], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stdout == "" and "unknown construct" in bad.stderr


# --- the explained quantities (explain.csv's medians) --------------------------------------
def explain_table(counts=COUNTS, noise=0.01, seed=5):
    """explain.csv rows with planted laws: I_P = 0.01·p·log2 p (zero at one thread),
    F_P = 0.2·p − 0.5 (negative, then positive), L_P zero everywhere, barrier waits
    0.02·p², no taskwait column values; and a strategy with four thread counts only."""
    rng = random.Random(seed)
    jitter = lambda: 1 + rng.gauss(0, noise)  # noqa: E731
    rows = [{"machine": "m", "benchmark": "overhead", "threads": p, "strategy": "compact",
             "n": 5, "I_P": 0.01 * p * math.log2(p) * jitter(), "F_P": (0.2 * p - 0.5) * jitter(),
             "L_P": 0.0, "barrier_wait": 0.02 * p * p * jitter(), "taskwait_wait": None}
            for p in counts]
    rows += [{"machine": "m", "benchmark": "overhead", "threads": p, "strategy": "scatter",
              "n": 5, "I_P": 0.1 * p, "F_P": 0.1, "L_P": 0.1, "barrier_wait": 0.1}
             for p in (1, 2, 4, 8)]
    return rows


@pytest.fixture(scope="module")
def explained(tmp_path_factory):
    from pinbench.stats.explain import write_explain
    if not EXTRAP.is_file():
        pytest.fail(f"{EXTRAP} is missing: run scripts/setup.sh")
    where = tmp_path_factory.mktemp("explained")
    write_explain(explain_table(), where / "explain.csv")
    text = models(planted(), EXTRAP, 12, {"m": 2}, where / "m.csv", where / "m.txt",
                  where / "explain.csv")
    return read_models(where / "m.csv"), text, where


def explained_row(rows, quantity, strategy="compact"):
    [row] = [r for r in rows if r.quantity == quantity and r.strategy == strategy
             and r.benchmark == "overhead"]
    return row


def test_planted_idle_time_is_recovered(explained):
    rows, text, _ = explained
    row = explained_row(rows, "idle_median")
    assert "p^(1) * log2(p)^(1)" in row.model, row.model
    coefficient = float(row.model.split(" + ")[-1].split(" * ")[0])
    assert coefficient == pytest.approx(0.01, rel=0.1) and row.ar2 > 0.99
    assert row.note == "values include zero: SMAPE (relative to the values) overstates the error"
    assert row.thread_counts == "1 2 3 4 5 6 8" and row.oversubscribed == "3 4 5 6 8"
    # not run times: no time model, no selection, no best or turning thread count
    assert not (row.time_model or row.selected or row.best_threads or row.turning_threads)
    assert "m/overhead compact: idle_median(p) = " in text
    assert explained_row(rows, "time_median").model  # the run times, in the same call


def test_inflation_across_zero_and_waits(explained):
    rows, *_ = explained
    inflation = explained_row(rows, "inflation_median")
    assert "p^(1)" in inflation.model and inflation.note.startswith("values cross zero")
    barrier = explained_row(rows, "barrier_waits_median")
    assert "p^(2)" in barrier.model and not barrier.note
    locks = explained_row(rows, "lock_waits_median")
    assert not locks.model and locks.note == "zero at every thread count; no model"
    assert not [r for r in rows if r.quantity == "taskwait_waits_median"]
    few = [r for r in rows if r.strategy == "scatter"]
    assert len(few) == 4 and all(not r.model and r.note.startswith(
        "4 explained thread counts: Extra-P needs at least 5") for r in few)


@pytest.mark.slow
def test_no_explain_table_models_the_times_only(tmp_path):
    models(planted(counts=[1, 2, 3, 4, 5]), EXTRAP, 8, {}, tmp_path / "m.csv",
           tmp_path / "m.txt", tmp_path / "absent.csv")
    found = read_models(tmp_path / "m.csv")
    assert found and {r.quantity.split("_")[0] for r in found} == {"time", "cost"}


def test_the_report_lists_a_row_per_explained_quantity(explained):
    from pinbench.report.campaign_data import model_sections
    rows, text, _ = explained
    found = model_sections(rows, text.splitlines()[0], describe_cells(planted()))
    [section] = [s for s in found["sections"] if s["benchmark"] == "overhead"]
    quantities = [(r.strategy, r.quantity) for r in section["explained"]]
    assert ("compact", "idle_median") in quantities and len(quantities) == 8
    assert {r.strategy for r in section["models"]} == {"compact"}  # the time model stays
    assert not section["unmodelled"] and section["figure"]
