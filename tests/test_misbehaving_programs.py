"""Programs that misbehave, for real: each prints what a broken benchmark prints, leaves
processes behind, floods its output, moves its own threads, or stops or kills its launcher.
Each run is recorded as what it is (a failed run, or a misplaced one), in one line, and the
runs after it are measured as if nothing had happened."""
import json
import os
import threading
import time

import pytest
from conftest import DATA, OnFirstUse, builds, compile_c, needs_two_cpus
from optional_tools import COMPILERS
from test_launcher import TWO_PUS, _alive, job, placement

from pinbench.measure.job import measure_one, run_job
from pinbench.measure.launcher import Launcher, LauncherLost
from pinbench.measure.printed_time import LARGEST_TIME, quoted
from pinbench.measure.spawn import base_environment, run_once
from pinbench.results.runs import write_runs
from pinbench.workflow.rule_bodies import runs_table

UNBOUND = {"os": placement("os", None)}


def shell_job(script: str, **overrides):
    """A job whose program is a shell script (not bound)."""
    return job("/bin/sh", UNBOUND, argv=["/bin/sh", "-c", script], **overrides)


@pytest.mark.parametrize("printed", ["nan", "inf", "-inf", "1e308", "1e400", "0e999",
                                     "1e" + "9" * 5000])
def test_a_printed_time_that_is_not_a_finite_number_fails_the_run(printed, tmp_path):
    """``0e999`` is zero whose last digit is worth 1e999 (its resolution was infinite, and the
    journal refused the record); an exponent of 5000 digits is more than Python reads as an
    int (a ValueError killed the measuring process): both found by the fuzz test."""
    spec = shell_job(f"echo 'time_s: {printed}'; echo 'validation: OK'",
                     time=r"^time_s: (\S+)$")
    record = measure_one(spec, "os", 0, 0)
    assert not record.ok and record.time_s is None and record.time_resolution_s is None
    assert record.failure == (f"printed time {quoted(printed)} is not a finite number of "
                              f"seconds up to {LARGEST_TIME:g}")
    json.loads(json.dumps(record.as_row(), allow_nan=False))  # standard JSON
    write_runs([record, measure_one(shell_job("echo 'validation: OK'"), "os", 1, 1)],
               tmp_path / "t.csv")
    summary = runs_table([tmp_path / "t.csv"], tmp_path / "runs.csv", tmp_path / "summary.txt")
    assert "1 failed" in summary or "failed" in summary, summary


def test_what_a_failed_program_wrote_last_on_stderr_reaches_its_failure_escaped():
    """Control characters (an ESC sequence, a NUL, BEL) in the line a failure quotes are
    written as escapes: the failure stays one line and no terminal obeys them."""
    record = measure_one(shell_job(r"printf 'bad\033[2J\000\a\200end\n' >&2; exit 3"),
                         "os", 0, 0)
    assert record.failure == "exit status 3: bad\\x1b[2J\\x00\\x07\ufffdend"


def test_a_metric_that_is_not_a_finite_number_fails_the_run():
    spec = shell_job("echo 'rate: nan'; echo 'validation: OK'",
                     metrics={"rate": r"^rate: (\S+)$"})
    record = measure_one(spec, "os", 0, 0)
    assert not record.ok and record.metrics == ""
    assert record.failure == r"metric regex '^rate: (\\S+)$' (rate) found no finite number " \
        "in the output"


def test_a_metric_printed_with_its_thousands_grouped_reads_as_one_number():
    spec = shell_job("echo 'rate: 839,437 ops/s'; echo 'validation: OK'",
                     metrics={"rate": r"^rate: ([0-9,.]+) ops/s$"})
    record = measure_one(spec, "os", 0, 0)
    assert record.ok, record.failure
    assert json.loads(record.metrics) == {"rate": 839437.0}


def test_an_optional_metric_the_output_lacks_records_no_value_and_the_run_stays_ok():
    """``required: false``: a metric the program may not print (or prints as no number) is
    left out of the run's metrics (standard JSON, no NaN); a required one still fails it."""
    optional = {"regex": r"^cache hits: (\S+)$", "required": False}
    spec = shell_job("echo 'rate: 12.5'; echo 'misses: nan'; echo 'validation: OK'",
                     metrics={"rate": r"^rate: (\S+)$", "hits": optional,
                              "misses": {"regex": r"^misses: (\S+)$", "required": False}})
    record = measure_one(spec, "os", 0, 0)
    assert record.ok, record.failure
    assert json.loads(record.metrics) == {"rate": 12.5}
    json.loads(json.dumps(record.as_row(), allow_nan=False))
    required = shell_job("echo 'validation: OK'", metrics={"rate": r"^rate: (\S+)$",
                                                          "hits": optional})
    record = measure_one(required, "os", 0, 0)
    assert not record.ok and record.failure == r"metric regex '^rate: (\\S+)$' (rate) found no " \
        "finite number in the output"


def test_processes_a_program_leaves_are_killed_and_fail_its_run(tmp_path):
    """One in the program's group, one in a session of its own (out of the group's reach),
    one that prints the validation line late (a subshell and its sleep): none outlives the
    run, and none writes into the next one."""
    pids = tmp_path / "pids"
    left = shell_job(f"sleep 60 & echo $! >> {pids}; setsid sleep 60 & echo $! >> {pids}; "
                     "(sleep 0.3; echo validation: OK) & sleep 0.1")
    record = measure_one(left, "os", 0, 0)
    assert not record.ok and record.failure.startswith(
        "left 4 processes running after it exited (killed)"), record.failure
    assert not any(_alive(int(pid)) for pid in pids.read_text().split())
    time.sleep(0.5)  # the late printer would have printed by now, into the next run
    quiet = measure_one(shell_job("sleep 0.1"), "os", 0, 0)
    assert quiet.failure == "validation regex '^validation: OK$' not found in the output"


def test_a_flood_of_output_is_held_bounded_and_counted():
    """400 MiB written in about a second: the launcher's memory file holds 16 MiB and what the
    program writes between two looks (0.1 s apart, later when the machine is busy: the bound
    checked is half of what was written, never the whole); the run keeps the last MiB and
    says how much the program wrote."""
    script = "for i in $(seq 400); do head -c 1048576 /dev/zero; done; echo validation: OK"
    with Launcher() as launcher:
        launcher.run("/bin/true", ["true"], {}, 10, 100)  # its memory files are made
        memfd = next(f"/proc/{launcher.pid}/fd/{fd}"
                     for fd in os.listdir(f"/proc/{launcher.pid}/fd")
                     if os.readlink(f"/proc/{launcher.pid}/fd/{fd}").startswith(
                         "/memfd:pinbench-stdout"))
        replies, held = [], []
        runner = threading.Thread(target=lambda: replies.append(launcher.run(
            "/bin/sh", ["sh", "-c", script], base_environment(), 60, 1 << 20)))
        runner.start()
        while runner.is_alive():
            held.append(os.stat(memfd).st_blocks * 512)
            time.sleep(0.005)
        runner.join()
    (reply,) = replies
    assert reply.output_bytes == 400 * 2**20 + len("validation: OK\n")
    assert len(reply.stdout) == 2**20 and reply.stdout.endswith("\0validation: OK\n")
    written_per_look = reply.output_bytes / reply.wall_s * 0.1  # a look every 0.1 s at most
    assert max(held) < reply.output_bytes / 2, \
        f"held {max(held) >> 20} MiB, written {written_per_look / 2**20:.0f} MiB per look"


@pytest.fixture(scope="module")
def mover(tmp_path_factory) -> OnFirstUse:
    return builds(DATA / "move_threads.c", tmp_path_factory.mktemp("move"))


@needs_two_cpus
@pytest.mark.parametrize("cc", COMPILERS)
@pytest.mark.parametrize("onto, args", [(0, ["300"]), (1, ["300"]), (0, ["300", "main"]),
                                        (0, ["3", "main"])],
                         ids=["all-threads", "worker-thread", "initial-thread",
                              "initial-thread-short"])
def test_a_program_that_moves_its_own_threads_is_a_mismatch(mover, cc, onto, args):
    """The runtime reports each thread's place; the threads then move onto one CPU: the
    launcher's looks at the running threads (worker-thread: thread 0 stays on its place, only
    thread 1 moves), or the initial thread's CPUs at exit, show it."""
    planned = [TWO_PUS[1], TWO_PUS[0]]
    binary = str(mover[cc])
    spec = job(binary, {"compact": placement("compact", planned)},
               argv=[binary, str(TWO_PUS[onto]), *args])
    record = measure_one(spec, "compact", 0, 0)
    assert record.ok and record.verification == "mismatch", record
    still = job(binary, {"compact": placement("compact", planned)},
                argv=[binary, str(planned[0]), "300", "main"])  # moves onto its own place
    assert measure_one(still, "compact", 0, 0).verification == "ok"


def test_a_thread_on_other_cpus_only_before_it_is_bound_is_no_mismatch(tmp_path):
    """A thread just created has its creator's CPUs until its runtime binds it, and on a busy
    machine it may wait past the launcher's looks before it runs: a thread's CPUs count once
    it has run (they made correct runs mismatches)."""
    binary = str(compile_c(DATA / "bind_late.c", tmp_path / "late"))
    spec = job(binary, {"compact": placement("compact", TWO_PUS)},
               argv=[binary, str(TWO_PUS[0]), "100"])
    assert [measure_one(spec, "compact", 0, 0).verification for _ in range(3)] == ["ok"] * 3


@pytest.mark.slow
def test_a_program_that_stops_its_launcher_fails_its_run_and_the_next_runs_go_on(tmp_path):
    """The timeout is the measuring process's too: a stopped launcher is killed with the run."""
    pid = tmp_path / "pid"
    with Launcher(grace_s=1) as launcher:
        started = time.monotonic()
        with pytest.raises(LauncherLost, match="did not answer 1 s past the run's timeout"):
            launcher.run("/bin/sh", ["sh", "-c", f"echo $$ > {pid}; kill -STOP $PPID; sleep 60"],
                         base_environment(), 1, 100)
        assert time.monotonic() - started < 5
        assert not _alive(int(pid.read_text()))
        assert launcher.run("/bin/true", ["true"], {}, 10, 100).wait_status == 0


def test_a_program_that_kills_its_launcher_fails_its_run_and_the_next_runs_go_on():
    with Launcher() as launcher:
        result = run_once(["/bin/sh", "-c", "kill -KILL $PPID; sleep 60"], base_environment(),
                          30, launcher)
        assert result.error.startswith(f"the launcher (pid {launcher.pid}) died during the run")
        assert run_once(["/bin/true"], base_environment(), 10, launcher).exit_status == 0
    failed = measure_one(shell_job("kill -KILL $PPID; sleep 60"), "os", 0, 0)
    assert not failed.ok and "died during the run" in failed.failure


def test_a_job_whose_first_runs_all_fail_alike_stops_there(tmp_path):
    """A program that cannot run (here: it always exits 3) fails its first runs alike: the job
    stops after max(3, strategies) of them, in one line, instead of failing all 30."""
    said = []
    two = {"os": placement("os", None), "os2": placement("os2", None)}
    spec = job("/bin/sh", two, argv=["/bin/sh", "-c", "echo nope >&2; exit 3"],
               repetitions=10, quiet={"threshold": 1.0, "max_wait_s": 0})
    records = run_job(spec, tmp_path / "j.jsonl", tmp_path / "t.csv", str(tmp_path / "lock"),
                      said.append)
    assert len(records) == 3 and not any(r.ok for r in records)
    [line] = [line for line in said if "all failed alike" in line]
    assert "the first 3 runs all failed alike (exit status 3): stopping, 17 runs not measured" \
        in line
    # one run that succeeds among them: no stop
    mixed = shell_job(f"[ -e {tmp_path}/once ] && exit 3; touch {tmp_path}/once; "
                      "echo 'validation: OK'", repetitions=3, quiet={"threshold": 1.0,
                                                                      "max_wait_s": 0})
    assert len(run_job(mixed, tmp_path / "m.jsonl", tmp_path / "m.csv",
                       str(tmp_path / "lock"), said.append)) == 3
