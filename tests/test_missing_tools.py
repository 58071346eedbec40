"""A campaign on a machine without the optional tools (clang and libomp, Valgrind, Extra-P,
likwid, Chromium, SLURM): every part that needs one is left out in one line, everything else
runs, and the campaign ends with its report (pinbench/workflow/optional.py)."""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, campaign_command
from optional_tools import stripped_path
from pinbench import native
from pinbench.measure.launcher import Launcher
from pinbench.results.runs import COUNTERS
from pinbench.workflow import optional
from pinbench.workflow.campaign import Machine


def manifest_without(folder: Path, *names: str) -> Path:
    """A native folder whose manifest is this installation's, ``names`` marked not built."""
    manifest = native.read_manifest(native.native_dir())
    for name in names:
        manifest[name] = {"not_built": f"{name} cannot be built here (test)"}
    folder.mkdir(parents=True, exist_ok=True)
    for entry in manifest.values():  # the built helpers' folders, linked
        if "path" in entry and not (folder / entry["path"].split("/")[0]).exists():
            (folder / entry["path"].split("/")[0]).symlink_to(
                native.native_dir() / entry["path"].split("/")[0])
    (folder / native.MANIFEST).write_text(json.dumps(manifest))
    return folder


def machine(name: str, threads: tuple[int, ...], measure: bool = True) -> Machine:
    return Machine(name, "auto", None, measure, threads)


def campaign(**changes) -> dict:
    config = {"explain": {"repetitions": 6}, "strategies": ["os", "compact", "lp-compact"],
              "tracing": {"tracer": "valgrind", "when": "auto"}, "placements": {}}
    return config | changes


def test_each_missing_part_is_named_with_its_tool(tmp_path, monkeypatch):
    monkeypatch.setenv(native.NATIVE_DIR_VARIABLE,
                       str(manifest_without(tmp_path / "native", "ompt", "valgrind")))
    parts = optional.left_out(campaign(), [machine("here", (1, 2))])
    assert sorted(parts) == ["explain", "tracing"]
    assert parts["explain"].line() == ("explain left out: the OMPT tool is not built: ompt "
                                       "cannot be built here (test); then run pinbench setup "
                                       "(the cells are measured without explained runs)")
    assert "the valgrind tracer: the Valgrind tool is not built" in parts["tracing"].why


def test_nothing_is_left_out_of_what_the_campaign_does_not_ask(tmp_path, monkeypatch):
    monkeypatch.setenv(native.NATIVE_DIR_VARIABLE,
                       str(manifest_without(tmp_path / "native", "ompt", "valgrind")))
    config = campaign(explain=None, strategies=["os", "compact"])  # no explain, no trace
    assert optional.left_out(config, [machine("here", (1, 2))]) == {}
    # a planned machine is not measured: nothing to explain
    planned = [machine("big", (1, 2, 4, 8, 16), measure=False)]
    assert optional.left_out(campaign(tracing={"tracer": "tsan", "when": "auto"}), planned) == {}


def test_a_counter_the_kernel_does_not_count_is_named(monkeypatch):
    """The metric's counter is asked of the launcher; here a name it never counts stands for
    a hardware counter of a virtual machine."""
    monkeypatch.setattr(optional, "uncounted", lambda counter: f"{counter}: no such event")
    config = campaign(explain=None, strategies=["os", "compact"], metric="cycles")
    [part] = optional.left_out(config, [machine("here", (1, 2))]).values()
    assert part.line() == ("metric cycles left out: this machine's kernel does not count cycles "
                           "(cycles: no such event) (the verdicts, tables and report are on "
                           "the run time instead)")
    slurm = Machine("node", "auto", None, True, (1, 2), {"partition": "p"})
    assert optional.left_out(config, [slurm]) == {}  # its node counts what it counts


def test_the_counters_refused_are_the_launchers_own_answer():
    """What :func:`optional.uncounted` says of each counter is what a run says of it."""
    with Launcher() as launcher:
        reply = launcher.run("/bin/true", ["true"], {}, 10.0, 4096)
    assert set(reply.counters) | set(reply.uncounted) >= set(COUNTERS) - {"energy_uj"}
    for counter in COUNTERS:
        assert optional.uncounted(counter) == reply.uncounted.get(counter), counter


@pytest.mark.slow
def test_a_campaign_without_any_optional_tool_ends_with_its_report(tmp_path):
    """The issue's campaign, with explanations, a Valgrind trace and a counter as the metric,
    run by a user whose PATH has no clang, Valgrind, likwid, Chromium or SLURM, whose
    helpers were built there, and who has no Extra-P: it completes, one line per part left
    out, the report says them, and a second call finds nothing to do."""
    path = stripped_path(tmp_path / "bin")
    env = dict(os.environ, PATH=path, PINBENCH_NATIVE_DIR=str(tmp_path / "native"),
               PINBENCH_EXTRAP=str(tmp_path / "no-extrap"))
    setup = subprocess.run([sys.executable, "-m", "pinbench", "setup"], env=env,
                           capture_output=True, text=True)
    assert setup.returncode == 0, setup.stdout + setup.stderr
    assert "not built: ompt" in setup.stdout and "not built: valgrind" in setup.stdout
    (tmp_path / "campaign.yaml").write_text(yaml.safe_dump({
        "campaign": "bare", "repetitions": 3, "threads": [1, 2], "quiet": {"max_wait_s": 0},
        "strategies": ["os", "compact", "lp-compact", "gp"], "metric": "task_clock_ns",
        "explain": {"repetitions": 6}, "tracing": {"tracer": "valgrind"},
        "machines": {"here": {"topology": "auto"}},
        "benchmarks": {"triad": {"source": "benchmarks/triad.c", "input": "quick"}}}))
    run = subprocess.run(campaign_command(tmp_path), cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stdout.splitlines()
    explain = next(line for line in lines if line.startswith("explain left out: "))
    assert "the OMPT tool is not built" in explain
    tracing = next(line for line in lines if line.startswith("tracing left out: "))
    assert "the Valgrind tool is not built: valgrind not found" in tracing
    results = tmp_path / "results" / "bare"
    with open(results / "runs.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {row["strategy"] for row in rows} == {"os", "compact"}
    assert len(rows) == 2 * 2 * 3 and all(row["ok"] == "True" for row in rows)
    index = (results / "report" / "index.html").read_text()
    assert "Parts of the campaign left out." in index and "the OMPT tool is not built" in index
    again = subprocess.run(campaign_command(tmp_path), cwd=ROOT, env=env, capture_output=True,
                           text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "Nothing to be done" in again.stdout + again.stderr


def test_a_helper_never_built_is_a_set_up_to_do_not_a_missing_tool(tmp_path, monkeypatch):
    """Only what ``pinbench setup`` could not build here is left out; with no helper built at
    all, the campaign stops in the job that needs one (``run pinbench setup``)."""
    monkeypatch.setenv(native.NATIVE_DIR_VARIABLE, str(tmp_path / "never-built"))
    assert optional.left_out(campaign(), [machine("here", (1, 2))]) == {}
