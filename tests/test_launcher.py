"""Real runs through the launcher: binding verification, failures, environment, timeouts, the
parent-death chain, journal."""
import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from optional_tools import COMPILERS

from pinbench.measure import launcher as launcher_module
from pinbench.measure import verify
from pinbench.measure.job import Job, measure_one, run_order
from pinbench.measure.journal import Journal
from pinbench.measure.launcher import Launcher
from pinbench.measure.legacy import legacy_fingerprint, read_header
from pinbench.measure.spawn import base_environment, run_once
from pinbench.measure.system import shortest_share_s
from pinbench.results.placements import Placement
from pinbench.topology import topology_xml

TWO_PUS = sorted(os.sched_getaffinity(0))[:2]


def job(binary: Path, placements: dict[str, Placement], **overrides) -> Job:
    fields = dict(machine="local", benchmark="spin", threads=len(TWO_PUS),
                  argv=[str(binary), "20"], env={}, validate="^validation: OK$", time=None,
                  timeout_s=20, repetitions=1, seed=1, order="interleaved",
                  strategies=list(placements), placements=placements)
    fields.update(overrides)
    return Job(**fields)


def placement(strategy: str, pus: list[int] | None) -> Placement:
    """A strategy's placement on this machine's first two PUs (``pus``: None, not bound)."""
    return Placement(strategy=strategy, threads=len(pus or TWO_PUS), topology="auto",
                     placeable=[0, 1], pus=pus, J=None)


def fixed(pus):
    return placement("compact", pus)


@pytest.mark.parametrize("cc", COMPILERS)
def test_pinned_run_is_verified(spin_binaries, cc):
    planned = list(reversed(TWO_PUS))
    row = measure_one(job(spin_binaries[cc], {"compact": fixed(planned)}), "compact", 0, 0)
    assert row.ok and row.verification == "ok", row
    assert row.pus == " ".join(map(str, planned))
    assert row.observed == " ".join(f"{t}:{pu}" for t, pu in enumerate(planned))


@pytest.mark.parametrize("cc", COMPILERS)
def test_invalid_place_fails_verification_instead_of_running_silently(spin_binaries, cc):
    """A PU the machine lacks: the runtime drops the place and runs on another CPU."""
    missing_pu = max(os.sched_getaffinity(0)) + 5
    planned = [TWO_PUS[0], missing_pu]
    row = measure_one(job(spin_binaries[cc], {"compact": fixed(planned)}, threads=2),
                      "compact", 0, 0)
    assert row.verification == "mismatch", row
    assert f"1:{missing_pu}" not in row.observed


def test_os_runs_are_not_bound(spin_binaries):
    row = measure_one(job(spin_binaries["gcc"], {"os": placement("os", None)}),
                      "os", 0, 0)
    assert row.ok and row.verification == "n/a" and row.pus == ""
    assert row.observed.startswith("0:")


@pytest.mark.parametrize("args, overrides, failure", [
    (["20", "crash"], {}, "exit status 3"),
    (["20", "bad"], {}, "validation regex '^validation: OK$' not found"),
    (["20", "hang"], {"timeout_s": 0.5}, "timeout after 0.5 s"),
    (["20"], {"time": r"^no_such_line: (\S+)$"},
     r"time regex '^no_such_line: (\\S+)$' found no number"),
    (["20", "crash"], {"exit_status": [0, 4]}, "exit status 3"),
    (["20"], {"metrics": {"rate": r"^rate: (\S+)$"}}, r"metric regex '^rate: (\\S+)$' (rate)"),
])
def test_failures_are_recorded_not_raised(spin_binaries, args, overrides, failure):
    binary = str(spin_binaries["gcc"])
    spec = job(binary, {"os": placement("os", None)}, argv=[binary, *args], **overrides)
    row = measure_one(spec, "os", 0, 0)
    assert not row.ok and row.failure.startswith(failure)
    assert row.wall_s < 10


def test_time_regex_replaces_wall_time(spin_binaries):
    binary = str(spin_binaries["gcc"])
    spec = job(binary, {"os": placement("os", None)}, argv=[binary, "30"],
               time=r"^kernel_time_s: (\S+)$")
    row = measure_one(spec, "os", 0, 0)
    assert row.ok and row.time_source == "regex" and row.time_s == 0.03
    assert row.wall_s > 0.03


def test_children_get_a_minimal_environment_without_aslr(monkeypatch):
    monkeypatch.setenv("LEAKY_VARIABLE", "1")
    script = "cat /proc/self/personality; env"
    result = run_once(["/bin/sh", "-c", script], base_environment() | {"EXTRA": "x"}, 10)
    personality, *env = result.stdout.split()
    assert int(personality, 16) & 0x0040000  # ADDR_NO_RANDOMIZE
    names = {line.split("=")[0] for line in env}
    assert "LEAKY_VARIABLE" not in names and "OMP_NUM_THREADS" not in names
    assert {"PATH", "EXTRA"} <= names


def test_a_program_that_cannot_start(tmp_path):
    result = run_once([str(tmp_path / "nothing")], base_environment(), 5)
    assert result.exit_status == 127 and "cannot start" in result.error


def test_the_cpu_time_is_sampled_again_only_after_a_run_long_enough_for_a_share():
    with Launcher() as launcher:
        short = launcher.run("/bin/true", ["true"], base_environment(), 10, 0)
        long = launcher.run("/bin/sleep", ["sleep", f"{shortest_share_s() * 1.5:.3f}"],
                            base_environment(), 10, 0)
    assert (short.busy_after, short.total_after) == (short.busy_before, short.total_before)
    assert long.total_after > long.total_before


@pytest.mark.parametrize("text, expected", [
    ("pinbench-affinity 0 1\npinbench-affinity 1 0-2\n", {0: {1}, 1: {0, 1, 2}}),
    ("noise\npinbench-affinity 1 0,1,4\npinbench-affinity 0 3\n", {0: {3}, 1: {0, 1, 4}}),
])
def test_affinity_lines_of_both_runtimes(text, expected):
    assert verify.observed_binding(text) == expected


def test_verification_results():
    assert verify.verify([1, 0], {0: {1}, 1: {0}}) == "ok"
    assert verify.verify([1, 0, 2], {0: {1}, 2: {2}}) == "missing"
    assert verify.verify([1, 0], {0: {0}, 1: {0}}) == "mismatch"
    assert verify.verify([1, 0], {0: {1}, 1: {0}, 3: {0}}) == "mismatch"
    # a whole team of another size: the program chose its thread count, bound or not
    assert verify.verify([1, 0], {0: {1}}) == "threads"
    assert verify.verify([1, 0], {0: {1}, 1: {0}, 2: {0}}) == "threads"
    assert verify.verify(None, {0: {1}, 1: {0}, 2: {0}}, threads=2) == "threads"
    assert verify.verify(None, {0: {0, 1}, 1: {0, 1}}, threads=2) == "n/a"
    assert verify.verify(None, {}, threads=2) == "missing"  # no team of two ever ran
    assert verify.verify(None, {}) == "n/a"
    assert verify.verify([1, 0], {0: {1}, 1: {0, 1}}) == "mismatch"
    assert verify.verify(None, {}) == "n/a"


def test_interleaved_order_is_seeded_and_complete():
    order = run_order(["os", "compact"], 35, "interleaved", seed=3)
    assert order == run_order(["os", "compact"], 35, "interleaved", seed=3)
    assert sorted(order) == sorted((s, r) for s in ("os", "compact") for r in range(35))
    assert order != run_order(["os", "compact"], 35, "back-to-back", seed=3)
    assert run_order(["os", "compact"], 2, "back-to-back", 0) == [
        ("os", 0), ("os", 1), ("compact", 0), ("compact", 1)]


def test_journal_resumes_drops_torn_lines_and_sets_aside_other_measurements(tmp_path):
    path = tmp_path / "j.jsonl"
    journal = Journal(path, "fp1")
    journal.append({"strategy": "os", "repetition": 0, "time_s": 1.0})
    journal.close()  # no padding left: the torn line at the data's end (test_journal: in it)
    with path.open("a") as handle:
        handle.write('{"strategy": "os", "repeti')  # killed in the middle of a write
    resumed = Journal(path, "fp1")
    assert list(resumed.runs) == [("os", 0)]
    resumed.append({"strategy": "os", "repetition": 1, "time_s": 2.0})
    resumed.close()
    lines = path.read_text().splitlines()
    assert len(lines) == 3 and all(json.loads(line) for line in lines)
    other = Journal(path, "fp2")
    assert other.runs == {} and other.set_aside and other.set_aside.exists()


@pytest.mark.parametrize("threads, pus, legacy, fingerprint", [
    (2, [1, 0], "a744400e718640f552e079fb2bd9a56b698872a97bcd95905c0c2cd2b67b7e37",
     "8f30d73f84087c365d571506c0c17b60afe94150c43bd8033ec04ff657ad2897"),
    (1, [1], "a2313cafa7082c153cbaa64b96a729b35b2111fdf242ab5f91c7b1081b41eaae",
     "e9b4c08c4d340e3d66b6a7cbdbc9cfe98b9b22d2fe259cbfd0c7629a8446f0d0"),
])
def test_fingerprints_of_journals_already_written_do_not_drift(tmp_path, monkeypatch, threads,
                                                               pus, legacy, fingerprint):
    """A resumed job reuses journaled runs only while its hash is one they were written with:
    today's, or (journals of earlier pinbench, same measurement) the legacy one, which the
    workflow's absolute binary path does not change; today's does not hold the placement's J.
    (The legacy hashes are those the release before versions computed for these placements,
    whose files held the thread pairs' shared levels: derived now from their topology file.)"""
    monkeypatch.chdir(tmp_path)
    Path("prog").write_text("not a real program\n")
    Path("topology.xml").write_text(topology_xml("Package:1 Core:2 PU:1"))
    placed = dataclasses.replace(fixed(pus), topology="topology.xml")
    spec = job(Path("prog"), {"compact": placed}, threads=threads, env={"A": "1"})
    assert spec.fingerprint() == fingerprint and legacy_fingerprint(spec) == legacy
    moved = job(Path("prog").resolve(), {"compact": placed}, threads=threads, env={"A": "1"})
    assert moved.fingerprint() == fingerprint
    old = {"fingerprint": legacy, "created": 1.0}  # a version 1 header, before the parts
    assert read_header(old, "j", moved) == {"fingerprint": fingerprint, "created": 1.0}
    retraced = job(Path("prog").resolve(), {"compact": dataclasses.replace(placed, J=3.5)},
                   threads=threads, env={"A": "1"})
    assert retraced.fingerprint() == fingerprint
    statuses = job(Path("prog"), {"compact": placed}, threads=threads, env={"A": "1"},
                   exit_status=[0, 1])
    assert read_header(old, "j", statuses) == old  # legacy knew no statuses
    Path("topology.xml").unlink()  # its pairs' levels unknown: another hash, set aside
    assert read_header(old, "j", moved) == old


def test_a_changed_measurement_says_what_changed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("prog").write_text("not a real program\n")
    spec = job(Path("prog"), {"compact": fixed([1, 0]), "os": placement("os", None)})
    journal = Journal(tmp_path / "j.jsonl", spec.fingerprint(),
                      header={"parts": spec.fingerprint_parts()})
    journal.append({"strategy": "os", "repetition": 0, "time_s": 1.0})
    moved = job(Path("prog"), {"compact": fixed([0, 1]), "os": placement("os", None)})
    again = Journal(tmp_path / "j.jsonl", moved.fingerprint(),
                    header={"parts": moved.fingerprint_parts()})
    assert again.runs == {} and again.set_aside_runs == 1
    assert again.changed == "placement of compact changed"
    why = json.loads(Path(f"{again.set_aside}.why").read_text())
    assert why["runs"] == 1 and why["changed"] == "placement of compact changed"


def test_the_child_has_only_its_three_streams_and_no_input():
    result = run_once(["/bin/sh", "-c", "ls /proc/self/fd; readlink /proc/self/fd/0"],
                      base_environment(), 10)
    *fds, stdin = result.stdout.split()
    assert set(fds) == {"0", "1", "2", "3"}, fds  # 3: the directory ls lists
    assert stdin == "/dev/null"


def test_a_timeout_kills_the_whole_process_group(tmp_path):
    pids = tmp_path / "pids"
    script = f"sleep 60 & echo $! > {pids}; sleep 60"
    result = run_once(["/bin/sh", "-c", script], base_environment(), 0.5)
    assert result.timed_out and result.exit_status == -9 and 0.5 <= result.wall_s < 5
    background = int(pids.read_text())
    deadline = time.monotonic() + 5
    while _alive(background):  # killed with the group, then reaped by init
        assert time.monotonic() < deadline, "the background child survived the timeout"
        time.sleep(0.05)


def test_only_the_last_bytes_of_each_stream_come_back():
    with Launcher() as launcher:
        reply = launcher.run("/bin/sh", ["sh", "-c", "printf 0123456789; printf abcdefgh >&2"],
                             base_environment(), 10, output_limit=4)
    assert (reply.stdout, reply.stderr) == ("6789", "efgh")
    assert reply.wait_status == 0 and reply.max_rss_kb > 0


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not count)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


MEASURING_PROCESS = """
import sys
from pinbench.measure.spawn import base_environment, run_once
from pinbench.measure.system import shortest_share_s
from pinbench.results import formats
from pinbench.results.placements import Placement
from pinbench.measure import launcher
print(launcher.shared().pid, flush=True)
run_once(["/bin/sh", "-c", "echo $$ > " + sys.argv[1] + "; exec sleep 60"], base_environment(), 60)
"""


def test_the_program_and_the_launcher_die_with_the_measuring_process(tmp_path):
    """The parent-death chain: measuring process -> launcher -> program, all SIGKILL."""
    pidfile = tmp_path / "program.pid"
    proc = subprocess.Popen([sys.executable, "-c", MEASURING_PROCESS, str(pidfile)],
                            stdout=subprocess.PIPE, text=True)
    try:
        launcher_pid = int(proc.stdout.readline())
        deadline = time.monotonic() + 10
        while not pidfile.exists() or not pidfile.read_text().strip():
            assert time.monotonic() < deadline
            time.sleep(0.02)
        program_pid = int(pidfile.read_text())
        assert _alive(launcher_pid) and _alive(program_pid)
    finally:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + 5
    while _alive(launcher_pid) or _alive(program_pid):
        assert time.monotonic() < deadline, "the launcher or the program outlived its parent"
        time.sleep(0.05)


def test_a_launcher_dead_between_runs_is_replaced_before_the_next():
    first = launcher_module.shared()
    dead = first.pid
    os.kill(dead, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while first.alive():
        assert time.monotonic() < deadline
        time.sleep(0.01)
    reply = first.run("/bin/true", ["true"], {}, 10, 100)
    assert reply.wait_status == 0 and first.pid != dead and first.alive()


def test_the_program_has_its_own_process_group_in_the_launchers_session():
    """Its own group (a timeout kills all of it), not its own session (a new autogroup of the
    scheduler per run, which slows short programs on a busy machine)."""
    result = run_once(["/bin/sh", "-c", "cat /proc/$$/stat; echo $$"], base_environment(), 10)
    stat, pid = result.stdout.splitlines()
    fields = stat.rsplit(")", 1)[1].split()
    pgrp, session = int(fields[2]), int(fields[3])
    assert pgrp == int(pid)
    assert session == os.getsid(launcher_module.shared().pid) == os.getsid(0)
