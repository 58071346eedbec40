"""Tiny campaigns through the real `snakemake`: plan, run, failures, kill and resume, lint."""
import contextlib
import csv
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, campaign_command, report_text, run_campaign
from optional_tools import COMPILERS

from pinbench.results.journals import read_lines
from pinbench.place.symmetry import interchangeable
from pinbench.results.formats import CURRENT
from pinbench.topology import load

STRATEGIES = ["os", "random", "compact", "scatter"]


def write_campaign(workdir: Path, **overrides) -> Path:
    config = {
        "campaign": "tiny",
        "repetitions": 3,
        "threads": ["all"],
        "machines": {"here": {"topology": "auto"}, "nehalem": {"topology": "nehalem"}},
        "benchmarks": {
            "spin": {"source": "tests/data/spin.c", "input": "20", "timeout_s": 20},
            "crash": {"source": "tests/data/spin.c", "input": "5 crash", "timeout_s": 20},
        },
    }
    config.update(overrides)
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "campaign.yaml").write_text(yaml.safe_dump(config))
    return workdir


def read_csv(path: Path) -> list[dict]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def assert_versioned(results: Path, machine: str) -> None:
    """Every file of a campaign that pinbench reads back says its version (the current one:
    :mod:`pinbench.results.formats`), each where its kind keeps it."""
    here = results / machine
    found = {kind: [] for kind in ("placement", "journal", "runs", "stats", "environment",
                                   "account")}
    for path in here.glob("placements/*/t*/*.json"):
        found["placement"].append(json.loads(path.read_text())["format"])
    for path in here.glob("journal/*/t*.jsonl"):
        found["journal"].append(json.loads(read_lines(path)[0])["format"])
    for path in [*here.glob("runs/*/t*.csv"), results / "runs.csv"]:
        found["runs"] += [int(row["format"]) for row in read_csv(path)]
    for kind, paths in (("stats", [results / "stats" / "stats.json"]),
                        ("environment", [here / "environment.json"]),
                        ("account", results.glob(f"timings/measure/{machine}/*/t*.json"))):
        found[kind] += [json.loads(path.read_text())["format"] for path in paths]
    assert {kind: set(versions) for kind, versions in found.items()} == {
        kind: {CURRENT[kind]} for kind in found}


def experiments(rows: list[dict]) -> list[tuple[str, str]]:
    """(strategy, repetition) of every run, and of the strategies it was measured for too
    (identical placements are measured once, under the first of them)."""
    return [(s, r["repetition"]) for r in rows for s in [r["strategy"], *r["stands_for"].split()]]


@pytest.mark.slow
@pytest.mark.parametrize("cc", COMPILERS)
def test_tiny_campaign_end_to_end(tmp_path, cc):
    work = write_campaign(tmp_path, compiler={"cc": cc})
    plan = run_campaign(work, "-n")
    assert plan.returncode == 0, plan.stderr
    assert "measure" in plan.stdout and "This was a dry-run" in plan.stdout

    run = run_campaign(work, verbosity="")  # the default terminal (assert_default_terminal)
    # every run of `crash` fails: the campaign fails in one line, keeping results and report
    assert run.returncode == 1, run.stderr[-3000:]
    [failed] = [line for line in run.stderr.splitlines() if line.startswith("campaign failed")]
    # its first runs failed alike: the job stopped after one run of each experiment
    assert failed.startswith(f"campaign failed: {len(STRATEGIES)} cell(s) without a usable run: "
                             "here/crash/t") and "(1 x exit status 3)" in failed
    assert "runs all failed alike (exit status 3): stopping" in run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    # 3 runs cannot make any of the 3 tests of a cell significant: said before measuring
    assert ("pinbench: WARNING: repetitions: with 3 runs against 3 the smallest p-value is "
            "0.1: no strategy can be found faster or slower than the baseline in a cell (3 "
            "tests") in run.stdout
    # on a flat machine (a 2-core VM) every pinned placement is alike: said before measuring
    # and at the end
    flat = [line for line in run.stdout.splitlines() if "machine here is flat (" in line]
    assert len(flat) == (2 if interchangeable(load("auto")) else 0), run.stdout
    results = work / "results" / "tiny"
    assert (results / "report" / "index.html").is_file()
    rows = read_csv(results / "runs.csv")
    threads = str(len(os.sched_getaffinity(0)))
    spin = [r for r in rows if r["benchmark"] == "spin"]
    assert all(r["ok"] == "True" and r["threads"] == threads for r in spin)
    assert {r["verification"] for r in spin if r["strategy"] != "os"} == {"ok"}
    assert sorted(experiments(spin)) == sorted((s, str(k)) for s in STRATEGIES for k in range(3))
    merged = {s for r in spin for s in r["stands_for"].split()}
    measured = len(STRATEGIES) - len(merged)
    assert len(rows) == measured * 3 + max(3, measured)
    crash = [r for r in rows if r["benchmark"] == "crash"]
    assert all(r["ok"] == "False" and r["failure"] == "exit status 3" for r in crash)
    assert all(r["other_cpu"] == "" or 0 <= float(r["other_cpu"]) <= 1 for r in rows)

    summary = (results / "summary.txt").read_text()
    assert f"FAILED {len(crash)} x here/crash/t" in summary and summary not in run.stdout
    cells = {(c["benchmark"], c["strategy"]): c for c in read_csv(results / "stats" / "cells.csv")}
    assert len(cells) == 2 * len(STRATEGIES)
    assert cells[("spin", "compact")]["mean_test"] in ("student", "welch", "not applied")
    assert cells[("crash", "compact")]["mean_test"] == "not applied"
    tables = read_csv(results / "stats" / "summary.csv")
    assert [(t["machine"], t["strategy"], t["benchmarks"]) for t in tables] == [
        ("here", s, "1") for s in ["os", "compact", "random", "scatter"]]
    assert_default_terminal(run, threads, merged)
    plan_text = (results / "nehalem" / "plan.txt").read_text()
    assert "compact: 0 2 4 6 1 3 5 7" in plan_text and "scatter: 0 1 2 3 4 5 6 7" in plan_text
    assert (results / "nehalem" / "placements" / "spin" / "t8" / "random.json").exists()
    assert not (results / "nehalem" / "runs").exists()
    assert_versioned(results, "here")

    journal = results / "here" / "journal" / "spin" / f"t{threads}.jsonl"
    before = journal.read_text()
    again = run_campaign(work)  # -v: Snakemake's own lines too ("Nothing to be done")
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr
    assert journal.read_text() == before
    if cc == COMPILERS[0]:
        assert_quiet_and_live(work)


#: The lines of a campaign's closing block, by their start.
CLOSING = ("time by stage (jobs' wall time, this call): ", "where the call's ", "campaign: ",
           "machine here is flat (", "results: ", "report: ", "campaign failed: ")


def closing_line(line: str) -> bool:
    """Whether ``line`` is one of a closing block: :data:`CLOSING`, or a part of the
    campaign left out (an optional tool missing here)."""
    return line.startswith(CLOSING) or bool(re.match(r"[\w ]+ left out: ", line))
#: Snakemake's one line before its logging starts, when a profile gives its defaults.
PROFILE = "Using workflow specific profile"


def assert_default_terminal(run: subprocess.CompletedProcess, threads: str,
                            merged: set[str]) -> None:
    """The tiny campaign's default output: a header, no line of Snakemake's listing nor of a
    job's progress, one line per cell with its verdict, each experiment once, each warning
    once (with the count of jobs that said it), the closing block last; 50 lines at most."""
    out = run.stdout.splitlines()
    lines = out + run.stderr.splitlines()
    assert len(lines) <= 50, run.stdout + run.stderr
    assert out[0] == "pinbench run: campaign tiny; machines: here (measured), nehalem (planned)"
    assert out[1].startswith("cells: 2 (2 benchmark(s) x 1 thread count(s)) x 4 strategies x "
                             "3 runs: up to 24 runs")
    assert not any(re.search(r"localrule|Finished jobid|Job stats|\d+/\d+ runs \(", line)
                   for line in lines)
    assert [line for line in out if line.startswith(f"  here crash t{threads}: ")] == [
        f"  here crash t{threads}: 3 runs, 3 failed; no verdict: too few usable runs"]
    [spin] = [line for line in out if line.startswith(f"  here spin t{threads}: ")]
    assert spin.startswith(f"  here spin t{threads}: {3 * (len(STRATEGIES) - len(merged))} "
                           "runs, 0 failed; ")
    [experiments] = [line for line in out if line.startswith(f"  here t{threads}: ")]
    assert all(experiments.count(s) == 1 for s in STRATEGIES), experiments
    assert "tables: results/tiny/nehalem/plan.txt, results/tiny/summary.txt, " \
        "results/tiny/stats/summary.txt" in out
    stopped = [line for line in lines if "runs all failed alike" in line]
    assert stopped == [f"[here crash t{threads}] the first 3 runs all failed alike (exit status "
                       "3): stopping, 6 runs not measured (fix the program; pinbench remeasure "
                       "measures the cell again)"]
    uncounted = [line for line in lines if "counters not counted on this machine" in line]
    assert uncounted == [] or (len(uncounted) == 1 and uncounted[0].endswith(" (2 jobs)"))
    assert [line for line in set(lines) if line.strip() and lines.count(line) > 1] == []
    closing = out[out.index(next(line for line in out if line.startswith(CLOSING[0]))):]
    assert [closing_line(line) for line in closing] == [True] * len(closing), closing
    assert closing[-2].startswith("results: ") and closing[-1].startswith("report: ")
    assert [line for line in run.stderr.splitlines() if not line.startswith(PROFILE)] == [
        next(line for line in run.stderr.splitlines() if line.startswith("campaign failed: "))]


def assert_quiet_and_live(work: Path) -> None:
    """The finished tiny campaign again: ``-q`` prints its closing block only; on a terminal
    the live display is drawn while a job runs, and the output ends in the closing block
    (about 10 s on a 2-core VM, busy)."""
    quiet = run_campaign(work, verbosity="-q")
    lines = [line for line in (quiet.stdout + quiet.stderr).splitlines()
             if not line.startswith(PROFILE)]
    assert lines and all(closing_line(line) for line in lines), lines
    # the quickest job: the machine's environment, on its own
    live = on_a_terminal(campaign_command(work, "results/tiny/here/environment.json",
                                          "--forcerun", "environment", verbosity=""))
    assert "\x1b[?25l" in live  # rich hides the cursor while it draws
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", live).replace("\r", "").splitlines()
    assert any(line.startswith("jobs ") for line in plain)  # its bar of the call's jobs
    assert not any("Finished jobid" in line for line in plain)  # no listing of Snakemake's
    ending = [line for line in plain if line.strip()][-4:]
    assert [closing_line(line) for line in ending] == [True] * 4, ending
    assert ending[-1].startswith("campaign failed: ") and ending[-2].startswith("report: ")


def on_a_terminal(command: list[str]) -> str:
    """What ``command`` writes on a pseudo-terminal (its stdout and stderr), to its end."""
    controller, device = os.openpty()
    env = {k: v for k, v in os.environ.items() if k != "CI"} | {"TERM": "xterm",
                                                                "COLUMNS": "120"}
    proc = subprocess.Popen(command, cwd=ROOT, stdin=device, stdout=device, stderr=device,
                            env=env)
    os.close(device)
    out = b""
    with contextlib.suppress(OSError):  # EIO once the last writer closed the terminal
        while data := os.read(controller, 65536):
            out += data
    os.close(controller)
    assert proc.wait(timeout=300) == 1  # the campaign's crash cells
    return out.decode(errors="replace")


def journaled_runs(journal: Path) -> int:
    if not journal.exists():
        return 0
    return max(0, journal.read_text().count("\n") - 1)


def start_and_kill(work: Path, journal: Path, after_runs: int, whole_group: bool) -> list[str]:
    """Start a campaign, SIGKILL it once `after_runs` runs are journaled; return journal lines."""
    proc = subprocess.Popen(campaign_command(work), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 120
    while journaled_runs(journal) < after_runs:
        assert proc.poll() is None and time.monotonic() < deadline, "campaign ended too soon"
        time.sleep(0.02)
    if whole_group:
        os.killpg(proc.pid, signal.SIGKILL)  # Snakemake, the launcher and the running benchmark
    else:
        os.kill(proc.pid, signal.SIGKILL)  # Snakemake only: its measuring process stops
    proc.wait()
    return read_lines(journal)[1:]  # a killed job's journal ends in padding


@pytest.mark.slow
@pytest.mark.parametrize("whole_group", [True, False], ids=["kill-all", "kill-snakemake"])
def test_killed_campaign_resumes_without_losing_or_duplicating_runs(tmp_path, whole_group):
    reps = 5
    work = write_campaign(tmp_path, repetitions=reps, machines={"here": {"topology": "auto"}},
                          benchmarks={"spin": {"source": "tests/data/spin.c", "input": "150"}})
    threads = len(os.sched_getaffinity(0))
    journal = work / "results" / "tiny" / "here" / "journal" / "spin" / f"t{threads}.jsonl"
    journaled = start_and_kill(work, journal, after_runs=3, whole_group=whole_group)
    if whole_group:
        time.sleep(0.3)
        orphans = subprocess.run(["pgrep", "-f", str(work / "results")], capture_output=True)
        assert orphans.returncode == 1, "a benchmark outlived its launcher"

    resumed = run_campaign(work)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    rows = read_csv(work / "results" / "tiny" / "runs.csv")
    keys = experiments(rows)
    assert len(keys) == len(set(keys)) == reps * len(STRATEGIES)
    assert all(r["ok"] == "True" for r in rows)
    started = {r["started_at"] for r in rows}
    assert all(json.loads(line)["started_at"] in started for line in journaled)
    assert journaled_runs(journal) == len(rows)
    assert b"\0" not in journal.read_bytes()  # the resumed job cut the padding off


@pytest.mark.slow
def test_snakemake_lint_is_clean(tmp_path):
    work = write_campaign(tmp_path)
    lint = run_campaign(work, "--lint")
    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert "Lints for" not in lint.stdout + lint.stderr, lint.stdout + lint.stderr


@pytest.mark.slow
def test_study_machines_are_planned_without_running_anything(tmp_path):
    """The example campaign on the study presets computes and prints every placement."""
    work = tmp_path
    (work / "campaign.yaml").write_text((ROOT / "config" / "campaigns" / "study-plan.yaml").read_text())
    run = run_campaign(work)
    assert run.returncode == 0, run.stderr[-3000:]
    results = work / "results" / "study-plan"
    assert sorted(p.name for p in results.iterdir()) == [
        "ccnuma96", "core2", "logs", "nehalem", "report", "timings"]
    assert "Thread → PU: 0 24 48 72 6 30 54 78" in report_text(results)
    assert not list(results.glob("*/runs")) and not list(results.glob("*/journal"))
    assert [p.name for p in results.glob("*/bin/*")] == ["pairs.traced"] * 3  # traced builds only
    placing = sorted(p.name for p in (results / "timings" / "place").rglob("*.tsv"))
    assert placing == ["ccnuma96.tsv", "core2.tsv", "nehalem.tsv"]  # one job per planned machine
    core2 = (results / "core2" / "plan.txt").read_text()
    assert "pairs, 4 threads:" in core2 and "compact: 0 4 2 6 (J " in core2
    ccnuma = (results / "ccnuma96" / "plan.txt").read_text()
    assert "scatter: 0 24 48 72 6 30 54 78 12 36 60 84 18 42 66 90 (J " in ccnuma
    assert ccnuma in run.stdout
    for strategy in ("lp-compact", "lp-scatter", "gp", "lpgp", "gplp", "hierarchical"):
        assert f"{strategy}: " in ccnuma
    placements = results / "nehalem" / "placements" / "pairs" / "t8"
    jays = {p.stem: json.loads(p.read_text())["J"] for p in placements.glob("*.json")}
    assert jays["os"] is None and all(j > 0 for s, j in jays.items() if s != "os")
    assert jays["hierarchical"] <= min(j for s, j in jays.items() if s not in ("os", "random"))
    assert jays["hierarchical"] < jays["compact"]  # pairs are threads i and i+4: compact splits them
    assert (results / "nehalem" / "affinity" / "pairs" / "t8.json").exists()


@pytest.mark.slow
def test_plan_lists_measured_and_planned_machines_placements_measuring_nothing(tmp_path):
    """`pinbench plan`: a measured machine's placements cell by cell, then its plan; a planned
    machine's in one job with its plan; nothing built or measured."""
    work = write_campaign(tmp_path, strategies=["os", "compact"], threads=[1, 2],
                          tracing={"when": "never"}, explain=None)
    plan = subprocess.run([sys.executable, "-m", "pinbench", "plan", str(work / "campaign.yaml"),
                           "--directory", str(work), "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert plan.returncode == 0, plan.stderr[-3000:]
    results = work / "results" / "tiny"
    found = json.loads(plan.stdout)  # --json: the plan, alone on stdout
    assert found["campaign"] == "tiny" and sorted(found["machines"]) == ["here", "nehalem"]
    nehalem = found["machines"]["nehalem"]
    assert (nehalem["measured"], nehalem["threads"]) == (False, [1, 2])
    assert nehalem["plan"] == str(results / "nehalem" / "plan.txt")
    assert [(p["benchmark"], p["threads"], p["strategy"]) for p in nehalem["placements"]] == [
        (bench, n, strategy) for bench in ("crash", "spin") for n in (1, 2)
        for strategy in ("os", "compact")]
    assert nehalem["placements"][1]["pus"] == [0]
    for machine in ("here", "nehalem"):
        lines = (results / machine / "plan.txt").read_text().splitlines()
        assert lines[::3] == [f"{bench}, {n} threads:" for bench in ("crash", "spin")
                              for n in (1, 2)]
        assert lines[1::3] == ["          os: not bound (the OS decides)"] * 4
        assert lines[2].startswith("     compact: ") and len(lines) == 12
        # printed, machine by machine, with where it is (on stderr beside --json's document);
        # no listing of Snakemake's
        assert f"machine {machine}:\n" + "\n".join(lines) in plan.stderr
        assert f"plan: {(results / machine / 'plan.txt').resolve()}" in plan.stderr
    assert "localrule" not in plan.stdout + plan.stderr and "nothing measured" not in plan.stderr
    placing = sorted(p.relative_to(results / "timings" / "place").as_posix()
                     for p in (results / "timings" / "place").rglob("*.tsv"))
    assert placing == ["here/crash/t1.tsv", "here/crash/t2.tsv", "here/spin/t1.tsv",
                       "here/spin/t2.tsv", "nehalem.tsv"]
    assert not list(results.glob("*/bin")) and not list(results.glob("*/runs"))


@pytest.mark.slow
def test_remeasure_sets_the_job_aside_and_measures_it_again(tmp_path):
    """`pinbench remeasure` keeps the old journal (renamed, with why), the
    next call measures that job only, the end of the campaign and the report list it; a call
    with nothing to do still says where the results are, in one line."""
    work = write_campaign(tmp_path, machines={"here": {"topology": "auto"}},
                          benchmarks={"spin": {"source": "tests/data/spin.c", "input": "10"},
                                      "other": {"source": "tests/data/spin.c", "input": "5"}})
    first = run_campaign(work)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "time by stage (jobs' wall time, this call): " in first.stdout
    root = work / "results" / "tiny"
    journal = root / "here" / "journal" / "spin" / "t2.jsonl"
    other = (root / "here" / "journal" / "other" / "t2.jsonl").read_text()
    before = journal.read_text()
    done = subprocess.run([sys.executable, "-m", "pinbench", "remeasure", str(root),
                           "--machine", "here", "--benchmark", "spin", "--threads", "2",
                           "--strategy", "compact"], capture_output=True, text=True, cwd=work)
    assert done.returncode == 0, done.stderr
    assert "measures its whole job again" in done.stdout and "their outputs moved to" in done.stdout
    [stale] = (root / "here" / "journal" / "spin").glob("t2.jsonl.stale-*[0-9]")
    assert stale.read_text() == before and not journal.exists()
    why = json.loads(Path(f"{stale}.why").read_text())
    assert why["runs"] == len(before.splitlines()) - 1 and why["strategy"] == "compact"
    assert why["changed"].startswith("re-measured on request")
    again = run_campaign(work)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "[here spin t2]" in again.stderr and "[here other t2]" not in again.stderr
    assert journal.read_text() != before and stale.read_text() == before
    assert (root / "here" / "journal" / "other" / "t2.jsonl").read_text() == other
    assert "WARNING: measurements set aside: here/spin/t2: " in again.stdout
    html = (root / "report" / "index.html").read_text()
    assert "Measurements set aside" in html and "re-measured on request" in html
    idle = run_campaign(work)
    assert idle.returncode == 0 and "Nothing to be done" in idle.stdout + idle.stderr
    assert f"results: {root}" in idle.stdout and f"report: {root / 'report' / 'index.html'}" \
        in idle.stdout
    assert re.search(r"campaign: \d+ runs in 2 measurement job\(s\)", idle.stdout)


@pytest.mark.slow
def test_oversubscribed_campaign_models_end_to_end(tmp_path):
    """Five thread counts, most above this machine's PUs: wrapped placements verified, Extra-P's
    models in stats/models.csv and the report; without Extra-P one line, and the rest completes."""
    pus = len(os.sched_getaffinity(0))
    counts = list(range(1, 6)) if pus < 5 else [1, 2, 3, 4, pus + 1]
    work = write_campaign(tmp_path, threads=counts, oversubscribe=True,
                          strategies=["os", "compact", "scatter"],
                          machines={"here": {"topology": "auto"}},
                          benchmarks={"spin": {"source": "tests/data/spin.c", "input": "10"}})
    run = run_campaign(work)
    assert run.returncode == 0, run.stderr[-3000:]
    results = work / "results" / "tiny"
    rows = read_csv(results / "runs.csv")
    over = [r for r in rows if int(r["threads"]) > pus and r["strategy"] != "os"]
    assert over and all(r["ok"] == "True" and r["verification"] == "ok" for r in over)
    assert all(len(set(r["pus"].split())) == pus for r in over)
    models = read_csv(results / "stats" / "models.csv")
    medians = [m for m in models if m["quantity"] in ("time_median", "cost_median")]
    assert {m["strategy"] for m in medians if m["model"]} == {"os", "compact", "scatter"}
    report = report_text(results)
    for strategy in ("os", "compact", "scatter"):
        mine = [m for m in medians if m["strategy"] == strategy]
        chosen = [m for m in mine if m["selected"] == "True"]
        if chosen:
            [m] = chosen
            assert m["reliable"] == "True" and m["best_threads"] and m["pus"] == str(pus)
        else:  # the time steps up past the PUs, which no one term may predict: said so
            assert all(m["note"].startswith("no reliable model: cross-validated SMAPE")
                       for m in mine), mine
            assert f"{strategy}: time_median: no reliable model" in report
            assert re.search(rf"^here/spin .*{strategy}.*: time_median: no reliable model",
                             run.stdout, re.MULTILINE)
    assert "median T(p) = " in run.stdout or "no reliable model" in run.stdout
    assert 'id="models"' in report and "Oversubscribed points" in report

    broken = run_campaign(work, env=os.environ | {"PINBENCH_EXTRAP": str(tmp_path / "none")})
    assert broken.returncode == 0, broken.stderr[-3000:]
    [line] = [x for x in broken.stdout.splitlines() if x.startswith("WARNING: no scalability")]
    assert "Extra-P is not installed" in line
    assert read_csv(results / "stats" / "models.csv") == []
    assert "Extra-P is not installed" in (results / "report" / "index.html").read_text()


@pytest.mark.slow
def test_graph_strategies_refuse_oversubscribed_counts(tmp_path):
    pus = len(os.sched_getaffinity(0))
    work = write_campaign(tmp_path, threads=[pus + 1], oversubscribe=True,
                          strategies=["os", "lp-compact"], machines={"here": {"topology": "auto"}})
    plan = run_campaign(work, "-n")
    assert plan.returncode != 0
    assert (f"pinbench run: error: strategies: lp-compact cannot place {pus + 1} threads on "
            f"the {pus} placeable PUs of machine 'here'") in plan.stderr
    refused = run_campaign(write_campaign(tmp_path / "no", threads=[pus + 1]), "-n")
    assert "(oversubscribe: true allows that)" in refused.stderr
