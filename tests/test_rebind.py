"""Run-time re-binding per parallel region (pinbench/measure/rebind.py, rebind.c): a placement
with regions is measured with the shim preloaded, each region's threads land on that region's
CPUs and are checked there, a PU the machine refuses is a mismatch in one line, the shim's
cost is in the run's record, and without the shim the per-region strategy is left out."""
from __future__ import annotations

import csv
import dataclasses
import os
import subprocess
from pathlib import Path

import pytest
from conftest import DATA, builds, helper, needs_two_cpus
from test_launcher import TWO_PUS, job, placement
from test_missing_tools import campaign, machine, manifest_without

from pinbench import native
from pinbench.measure import rebind, rebind_cost
from pinbench.measure.job import measure_one, run_job
from pinbench.results.runs import RunRecord, read_runs, write_runs
from pinbench.stats.verdicts import experiments
from pinbench.workflow import optional

REPS = 3  # each region runs this many times


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    """tests/data/two_regions.c built with gcc (libgomp) or clang (libomp)."""
    return builds(DATA / "two_regions.c", tmp_path_factory.mktemp("two"))


def region_keys(binary: Path, tmp_path: Path) -> list[str]:
    """The program's two call sites' keys, region A's first: the shim's record of a run with
    the whole-program placement alone."""
    plan, out = tmp_path / "plan", tmp_path / "out"
    rebind.write_plan(TWO_PUS, [], str(plan))
    env = rebind.environment({"OMP_NUM_THREADS": "2", "PATH": "/usr/bin:/bin"},
                             str(helper("rebind")), str(plan), str(out))
    subprocess.run([str(binary), "1"], env=env, check=True, capture_output=True)
    record = rebind.read_record(str(out))
    assert list(record.regions.values()) == [("default", 1), ("default", 1)]
    return list(record.regions)


def per_region(binary: Path, tmp_path: Path, b_pus: list[int]):
    """A job of one placement putting region B's threads on ``b_pus``, the rest of the
    program (region A) on the first two CPUs; and its regions."""
    _, b = region_keys(binary, tmp_path)
    regions = [{"key": b, "where": "two_regions.c:19", "pus": b_pus}]
    plan = dataclasses.replace(placement("per-region", TWO_PUS), regions=regions)
    return job(binary, {"per-region": plan}, argv=[str(binary), str(REPS)],
               quiet={"threshold": 0.1, "max_wait_s": 0.0}), regions


def printed_cpus(stdout: str) -> dict[str, set[tuple[int, int]]]:
    """Region -> the (thread, CPU) pairs the program printed."""
    seen: dict[str, set[tuple[int, int]]] = {}
    for line in stdout.splitlines():
        if line.startswith("region "):
            _, name, _, thread, cpu = line.split()
            seen.setdefault(name, set()).add((int(thread), int(cpu)))
    return seen


@needs_two_cpus
@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_each_region_runs_on_its_own_placement_and_is_verified(programs, tmp_path, cc):
    """gcc: the GOMP_parallel wrapper; clang: OMPT under libomp. Region B on (1, 0), region A
    (not chosen) back on the whole-program (0, 1) at each of its starts: the program's own
    sched_getcpu per region, the shim's samples, the record."""
    swapped = TWO_PUS[::-1]
    spec, regions = per_region(programs[cc], tmp_path, swapped)
    [row] = run_job(spec, tmp_path / "j.jsonl", tmp_path / "t.csv", str(tmp_path / "lock"),
                    lambda line: None)
    assert read_runs([tmp_path / "t.csv"]) == [row]
    assert row.ok and row.verification == "ok", row
    assert row.regions == rebind.format_regions(regions) and row.rebind_note == ""
    assert row.region_instances == 2 * REPS and row.rebind_checked == 2 * 2 * REPS
    # each instance moves both threads (when the runtime gives thread i the same OS thread
    # in each team, as libgomp's pool and libomp's hot team do)
    assert 0 < row.rebinds <= 2 * 2 * REPS and 0 < row.rebind_s < row.wall_s
    assert row.rebind_per_instance_s == row.rebind_s / (2 * REPS)
    env, _ = spec.prepared[next(iter(spec.prepared))]
    ran = subprocess.run(spec.argv, env=env, capture_output=True, text=True, check=True)
    assert printed_cpus(ran.stdout) == {"A": set(enumerate(TWO_PUS)), "B": set(enumerate(swapped))}


@needs_two_cpus
def test_a_cpu_the_machine_refuses_is_a_mismatch_in_one_line(programs, tmp_path):
    refused = max(os.sched_getaffinity(0)) + 5
    spec, _ = per_region(programs["gcc"], tmp_path, [TWO_PUS[0], refused])
    row = measure_one(spec, "per-region", 0, 0)
    assert row.ok and row.verification == "mismatch" and not row.counts
    assert row.rebind_note.endswith(f"thread 1 on CPU {TWO_PUS[1]}, planned {refused} "
                                    "(sched_setaffinity: Invalid argument)"), row.rebind_note
    assert "\n" not in row.rebind_note


def test_a_program_that_leaves_no_record_is_missing():
    assert rebind.check(None, [0, 1], []) == (
        "missing", "the re-binding shim wrote no record (the program ran no parallel region, "
        "or did not exit normally)")
    team = rebind.Record({"p+0x1": ("default", 1)}, [rebind.Sample("p+0x1", 0, 0, 3, 0, 0, 1, 0, 0)])
    assert rebind.check(team, [0, 1], []) == ("threads", "region p+0x1 ran 3 threads, 2 planned")


def run(strategy: str, **fields) -> RunRecord:
    """A run record of ``strategy`` on PUs 0 and 1."""
    return RunRecord("m", "b", 2, strategy, 0, 0, True, "", 1.0, "wall", 1.0, 0.1, 0.1, 0,
                     False, True, "ok", "0 1", "0:0 1:1", 0.0, "x", "t", **fields)


REBIND_COLUMNS = ("regions", "region_instances", "rebinds", "rebind_s", "rebind_checked",
                  "rebind_note")


def test_the_records_fields_are_kept_and_old_tables_read(tmp_path):
    record = run("per-region", regions="p+0x1:1,0", region_instances=6, rebinds=12,
                 rebind_s=3e-5, rebind_checked=12)
    write_runs([record], tmp_path / "t.csv")
    assert read_runs([tmp_path / "t.csv"]) == [record]
    assert record.rebind_per_instance_s == pytest.approx(5e-6)
    with open(tmp_path / "t.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    with open(tmp_path / "old.csv", "w", newline="") as handle:  # a table from before them
        columns = [name for name in rows[0] if name not in REBIND_COLUMNS]
        writer = csv.DictWriter(handle, columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    [before] = read_runs([tmp_path / "old.csv"])
    assert (before.region_instances, before.regions, before.rebind_per_instance_s) == \
        (None, "", None)


def test_a_per_region_run_is_an_experiment_of_its_own():
    """Its whole-program PUs are compact's: still not merged with it."""
    groups = experiments([run("compact"), run("scatter"), run("per-region", regions="p+0x1:1,0")],
                         lambda machine, pus: pus)
    assert [g.strategies for g in groups] == [["compact", "scatter"], ["per-region"]]


def test_without_the_shim_the_per_region_strategy_is_left_out_in_one_line(tmp_path,
                                                                          monkeypatch):
    monkeypatch.setenv(native.NATIVE_DIR_VARIABLE,
                       str(manifest_without(tmp_path / "native", "rebind")))
    # traced always: whether per-region needs a matrix is not this test's question
    config = campaign(explain=None, strategies=["os", "compact", "per-region"],
                      tracing={"tracer": "tsan", "when": "always"})
    [part] = optional.left_out(config, [machine("here", (1, 2))]).values()
    assert part.line() == ("per-region left out: the re-binding shim is not built: rebind "
                           "cannot be built here (test); then run pinbench setup (neither placed nor measured; the other strategies are)")
    assert optional.left_out(campaign(explain=None, strategies=["os"]),
                             [machine("here", (1, 2))]) == {}


def test_the_cost_of_a_rebinding_is_calibrated_once_per_build(tmp_path, monkeypatch):
    shim = helper("rebind")
    monkeypatch.setenv(native.NATIVE_DIR_VARIABLE, str(tmp_path))
    assert rebind.rebind_cost_s() == rebind_cost.DEFAULT_COST_S  # not calibrated here
    said = []
    cost = rebind_cost.calibrate(shim, tmp_path, said.append)
    assert 0 < cost["per_call_s"] < 0.01 and cost["threads"] == len(os.sched_getaffinity(0))
    assert rebind.rebind_cost_s() == cost["per_call_s"]
    assert len(said) == 1 and said[0].startswith("pinbench setup: re-binding cost ")
    assert rebind_cost.calibrate(shim, tmp_path, said.append) == cost and len(said) == 1
