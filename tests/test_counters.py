"""Per-run counters (perf_event_open in the launcher): the program's own, from its execve to
its exit, every thread, nothing of the launcher's."""
from __future__ import annotations

import os

import pytest

from pinbench.measure.spawn import base_environment, run_once

SOFTWARE = {"task_clock_ns", "context_switches", "cpu_migrations", "page_faults"}
HARDWARE = {"cycles", "instructions", "llc_misses", "energy_uj"}  # energy: RAPL, machine-wide


def test_every_counter_is_counted_or_says_why():
    result = run_once(["/bin/true"], base_environment(), 10)
    assert result.exit_status == 0
    assert SOFTWARE <= set(result.counters), result.uncounted
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
    result = run_once(["/bin/sh", "-c", "sleep 0.05; sleep 0.05"], base_environment(), 10)
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
