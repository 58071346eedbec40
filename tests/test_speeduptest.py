"""The Speedup-Test (stats/speeduptest.py): against R 4.2.2, by simulation, and its command line.

tests/data/speedup-test-cases.json holds 60 cases computed with R 4.2.2's shapiro.test,
var.test, t.test, ks.test and wilcox.test at alpha = 0.05 (a copy of the shared reference).
In it, t_test_p and equal_var are null where the mean test was not applied (a sample not
normal with n <= 30), and wilcoxon_p is null where the median test was not applied (KS
rejected with n <= 30); f_test_p and ks_p are always given.
"""
from __future__ import annotations

import functools
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from pinbench.cli import main as pinbench
from pinbench.stats.speeduptest import SampleError, read_times, speedup_test

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
CASES = json.loads((DATA / "speedup-test-cases.json").read_text())["cases"]
ALPHA = 0.05
TOP_KEYS = {"n_x", "n_y", "confidence", "alpha", "speedup_mean", "speedup_median", "speedup_min",
            "mean", "median", "p_x_greater_y", "shapiro_p_x", "shapiro_p_y", "f_test_p",
            "equal_var", "ks_p", "ci"}
PART_KEYS = {"significant", "p_value", "test", "warnings"}
CI_KEYS = {"method", "speedup_mean", "speedup_median", "p_x_greater_y"}


# --- the 60 reference cases of R 4.2.2 ----------------------------------------------------

@functools.cache
def ours(case_id: int) -> dict:
    case = CASES[case_id - 1]
    assert case["id"] == case_id
    return speedup_test(case["x"], case["y"], confidence=1 - case["alpha"], resamples=0)


@pytest.fixture(params=[c["id"] for c in CASES], ids=lambda i: f"case{i}")
def case(request) -> tuple[dict, dict]:
    """(R's reference, our result) for one case."""
    return CASES[request.param - 1], ours(request.param)


def test_reference_verdicts(case):
    ref, res = case
    assert res["mean"]["significant"] == ref["mean_significant"]
    assert res["median"]["significant"] == ref["median_significant"]


def test_reference_speedups(case):
    ref, res = case
    assert res["speedup_mean"] == pytest.approx(ref["speedup_mean"], abs=1e-12)
    assert res["speedup_median"] == pytest.approx(ref["speedup_median"], abs=1e-12)


def test_reference_mean_test(case):
    """F-test p within 1e-9; Student iff R chose var.equal; t p within 1e-9 where applied."""
    ref, res = case
    assert res["f_test_p"] == pytest.approx(ref["f_test_p"], abs=1e-9)
    assert res["equal_var"] == ref["equal_var"]
    if ref["t_test_p"] is None:
        assert (res["mean"]["test"], res["mean"]["p_value"]) == ("not applied", None)
        assert res["mean"]["warnings"]
    else:
        assert res["mean"]["test"] == ("student" if ref["equal_var"] else "welch")
        assert res["mean"]["p_value"] == pytest.approx(ref["t_test_p"], abs=1e-9)


def test_reference_shapiro(case):
    """Shapiro-Wilk: scipy's swilk against R's, within 1e-8 absolute or 1e-6 relative (the
    largest difference seen is 5e-9, 1.4e-8 relative); the normality verdicts agree."""
    ref, res = case
    for key in ("shapiro_p_x", "shapiro_p_y"):
        assert res[key] == pytest.approx(ref[key], rel=1e-6, abs=1e-8)
        assert (res[key] <= ALPHA) == (ref[key] <= ALPHA)


def test_reference_ks(case):
    """KS on the centred samples. R 4.2.2's ks.test is exact whenever n_x n_y < 10000 (all 60
    cases), ties included, by the conditional distribution of psmirnov; we reproduce that and
    agree within 2e-13. scipy's ks_2samp would not: its exact method ignores ties and differs
    by up to 0.063 in 20 cases (case 52 even falls on the other side of alpha), its asymptotic
    one differs in 58 cases and flips 3 verdicts. 35 cases have ties after centring (every
    pair of odd-sized samples has two zeros)."""
    ref, res = case
    assert res["ks_method"] == "exact"
    assert res["ks_p"] == pytest.approx(ref["ks_p"], abs=1e-9)
    assert (res["ks_p"] <= ALPHA) == (ref["ks_p"] <= ALPHA)


def test_reference_wilcoxon(case):
    """Wilcoxon-Mann-Whitney p within 1e-6, exact exactly where R is (n < 50 and no ties)."""
    ref, res = case
    if ref["wilcoxon_p"] is None:
        assert (res["median"]["test"], res["median"]["p_value"]) == ("not applied", None)
        assert res["median"]["warnings"]
        return
    pooled = ref["x"] + ref["y"]
    exact = len(ref["x"]) < 50 and len(ref["y"]) < 50 and len(set(pooled)) == len(pooled)
    assert res["median"]["test"] == ("wilcoxon-exact" if exact else "wilcoxon-asymptotic")
    assert res["median"]["p_value"] == pytest.approx(ref["wilcoxon_p"], abs=1e-6)


# --- simulated run times ------------------------------------------------------------------

def draw(kind: str, n: int, scale: float, rng: np.random.Generator) -> np.ndarray:
    """n run times of about ``scale`` seconds from one of the shapes of measured times."""
    if kind == "normal":
        times = rng.normal(1.0, 0.02, n)
    elif kind == "lognormal":
        times = rng.lognormal(0.0, 0.05, n)
    elif kind == "bimodal":  # 30 % of the runs on a slow path
        times = np.where(rng.random(n) < 0.3, 1.2, 1.0) * rng.normal(1.0, 0.01, n)
    elif kind == "heavy":    # rare long interruptions
        times = 1.0 + 0.01 * np.abs(rng.standard_t(2, n))
    else:                    # "clock": a 10 ms clock makes ties
        return np.round(scale * rng.normal(1.0, 0.02, n), 2)
    return scale * times


KINDS = ("normal", "lognormal", "bimodal", "heavy", "clock")


@pytest.mark.slow
@pytest.mark.parametrize("kind,n", [("normal", 35), ("lognormal", 35), ("lognormal", 12)])
def test_same_distribution_rate_of_significant_verdicts(kind, n):
    """Under H0 the rate of 'significant' verdicts stays within [0, 2 alpha]."""
    rng = np.random.default_rng(20100113)
    pairs = 300
    hits = np.zeros(2)
    for _ in range(pairs):
        res = speedup_test(draw(kind, n, 1.0, rng), draw(kind, n, 1.0, rng), resamples=0)
        hits += [res["mean"]["significant"], res["median"]["significant"]]
    assert np.all(hits / pairs <= 2 * ALPHA), hits / pairs


@pytest.mark.parametrize("kind", KINDS)
def test_slowdown_is_never_a_significant_speedup(kind):
    rng = np.random.default_rng(7)
    for n in (5, 10, 20, 30, 35, 60):
        for slowdown in (1.05, 1.10, 1.20):
            x, y = draw(kind, n, 1.0, rng), draw(kind, n, slowdown, rng)
            res = speedup_test(x, y, resamples=0)
            assert not res["mean"]["significant"], (n, slowdown, res["mean"])
            assert not res["median"]["significant"], (n, slowdown, res["median"])
            assert res["speedup_mean"] < 1


@pytest.mark.parametrize("kind", ["normal", "lognormal", "clock"])
@pytest.mark.parametrize("n", [10, 20, 35, 60])
def test_clear_speedup_is_detected(kind, n):
    """The variant 20 % faster with 2-5 % noise is significant wherever a test is applied.

    Only a coarse clock may keep the t-test out: its few distinct values fail Shapiro-Wilk.
    """
    rng = np.random.default_rng(n)
    res = speedup_test(draw(kind, n, 1.0, rng), draw(kind, n, 1 / 1.2, rng), resamples=0)
    assert res["median"]["significant"], res["median"]
    if kind != "clock" or res["mean"]["test"] != "not applied":
        assert res["mean"]["significant"], res["mean"]
    assert res["speedup_mean"] == pytest.approx(1.2, rel=0.05)


# --- edge cases -----------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [[1.0, 2.0], [], [1.0, float("nan"), 2.0], [1.0, 2.0, np.inf],
                                 [1.0, -2.0, 3.0], [1.0, 0.0, 3.0], [[1.0, 2.0, 3.0]], "abc"])
def test_bad_samples_raise(bad):
    good = [1.0, 1.1, 1.2]
    for x, y in ((bad, good), (good, bad)):
        with pytest.raises(SampleError) as info:
            speedup_test(x, y)
        assert "\n" not in str(info.value)


@pytest.mark.parametrize("confidence", [0.0, 1.0, 1.5, -0.1])
def test_bad_confidence_raises(confidence):
    with pytest.raises(ValueError, match="confidence"):
        speedup_test([1, 2, 3], [1, 2, 3], confidence=confidence)


@pytest.mark.parametrize("x,y", [([2.0] * 10, [1.0] * 10), ([1.0] * 10, [1.0] * 10),
                                 ([2.0] * 10, [1.0, 1.1, 0.9, 1.0, 1.05] * 2),
                                 ([1.0, 1.1, 0.9, 1.0, 1.05] * 7, [1.0] * 40)])
def test_constant_samples_do_not_crash(x, y):
    res = speedup_test(x, y)
    json.dumps(res, allow_nan=False)
    assert res["mean"]["test"] == "not applied"
    assert any("identical" in w for w in res["mean"]["warnings"])
    assert not res["mean"]["significant"]
    assert res["median"]["test"] in ("wilcoxon-asymptotic", "not applied")


def test_constant_samples_verdicts():
    faster = speedup_test([2.0] * 10, [1.0] * 10)
    assert faster["speedup_mean"] == 2.0 and faster["median"]["significant"]
    assert faster["p_x_greater_y"] == 1.0
    same = speedup_test([1.0] * 10, [1.0] * 10)
    assert same["median"]["p_value"] == 1.0 and not same["median"]["significant"]
    assert same["p_x_greater_y"] == 0.5 and same["ci"]["speedup_mean"] is None


def test_identical_samples():
    x = np.random.default_rng(1).lognormal(0, 0.1, 20)
    res = speedup_test(x, x.copy())
    json.dumps(res, allow_nan=False)
    assert res["speedup_mean"] == 1.0 and res["p_x_greater_y"] == 0.5
    assert res["mean"]["p_value"] == pytest.approx(0.5)
    assert res["ks_p"] == 1.0
    assert not res["mean"]["significant"] and not res["median"]["significant"]
    assert res["median"]["test"] == "wilcoxon-asymptotic"  # every value is tied


def test_ties_force_the_asymptotic_wilcoxon():
    rng = np.random.default_rng(3)
    x, y = rng.normal(1.0, 0.02, 20), rng.normal(0.95, 0.02, 20)
    assert speedup_test(x, y, resamples=0)["median"]["test"] == "wilcoxon-exact"
    tied = speedup_test(np.round(x, 2), np.round(y, 2), resamples=0)
    assert tied["median"]["test"] == "wilcoxon-asymptotic"
    assert any("tied" in w for w in tied["median"]["warnings"])
    big = speedup_test(rng.normal(1.0, 0.02, 50), rng.normal(1.0, 0.02, 20), resamples=0)
    assert big["median"]["test"] == "wilcoxon-asymptotic"


def test_p_x_greater_y_counts_ties_one_half():
    res = speedup_test([1.0, 2.0, 3.0], [2.0, 2.0, 0.5], resamples=0)
    assert res["p_x_greater_y"] == pytest.approx((1 + (1 + 0.5 * 2) + 3) / 9)  # x = 1, 2, 3


def test_large_non_normal_samples_go_on_with_a_warning():
    rng = np.random.default_rng(5)
    res = speedup_test(draw("bimodal", 60, 1.0, rng), draw("bimodal", 60, 1 / 1.1, rng),
                       resamples=0)
    assert res["mean"]["test"] in ("student", "welch")
    assert any("central limit" in w for w in res["mean"]["warnings"])


# --- bootstrap intervals ------------------------------------------------------------------

@pytest.mark.parametrize("kind,n", [("normal", 35), ("lognormal", 10), ("bimodal", 60),
                                    ("clock", 35), ("heavy", 20)])
def test_intervals_contain_the_estimates(kind, n):
    rng = np.random.default_rng(11)
    res = speedup_test(draw(kind, n, 1.0, rng), draw(kind, n, 0.97, rng))
    for name in ("speedup_mean", "speedup_median", "p_x_greater_y"):
        low, high = res["ci"][name]
        assert low <= res[name] <= high, name


def test_intervals_are_deterministic_for_a_seed():
    rng = np.random.default_rng(12)
    x, y = draw("lognormal", 30, 1.0, rng), draw("lognormal", 30, 0.98, rng)
    first, again = speedup_test(x, y, seed=4)["ci"], speedup_test(x, y, seed=4)["ci"]
    assert first == again
    assert speedup_test(x, y, seed=5)["ci"]["speedup_mean"] != first["speedup_mean"]
    assert first["method"] == ("BCa bootstrap, 2000 resamples, seed 4, "
                               "X and Y resampled independently")


def test_clear_speedup_interval_excludes_one():
    rng = np.random.default_rng(13)
    res = speedup_test(draw("normal", 35, 1.0, rng), draw("normal", 35, 0.9, rng))
    low, high = res["ci"]["speedup_mean"]
    assert 1 < low < res["speedup_mean"] < high
    assert res["ci"]["speedup_median"][0] > 1


def test_intervals_at_another_confidence_are_nested():
    rng = np.random.default_rng(14)
    x, y = draw("normal", 35, 1.0, rng), draw("normal", 35, 0.99, rng)
    wide, narrow = speedup_test(x, y, confidence=0.99)["ci"], speedup_test(x, y, 0.9)["ci"]
    assert wide["speedup_mean"][0] < narrow["speedup_mean"][0]
    assert narrow["speedup_mean"][1] < wide["speedup_mean"][1]


def test_percentile_fallback_where_bca_fails():
    """A coarse clock makes every leave-one-out median equal: no BCa acceleration."""
    rng = np.random.default_rng(0)
    x, y = np.round(rng.normal(1, 0.05, 40), 1), np.round(rng.normal(0.95, 0.05, 40), 1)
    ci = speedup_test(x, y)["ci"]
    assert ci["warnings"] == ["speedup_median: BCa not computable, percentile interval instead"]
    assert ci["speedup_median"][0] <= 1.0 <= ci["speedup_median"][1]


def test_bootstrap_is_fast():
    """A campaign tests hundreds of cells: 2000 resamples of 35 + 35 runs take ~0.02 s."""
    rng = np.random.default_rng(15)
    x, y = draw("lognormal", 35, 1.0, rng), draw("lognormal", 35, 0.99, rng)
    start = time.perf_counter()
    for _ in range(5):
        speedup_test(x, y)
    assert (time.perf_counter() - start) / 5 < 0.25


def test_no_resamples_no_intervals():
    ci = speedup_test([1.0, 1.1, 1.2], [0.9, 1.0, 1.1], resamples=0)["ci"]
    assert ci["speedup_mean"] is ci["speedup_median"] is ci["p_x_greater_y"] is None


def test_separated_samples_have_no_interval_for_p_x_greater_y():
    res = speedup_test([2.0, 2.1, 2.2, 2.05], [1.0, 1.1, 1.05, 1.2])
    assert res["p_x_greater_y"] == 1.0 and res["ci"]["p_x_greater_y"] is None
    assert any("same value" in w for w in res["ci"]["warnings"])


# --- command line ---------------------------------------------------------------------------

def start_cli(*args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "pinbench", "speeduptest", *map(str, args)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run_cli(*args) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of the command line."""
    proc = start_cli(*args)
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out, err


@pytest.fixture
def files(tmp_path) -> dict[str, Path]:
    """A plain baseline file and a runs table (with a failed run) for the variant."""
    case = CASES[1]
    plain = tmp_path / "baseline.txt"
    plain.write_text("\n".join(map(repr, case["x"])) + "\n\n")
    table = tmp_path / "runs.csv"
    lines = ["machine,benchmark,threads,strategy,rep,ok,time_s"]
    lines += [f"m,bench,4,compact,{i},True,{t!r}" for i, t in enumerate(case["y"])]
    lines.append("m,bench,4,compact,99,False,")
    table.write_text("\n".join(lines) + "\n")
    return {"plain": plain, "table": table}


@pytest.mark.slow
def test_cli_json(files):
    status, out, err = run_cli(files["plain"], files["table"], "--column", "time_s", "--json")
    assert status == 0, err
    res = json.loads(out)
    assert TOP_KEYS <= set(res)
    assert PART_KEYS <= set(res["mean"]) and PART_KEYS <= set(res["median"])
    assert CI_KEYS <= set(res["ci"])
    assert res == json.loads(json.dumps(speedup_test(CASES[1]["x"], CASES[1]["y"])))


def test_cli_report(files):
    status, out, err = run_cli(files["plain"], files["table"], "--confidence", "0.99",
                               "--resamples", "500")
    assert status == 0, err
    for text in ("mean faster?", "median faster?", "P[X > Y]", "500 resamples", "speedup X/Y"):
        assert text in out


@pytest.mark.slow
def test_cli_bad_input_exits_2(tmp_path, files):
    missing = tmp_path / "missing.txt"
    words = tmp_path / "words.txt"
    words.write_text("1.0\nfast\n2.0\n")
    procs = [start_cli(*args) for args in ([missing, files["plain"]], [files["plain"], words],
                                           [files["plain"], files["plain"], "--confidence", "95"])]
    for proc in procs:  # started together: each spends a second importing scipy
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 2
        assert out == "" and "Traceback" not in err
        assert len(err.splitlines()) == 1 and err.startswith("pinbench speeduptest: error:"), err


@pytest.mark.parametrize("content,extra", [
    ("", []), ("\n\n", []), ("1.0\n2.0\n", []), ("1.0\n-2.0\n3.0\n", []),
    ("1.0\nnan\n3.0\n", []), ("1.0\ninf\n3.0\n", []), ("1.0\n0\n3.0\n", []),
    ("1.0\n1,5\n3.0\n", []), ("name,when\na,b\nc,d\n", []), ("time\n", []),
    ("time\n1\n2\n3\n", ["--column", "time_s"]), ("\xff", []), ("a,b\n1,2\n3\n4,5\n", []),
    ("1.0\n2.0\n3.0\n", ["--confidence", "abc"]), ("1.0\n2.0\n3.0\n", ["--confidence", "1"]),
    ("1.0\n2.0\n3.0\n", ["--resamples", "-5"]), ("1.0\n2.0\n3.0\n", ["--bogus"]),
])
def test_cli_bad_input_one_error_line(tmp_path, capsys, content, extra):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(content.encode("latin-1"))
    status = pinbench(["speeduptest", str(bad), str(bad), *extra])
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("pinbench speeduptest: error:"), err


def test_read_times_picks_the_first_numeric_column(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("name,time,note\na,1.5,x\n\nb,2.5,y\nc,,z\nd,3.5,\n")
    assert list(read_times(table)) == [1.5, 2.5, 3.5]
    plain = tmp_path / "p.txt"
    plain.write_text(" 1.5\n\n2.5 \n3.5\n")
    assert list(read_times(plain, column="time_s")) == [1.5, 2.5, 3.5]
