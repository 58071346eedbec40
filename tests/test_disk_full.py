"""A full disk, for real: the results on a small tmpfs (mounted here as root; skipped where
mounting is not allowed). The measuring process says so in one line, keeps every finished
run journaled, starts no job on a file system with too little room, and the next call,
once there is room again, measures exactly the runs the journal lacks."""
import contextlib
import os
import re
import subprocess
import time
from pathlib import Path

import pytest
from test_interrupts import measuring_command, wait_for

from pinbench import full_disk
from pinbench.measure.cli import MIN_FREE_BYTES
from pinbench.results.journals import read_lines
from pinbench.results.runs import read_runs


@contextlib.contextmanager
def small_file_system(path: Path, size: int):
    """:func:`pinbench.full_disk.small_file_system`; the test is skipped where mounting is not
    allowed."""
    with contextlib.ExitStack() as stack:
        try:
            mounted = stack.enter_context(full_disk.small_file_system(path, size))
        except full_disk.CannotMount as exc:
            pytest.skip(f"cannot mount a tmpfs here: {exc}")
        yield mounted


def test_a_job_does_not_start_on_a_file_system_without_room(tmp_path):
    with small_file_system(tmp_path / "fs", 8 << 20) as fs:
        command = measuring_command(fs)
        started = time.monotonic()
        proc = subprocess.run(command, capture_output=True, text=True, timeout=60)
        assert time.monotonic() - started < 10
        assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
        assert re.fullmatch(rf"python -m pinbench.measure: error: only [78] MiB free on the "
                            rf"file system of {fs} \(a job needs {MIN_FREE_BYTES >> 20} MiB to "
                            r"start\): free some space, then run again\n", proc.stderr)
        assert not (fs / "pids").exists() and not (fs / "j.jsonl").exists()


@pytest.mark.slow
def test_a_disk_that_fills_during_a_job_ends_it_in_one_line_and_it_resumes(tmp_path):
    """The runs print 96 KiB of random text, kept compressed: once the disk is full, the
    next run's kept output cannot be written."""
    with small_file_system(tmp_path / "fs", MIN_FREE_BYTES + (8 << 20)) as fs:
        command = [*measuring_command(fs, repetitions=6), "--outputs", str(fs / "out")]
        script = command[command.index("--spec") + 1]
        noisy = script.replace("sleep 2.0;", "head -c 72000 /dev/urandom | base64; sleep 0.3;")
        command[command.index("--spec") + 1] = noisy
        proc = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
        wait_for(lambda: len(read_lines(fs / "j.jsonl")) >= 3)
        filler = full_disk.fill(fs)
        _, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 1, stderr
        last = stderr.splitlines()[-1]
        assert last.startswith("python -m pinbench.measure: error: No space left on device "
                               f"writing {fs}/out/"), stderr
        assert "Traceback" not in stderr
        journaled = len(read_lines(fs / "j.jsonl")) - 1
        assert 2 <= journaled < 6
        filler.unlink()
        resumed = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert resumed.returncode == 0, resumed.stderr
        assert f"resuming: {journaled} of 6 runs already journaled" in resumed.stderr
        assert sorted(r.repetition for r in read_runs([fs / "t.csv"])) == list(range(6))
        assert len((fs / "pids").read_text().split()) in (6, 7)  # at most the lost one again
        assert os.path.getsize(fs / "j.jsonl") == len("".join(
            line + "\n" for line in read_lines(fs / "j.jsonl")))  # no padding, no torn line
