"""Per-run counters (perf_event_open in the launcher): the program's own, from its execve to
its exit, every thread, nothing of the launcher's."""
from __future__ import annotations

import json
import os
import re

import pytest
from conftest import needs_two_cpus

from pinbench.measure.spawn import base_environment, run_once

SOFTWARE = {"task_clock_ns", "context_switches", "cpu_migrations", "page_faults"}
#: The software events counted in the kernel alone: refused to a user the kernel lets count
#: only the user-space share of an event (perf_event_paranoid 2, not root).
KERNEL_ONLY = {"context_switches", "cpu_migrations"}
HARDWARE = {"cycles", "instructions", "llc_misses", "energy_uj"}  # energy: RAPL, machine-wide


def test_every_counter_is_counted_or_says_why():
    result = run_once(["/bin/true"], base_environment(), 10)
    assert result.exit_status == 0
    assert SOFTWARE - KERNEL_ONLY <= set(result.counters), result.uncounted
    if os.geteuid() == 0 or KERNEL_ONLY <= set(result.counters):
        assert SOFTWARE <= set(result.counters), result.uncounted
    else:
        assert {result.uncounted[name] for name in KERNEL_ONLY} <= {
            os.strerror(1), os.strerror(13)}  # EPERM, EACCES
    assert set(result.counters) | set(result.uncounted) == SOFTWARE | HARDWARE
    assert all(why and "\n" not in why for why in result.uncounted.values())
    # /bin/true's own: a few hundred page faults and well under 100 ms of CPU, not the
    # launcher's (which waits on the program all the while)
    assert 10 < result.counters["page_faults"] < 2000
    assert result.counters["task_clock_ns"] < 1e8


def test_planted_page_faults_and_cpu_time_of_every_thread_are_counted(spin_binaries):
    pages = 20000  # 80 MB touched once: a page fault each
    touch = run_once(["python3", "-c", f"b = bytearray({pages} * 4096)\nfor i in range(0, len(b), 4096): b[i] = 1"],
                     base_environment(), 60)
    assert touch.exit_status == 0, touch.stderr
    assert touch.counters["page_faults"] >= pages
    # a two-thread OpenMP spin: the task clock is the CPU time of both threads (rusage's)
    threads = min(2, len(os.sched_getaffinity(0)))
    spin = run_once([str(spin_binaries["gcc"]), "200"],
                    base_environment() | {"OMP_NUM_THREADS": str(threads)}, 60)
    assert spin.exit_status == 0, spin.stderr
    cpu_ns = (spin.user_s + spin.sys_s) * 1e9
    assert cpu_ns * 0.8 < spin.counters["task_clock_ns"] < cpu_ns * 1.2 + 2e7


def test_a_program_that_sleeps_switches_context():
    """Counted where the kernel lets this user count the kernel's events; refused, never a
    zero, where it does not (perf_event_paranoid 2 without root: only the user-space share of
    an event, and a context switch has none)."""
    result = run_once(["/bin/sh", "-c", "sleep 0.05; sleep 0.05"], base_environment(), 10)
    if "context_switches" in result.uncounted:
        assert "context_switches" not in result.counters and os.geteuid() != 0
        return
    assert result.counters["context_switches"] >= 2


@pytest.mark.parametrize("text, counted, refused", [
    ("task_clock_ns=10,cycles=?", {"task_clock_ns": 10.0, "cycles": None}, {}),
    ("llc_misses=!95", {}, {"llc_misses": os.strerror(95)}),
])
def test_the_reply_field_reads(text, counted, refused):
    from pinbench.measure.launcher import parse_counters

    assert parse_counters(text) == (counted, refused)


def test_every_run_of_a_launcher_counts_not_only_its_first_two():
    # an event kept open across runs stops counting after its second child (Linux 6.1)
    faults = [run_once(["/bin/true"], base_environment(), 10).counters["page_faults"]
              for _ in range(8)]
    assert min(faults) > 10, faults


def test_the_launcher_and_the_runs_table_name_the_same_counters():
    from conftest import ROOT

    from pinbench.results.runs import COUNTERS

    source = (ROOT / "pinbench" / "measure" / "launcher.c").read_text()
    named = re.findall(r'\{"(\w+)", PERF_TYPE_', source)
    assert (*named, "energy_uj") == COUNTERS


def test_a_counter_as_the_metric_replaces_the_time_and_a_run_without_it_fails():
    from conftest import run_record

    from pinbench.results.runs import on_metric

    counted = run_record(time_s=2.0, counters='{"page_faults": 120.0, "cycles": null}')
    bare = run_record(time_s=3.0)
    assert on_metric([counted, bare], "time") == [counted, bare]
    faults, missing = on_metric([counted, bare], "page_faults")
    assert faults.time_s == 120.0 and faults.ok
    assert not missing.ok and missing.failure == "counter page_faults not counted"
    assert not on_metric([counted], "cycles")[0].ok  # never scheduled


@pytest.mark.slow
@needs_two_cpus
def test_a_campaign_s_verdicts_on_a_counter(tmp_path):
    import csv

    import yaml
    from conftest import ROOT, run_campaign

    work = tmp_path / "work"
    work.mkdir()
    (work / "campaign.yaml").write_text(yaml.safe_dump({
        "campaign": "faults", "repetitions": 5, "threads": [2], "metric": "page_faults",
        "strategies": ["os", "compact"], "machines": {"here": {"topology": "auto"}},
        "benchmarks": {"spin": {"source": str(ROOT / "tests" / "data" / "spin.c"),
                                "input": "20", "timeout_s": 20}}}))
    run = run_campaign(work)
    assert run.returncode == 0, run.stderr[-3000:]
    results = work / "results" / "faults"
    assert (results / "stats" / "summary.txt").read_text().startswith("metric: page_faults")
    with open(results / "runs.csv", newline="") as handle:
        faults = {json.loads(r["counters"])["page_faults"] for r in csv.DictReader(handle)}
    with open(results / "stats" / "cells.csv", newline="") as handle:
        medians = {float(c["median_s"]) for c in csv.DictReader(handle)}
    assert medians and all(min(faults) <= m <= max(faults) for m in medians)
    assert "not on the run time" in (results / "report" / "index.html").read_text()
    bad = work / "bad.yaml"
    bad.write_text((work / "campaign.yaml").read_text().replace("page_faults", "flops"))
    refused = run_campaign(work, "-n", campaign=bad)
    assert refused.returncode != 0 and "metric: 'flops' is none of time, task_clock_ns" \
        in refused.stderr
