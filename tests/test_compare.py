"""Two campaigns compared (pinbench compare), the results store (pinbench store): the
comparison's statistics on planted samples, the command's checks and exit status on results
folders, and real tiny campaigns through the workflow, a planted slowdown caught by the gate."""
import csv
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import DATA, ROOT, preset, run_campaign, run_record
from test_workflow import write_campaign

from pinbench.cli import main as pinbench
from pinbench.results.formats import stamp
from pinbench.results.runs import write_runs
from pinbench.results.store import Store, from_results
from pinbench.stats.regression import FASTER, SAME, SLOWER, UNTESTED, compare, gate
from pinbench.topology import topology_xml


def sample(seed: int, n: int = 20, factor: float = 1.0, spread: float = 0.03) -> list[float]:
    return list(factor * np.exp(spread * np.random.default_rng(seed).standard_normal(n)))


def cells(*factors: float, seed: int = 0, n: int = 20) -> dict:
    """One cell per factor: strategy s<k> with run times ``factor`` x noise."""
    return {("m", "b", 2, f"s{k}"): sample(seed + k, n, factor) for k, factor in enumerate(factors)}


def test_a_planted_slowdown_is_slower_and_fails_the_gate():
    rows, only_a, only_b = compare(cells(1, 1, 1), cells(1.2, 1, 1 / 1.2, seed=10))
    assert [r["verdict"] for r in rows] == [SLOWER, SAME, FASTER]
    assert gate(rows) and only_a == only_b == []
    slow = rows[0]
    assert slow["ratio_low"] < slow["ratio"] < slow["ratio_high"]
    assert 1.1 < slow["ratio"] < 1.3 and slow["p_report"] <= 0.05
    assert 1 < rows[1]["detectable_ratio"] < 1.2  # what "no measurable difference" could see


def test_the_same_runs_again_do_not_fail_the_gate():
    rows, _, _ = compare(cells(1, 1, 1), cells(1, 1, 1))
    assert {r["verdict"] for r in rows} == {SAME} and not gate(rows)
    assert all(r["ratio"] == 1 for r in rows)


def test_a_threshold_lets_small_slowdowns_pass():
    """10% slower: caught without a threshold and with 5%, not with 20%."""
    a, b = cells(1, 1), cells(1.1, 1, seed=10)
    assert gate(compare(a, b, 0.0)[0]) and gate(compare(a, b, 0.05)[0])
    rows = compare(a, b, 0.20)[0]
    assert not gate(rows) and rows[0]["verdict"] == SAME
    assert rows[0]["detectable_ratio"] > 1.2


def test_cells_in_one_campaign_only_and_too_few_runs():
    a = cells(1, 1) | {("m", "b", 4, "os"): [1.0, 1.1]}
    b = {key: value for key, value in cells(1, 1, seed=10).items() if key[3] == "s0"}
    b |= {("m", "b", 4, "os"): [1.0, 1.2], ("m", "c", 2, "os"): sample(3)}
    rows, only_a, only_b = compare(a, b)
    assert only_a == [("m", "b", 2, "s1")] and only_b == [("m", "c", 2, "os")]
    assert [(r["threads"], r["verdict"]) for r in rows] == [(2, SAME), (4, UNTESTED)]
    assert rows[1]["p_report"] is None and rows[1]["ratio"] == pytest.approx(1.1 / 1.05)


def test_strategies_with_the_same_runs_are_one_test():
    """Strategies measured once with one placement have the same runs in both campaigns:
    one test, so they do not make the report-wide decision stricter."""
    a, b = cells(1, 1), cells(1.2, 1, seed=10)
    twin_a = a | {("m", "b", 2, "twin"): a[("m", "b", 2, "s0")]}
    twin_b = b | {("m", "b", 2, "twin"): b[("m", "b", 2, "s0")]}
    rows = compare(twin_a, twin_b)[0]
    alone = compare(a, b)[0]
    assert rows[2]["same_as"] == "s0" and rows[0]["same_as"] == rows[1]["same_as"] == ""
    assert rows[2]["verdict"] == rows[0]["verdict"] == SLOWER
    assert rows[0]["p_report"] == alone[0]["p_report"]


# --- results folders and the store --------------------------------------------------------------

def results_folder(root: Path, factor: float, topology: str = "pack:1 core:2 pu:1",
                   compiler: str = "gcc 12", n: int = 12, benchmark: str = "b") -> Path:
    """A campaign's results folder: runs of machine ``m`` (two strategies, os 1 s and
    compact ``factor`` x 1 s, with noise), its environment.json and topology.xml."""
    records = [run_record(machine="m", benchmark=benchmark, threads=2, strategy=strategy,
                          repetition=k, order_index=2 * k + j, time_s=time_s, wall_s=time_s)
               for j, (strategy, f) in enumerate((("os", 1.0), ("compact", factor)))
               for k, time_s in enumerate(sample(j + 7 * int(factor * 100), n, f))]
    write_runs(records, root / "runs.csv")
    (root / "m").mkdir(parents=True)
    (root / "m" / "environment.json").write_text(json.dumps(stamp("environment", {
        "pinbench": {"version": "0.9", "commit": "abc123", "modified": False},
        "hostname": "vm", "kernel": "Linux", "compiler": compiler,
        "openmp_runtime": "libgomp"})))
    (root / "m" / "topology.xml").write_text(topology_xml(topology))
    return root


def run_compare(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pinbench", "compare", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_compare_results_folders(tmp_path, capsys):
    a = results_folder(tmp_path / "a" / "c", 1.0)
    b = results_folder(tmp_path / "b" / "c", 1.3)
    out = tmp_path / "out"
    assert pinbench(["compare", str(a), str(b), "--out", str(out)]) == 1
    printed = capsys.readouterr()
    assert "m/b/t2 compact: B/A 1.295 [1.256, 1.324] slower (p " in printed.out
    assert "gate: FAIL: 2 cells compared (2 tests): 1 slower" in printed.out
    assert printed.err == ""
    with (out / "comparison.csv").open() as handle:
        rows = list(csv.DictReader(line for line in handle if not line.startswith("#")))
    assert [(r["strategy"], r["verdict"]) for r in rows] == [("os", SAME), ("compact", SLOWER)]
    page = (out / "index.html").read_text()
    assert "the gate fails" in page and "abc123" in page
    # the same results against themselves, and the slowdown within a threshold of 50%
    assert pinbench(["compare", str(a), str(a), "--out", str(out)]) == 0
    assert pinbench(["compare", str(a), str(b), "--out", str(out), "--threshold", "50"]) == 0
    assert "gate: pass" in capsys.readouterr().out


def test_the_page_escapes_what_campaigns_wrote(tmp_path):
    name = "<script>alert(1)</script>"
    a = results_folder(tmp_path / "a" / "c", 1.0, benchmark=name)
    b = results_folder(tmp_path / "b" / "c", 1.0, benchmark=name)
    assert pinbench(["compare", str(a), str(b), "--out", str(tmp_path / "out")]) == 0
    page = (tmp_path / "out" / "index.html").read_text()
    assert name not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_compare_refuses_another_machine_and_warns_of_other_toolchains(tmp_path, capsys):
    a = results_folder(tmp_path / "a" / "c", 1.0)
    other = results_folder(tmp_path / "b" / "c", 1.0, topology=preset("nehalem"))
    clang = results_folder(tmp_path / "d" / "c", 1.0, compiler="clang 16")
    out = str(tmp_path / "out")
    assert pinbench(["compare", str(a), str(other), "--out", out]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("pinbench compare: error: machine 'm': the topologies differ (A: ")
    assert line.endswith("not the same machine (--allow-other-machines compares anyway)")
    assert pinbench(["compare", str(a), str(other), "--out", out, "--allow-other-machines"]) == 0
    assert "WARNING: machine 'm': the topologies differ" in capsys.readouterr().err
    assert pinbench(["compare", str(a), str(clang), "--out", out]) == 0
    [warning] = capsys.readouterr().err.splitlines()
    assert warning == ("pinbench compare: WARNING: machine 'm': compiler 'gcc 12' -> "
                       "'clang 16'")


def test_compare_takes_campaign_files(tmp_path, monkeypatch, capsys):
    """A campaign file stands for its results, results/<campaign> of the project (the
    directory pinbench is started in)."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(DATA / "spin.c", tmp_path / "spin.c")
    campaign = tmp_path / "c.yaml"
    campaign.write_text(yaml.safe_dump({
        "campaign": "c", "machines": {"m": {"topology": "pack:1 core:2 pu:1"}},
        "benchmarks": {"b": {"source": "spin.c"}}}))
    results_folder(tmp_path / "results" / "c", 1.0)
    b = results_folder(tmp_path / "b" / "c", 1.3)
    assert pinbench(["compare", str(campaign), str(b)]) == 1
    assert "report: results/compare/c-vs-c/index.html" in capsys.readouterr().out
    assert (tmp_path / "results" / "compare" / "c-vs-c" / "comparison.csv").is_file()


def test_compare_usage_and_input_errors_exit_2(tmp_path):
    a = results_folder(tmp_path / "a" / "c", 1.0)
    other = results_folder(tmp_path / "b" / "c", 1.0, benchmark="other")
    (tmp_path / "empty").mkdir()
    for args, said in (([str(a), str(tmp_path / "none")], "no such results folder"),
                       ([str(a), str(tmp_path / "empty")], "no runs.csv"),
                       ([str(a), "3", "--store", str(tmp_path / "s.sqlite")], "no such store"),
                       ([str(a), str(a), "--threshold", "-1"], "--threshold must be"),
                       ([str(a), str(other)], "have no cell (machine, benchmark, threads, "
                                              "strategy) in common: nothing to compare"),
                       ([str(a)], "the following arguments are required: b")):
        proc = run_compare(*args)
        assert proc.returncode == 2 and said in proc.stderr, (args, proc.stderr)
        assert "Traceback" not in proc.stderr


def test_store_keeps_campaigns_and_compare_reads_them(tmp_path, capsys):
    a = results_folder(tmp_path / "a" / "c", 1.0)
    b = results_folder(tmp_path / "b" / "c", 1.3)
    store = tmp_path / "store.sqlite"
    assert pinbench(["store", "add", str(a), "--store", str(store)]) == 0
    assert pinbench(["store", "add", str(b), "--store", str(store)]) == 0
    assert pinbench(["store", "add", str(a), "--store", str(store)]) == 0  # unchanged: the same id
    assert capsys.readouterr().out.splitlines() == [
        "1", "2", f"1 (stored before, unchanged: {a})"]
    assert pinbench(["store", "list", "--store", str(store)]) == 0
    listing = capsys.readouterr().out.splitlines()
    assert len(listing) == 2 and "pinbench 0.9 (abc123)" in listing[0] and str(b) in listing[1]
    stored = Store(store).get(2)
    assert stored.records() == from_results(b).records()
    assert stored.machines == from_results(b).machines and stored.provenance["commit"] == "abc123"
    out = str(tmp_path / "out")
    assert pinbench(["compare", "1", "2", "--store", str(store), "--out", out]) == 1
    assert pinbench(["compare", "1", str(a), "--store", str(store), "--out", out]) == 0
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT name, version, git_commit FROM campaigns").fetchall() == [
            ("c", "0.9", "abc123")] * 2


# --- real campaigns ---------------------------------------------------------------------------

def measured(tmp_path: Path, name: str, milliseconds: int) -> Path:
    """A tiny campaign measured through the workflow, every thread spinning for
    ``milliseconds``: its results folder."""
    work = write_campaign(tmp_path / name, repetitions=8, strategies=["os", "compact", "scatter"],
                          machines={"here": {"topology": "auto"}},
                          benchmarks={"spin": {"source": "tests/data/spin.c",
                                               "input": str(milliseconds), "timeout_s": 20}})
    run = run_campaign(work)
    assert run.returncode == 0, run.stderr[-3000:]
    return work / "results" / "tiny"


@pytest.mark.slow
def test_campaigns_measured_again_and_slower(tmp_path):
    """Measured twice alike, the gate passes; with a benchmark input that makes every run
    slower (200 ms of spinning instead of 20), it fails, from results folders and from the
    store. A threshold of 50% keeps the load of a shared test machine (other processes
    spinning on its 2 cores move a 20 ms run by tens of percent) from failing it."""
    before = measured(tmp_path, "before", 20)
    again = measured(tmp_path, "again", 20)
    slower = measured(tmp_path, "slower", 200)
    out = str(tmp_path / "out")
    same = run_compare(str(before), str(again), "--threshold", "50", "--out", out)
    assert same.returncode == 0, same.stdout + same.stderr
    assert "gate: pass" in same.stdout and same.stderr == ""
    caught = run_compare(str(before), str(slower), "--threshold", "50", "--out", out)
    assert caught.returncode == 1, caught.stdout + caught.stderr
    assert "here/spin/t" in caught.stdout and " slower (p " in caught.stdout
    assert "gate: FAIL" in caught.stdout and "0 faster" in caught.stdout
    assert (Path(out) / "index.html").is_file()
    store = str(tmp_path / "store.sqlite")
    for folder in (before, slower):
        added = subprocess.run([sys.executable, "-m", "pinbench", "store", "add", str(folder),
                                "--store", store], capture_output=True, text=True, cwd=ROOT)
        assert added.returncode == 0, added.stderr
    assert run_compare("1", "2", "--store", store, "--threshold", "50",
                       "--out", out).returncode == 1
