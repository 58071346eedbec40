"""Stopping a measurement for real: SIGINT or SIGTERM to the measuring process, or to
Snakemake alone, or Snakemake killed: the run under way ends unjournaled, the process says
so in one line and exits promptly (releasing the machine lock), and the next call measures
exactly the runs the journal lacks."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, campaign_command, run_campaign
from test_launcher import _alive

from pinbench.measure import interrupt
from pinbench.results.journals import read_lines
from pinbench.results.runs import read_runs
from pinbench.workflow import snakemake_adapter

RUN_S = 1.0  # each run of the tests' campaign
SLEEP_S = 2.0  # each run of the tests' measuring process


def measuring_command(tmp_path: Path, repetitions: int = 3) -> list[str]:
    """A measuring process whose runs take SLEEP_S each and write their pid to ``pids``."""
    script = f"echo $$ >> {tmp_path / 'pids'}; sleep {SLEEP_S}; echo validation: OK"
    spec = {"machine": "here", "benchmark": "sleep", "threads": 1,
            "argv": ["/bin/sh", "-c", script], "env": {}, "validate": "^validation: OK$",
            "time_regex": None, "timeout_s": 30, "repetitions": repetitions, "seed": 1,
            "order": "interleaved", "strategies": ["os"], "quiet": {"threshold": 1,
                                                               "max_wait_s": 0}}
    placement = tmp_path / "os.json"
    placement.write_text(json.dumps({"format": 2, "strategy": "os", "threads": 1,
                                     "topology": "auto", "placeable": [0], "pus": None,
                                     "J": None}))
    return [sys.executable, "-m", "pinbench.measure", "--spec", json.dumps(spec),
            "--placements", str(placement), "--journal", str(tmp_path / "j.jsonl"),
            "--out", str(tmp_path / "t.csv"), "--lock", str(tmp_path / "lock")]


def wait_for(condition, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.02)


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_ends_the_run_under_way_and_the_next_call_resumes(tmp_path, signum):
    command = measuring_command(tmp_path)
    proc = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    pids = tmp_path / "pids"
    wait_for(lambda: pids.exists() and len(pids.read_text().split()) == 2)  # run 2 under way
    asked = time.monotonic()
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=30)
    assert time.monotonic() - asked < SLEEP_S / 2  # the run was not waited for
    assert proc.returncode == 128 + signum
    assert stderr.splitlines()[-1] == (
        f"python -m pinbench.measure: stopped ({signal.Signals(signum).name}): the run under "
        "way is not journaled, the finished ones are; the next call resumes"), stderr
    assert "Traceback" not in stderr
    assert not any(_alive(int(pid)) for pid in pids.read_text().split())
    assert len(read_lines(tmp_path / "j.jsonl")) == 2  # the header and the finished run
    resumed = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming: 1 of 3 runs already journaled" in resumed.stderr
    assert sorted(r.repetition for r in read_runs([tmp_path / "t.csv"])) == [0, 1, 2]


def test_a_workflow_gone_before_the_measuring_process_looked_stops_it(tmp_path):
    """Snakemake killed while its measuring process starts: the process it names is gone
    before the measuring process watches it, which then stops before its first run instead
    of measuring its whole cell."""
    gone = subprocess.Popen(["true"])
    gone.wait()
    env = dict(os.environ, PINBENCH_WORKFLOW=f"{os.uname().nodename} {gone.pid}")
    proc = subprocess.run(measuring_command(tmp_path), env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        "python -m pinbench.measure: stopped (the workflow's process ended): the run under way "
        "is not journaled, the finished ones are; the next call resumes"], proc.stderr
    assert not (tmp_path / "pids").exists()


#: Imported first (``sitecustomize``): the measuring process signals itself while it imports
#: its command-line module, as a stop that comes while it starts.
STOP_WHILE_STARTING = """
import os, signal, sys
class Stop:
    def find_spec(self, name, path=None, target=None):
        if name == "pinbench.measure.cli":
            os.kill(os.getpid(), signal.{signal})
sys.meta_path.insert(0, Stop())
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_while_the_measuring_process_starts_is_said_in_one_line(tmp_path, signum):
    """Snakemake passes a stop on to its measuring processes, one maybe still importing: no
    traceback (SIGINT) and no silent death (SIGTERM), the line of a stop, no run started."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        STOP_WHILE_STARTING.format(signal=signal.Signals(signum).name))
    env = dict(os.environ, PYTHONPATH=str(hook))
    proc = subprocess.run(measuring_command(tmp_path), env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 128 + signum, proc.stderr
    assert proc.stderr.splitlines() == [
        f"python -m pinbench.measure: stopped ({signal.Signals(signum).name}): the run under "
        "way is not journaled, the finished ones are; the next call resumes"], proc.stderr
    assert not (tmp_path / "pids").exists()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_passed_on_waits_until_a_measuring_process_handles_it(tmp_path, signum):
    """Snakemake passes a stop on (:func:`stop_measurements`) to a measuring process that
    has not yet installed its handlers (here: still in Python's start-up, for 0.5 s): it gets
    the signal once they are, and says so in one line."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text("import time\ntime.sleep(0.5)\n")
    env = dict(os.environ, PYTHONPATH=str(hook))
    proc = subprocess.Popen(measuring_command(tmp_path), env=env, stderr=subprocess.PIPE,
                            text=True)
    wait_for(lambda: interrupt.MEASURING_MODULE in Path(f"/proc/{proc.pid}/cmdline")
             .read_bytes().split(b"\0"))
    assert not interrupt.installed(proc.pid)
    assert interrupt.stop_measurements(os.getpid(), signum) == [proc.pid]
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signum, stderr
    assert stderr.splitlines() == [
        f"python -m pinbench.measure: stopped ({signal.Signals(signum).name}): the run under "
        "way is not journaled, the finished ones are; the next call resumes"], stderr


def slow_campaign(work: Path) -> Path:
    """A campaign of one measurement job of 12 runs of about RUN_S each."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "campaign.yaml").write_text(yaml.safe_dump({
        "campaign": "slow", "repetitions": 4, "threads": ["all"],
        "machines": {"here": {"topology": "auto"}}, "quiet": {"max_wait_s": 0},
        "benchmarks": {"spin": {"source": "tests/data/spin.c", "input": str(RUN_S * 1000)}}}))
    threads = len(os.sched_getaffinity(0))
    return work / "results" / "slow" / "here" / "journal" / "spin" / f"t{threads}.jsonl"


def measuring_processes(work: Path) -> list[str]:
    found = subprocess.run(["pgrep", "-f", f"pinbench.measure .*{work}"], capture_output=True,
                           text=True)
    return found.stdout.split()


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_a_stop_to_snakemake_alone_stops_its_measurement_promptly(tmp_path, signum):
    """Snakemake asked to stop waits for its running jobs: the measurement stops at once
    instead of running its cell to the end (or on, when Snakemake was killed), and its line
    is the campaign's last."""
    journal = slow_campaign(tmp_path)
    with open(tmp_path / "said", "w") as said:
        proc = subprocess.Popen(campaign_command(tmp_path), cwd=ROOT, stdout=said, stderr=said,
                                start_new_session=True)
    wait_for(lambda: len(read_lines(journal)) >= 2, timeout=300)
    assert measuring_processes(tmp_path)
    os.kill(proc.pid, signum)  # Snakemake only, not its group
    wait_for(lambda: not measuring_processes(tmp_path), timeout=5)
    proc.wait(timeout=30)
    if signum != signal.SIGKILL:  # the measuring process's line, and nothing after it
        assert (tmp_path / "said").read_text().splitlines()[-1] == (
            f"python -m pinbench.measure: stopped ({signal.Signals(signum).name}): the run "
            "under way is not journaled, the finished ones are; the next call resumes")
    journaled = len(read_lines(journal)) - 1
    assert journaled < 12
    resumed = run_campaign(tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"resuming: {journaled} of 12 runs already journaled" in resumed.stderr
    assert len(read_lines(journal)) == 13


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_ends_a_campaign_whose_job_would_not_end(tmp_path, signum):
    """Snakemake asked to stop waits for its running jobs, whatever the signal: a build that
    hangs would keep it (and the user) waiting. The campaign ends within its grace period
    (:data:`STOP_GRACE_S`), in one line and nothing after it, the hanging build ended with
    it, and the next call starts the build again."""
    marker = tmp_path / "build-started"
    (tmp_path / "campaign.yaml").write_text(yaml.safe_dump({
        "campaign": "hangs", "repetitions": 3, "threads": [1],
        "machines": {"here": {"topology": "auto"}},
        "benchmarks": {"stuck": {"build": f"echo $$ > {marker}; sleep 300; touch {{output}}",
                                 "run": "{binary}"}}}))
    proc = subprocess.Popen(campaign_command(tmp_path), cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    wait_for(lambda: marker.is_file() and marker.read_text().strip(), timeout=120)
    sleeper = int(marker.read_text())
    os.kill(proc.pid, signum)  # Snakemake only, not its group
    started = time.monotonic()
    _, stderr = proc.communicate(timeout=60)
    assert time.monotonic() - started < snakemake_adapter.STOP_GRACE_S + 20
    assert proc.returncode == 128 + signum, stderr[-2000:]
    said = stderr.splitlines()
    assert said[said.index(snakemake_adapter.stop_line(signum)):] == [
        snakemake_adapter.stop_line(signum)], stderr[-2000:]  # nothing from Snakemake after it
    assert not _alive(sleeper)
    marker.unlink()
    again = subprocess.Popen(campaign_command(tmp_path), cwd=ROOT, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    wait_for(lambda: marker.is_file() and marker.read_text().strip(), timeout=120)
    os.killpg(again.pid, signal.SIGKILL)
    again.wait(timeout=30)
