"""Start one benchmark run in a fixed environment and time it.

The child gets a minimal environment (no inherited variables but those named),
address-space randomisation off (``personality(ADDR_NO_RANDOMIZE)``, as
``setarch -R`` does), its own session so a timeout kills its whole process
group, and ``PR_SET_PDEATHSIG`` so it dies with the launcher instead of
running on as an orphan that would disturb the next measurement. Wall time
is taken with a monotonic clock around spawn..wait, user and system time
from ``wait4``'s rusage.

Before the spawn and after the reaping (outside the timed span), the machine's CPU
time is sampled from ``/proc/stat``: what the run and the launcher did not use, others
did (:attr:`RunResult.other_cpu`).

Between the program's exit and its reaping, the launcher reads from the kernel
the CPUs its initial thread was last allowed (the zombie's ``Cpus_allowed_list``):
nothing runs in the program for it, and that read is left out of the wall time.
"""
from __future__ import annotations

import ctypes
import os
import select
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from affinity.measure.system import CpuTimes, other_share

ADDR_NO_RANDOMIZE = 0x0040000
PR_SET_PDEATHSIG = 1
#: Bytes kept from each output stream of a run.
OUTPUT_LIMIT = 1 << 20
_libc = ctypes.CDLL(None, use_errno=True)


def base_environment() -> dict[str, str]:
    """The environment every run starts from, whatever the caller's is."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": os.environ.get("HOME", "/"),
        "LANG": "C",
        "LC_ALL": "C",
    }


def _prepare_child() -> None:  # runs in the child between fork and exec
    _libc.personality(ADDR_NO_RANDOMIZE)
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


@dataclass
class RunResult:
    """What one run did."""

    wall_s: float
    user_s: float
    sys_s: float
    exit_status: int  #: exit code, or -signal when killed by a signal
    timed_out: bool
    stdout: str
    stderr: str
    error: str = ""  #: the launcher's own problem (e.g. the program cannot start)
    #: the kernel's list of CPUs the initial thread was allowed at exit, e.g. ``"2"`` or
    #: ``"0-3"``; "" when the run timed out or the kernel did not say
    exit_cpus: str = ""
    #: the share of all CPUs' time other processes used during the run (None: too short)
    other_cpu: float | None = None


def _tail(path: Path) -> str:
    with path.open("rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        handle.seek(max(0, size - OUTPUT_LIMIT))
        return handle.read().decode("utf-8", "replace")


def read_exit_cpus(pid: int) -> str:
    """The ``Cpus_allowed_list`` of an exited, unreaped child's initial thread ("" if unreadable)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            for line in status:
                if line.startswith(b"Cpus_allowed_list:"):
                    return line.split(b":", 1)[1].strip().decode()
    except OSError:
        pass
    return ""


def run_once(argv: list[str], env: dict[str, str], timeout_s: float, scratch: Path) -> RunResult:
    """Run ``argv`` once with exactly ``env`` and return its times and output.

    Output goes to files in ``scratch`` (not pipes: nothing is read while the
    program runs). A run past ``timeout_s`` is killed with its process group.
    """
    scratch.mkdir(parents=True, exist_ok=True)
    out_path, err_path = scratch / "run.stdout", scratch / "run.stderr"
    with out_path.open("wb") as out, err_path.open("wb") as err:
        cpu_before, ours_before = CpuTimes.now(), _our_cpu_s()
        start = time.monotonic_ns()
        try:
            proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=err, start_new_session=True,
                                    preexec_fn=_prepare_child, close_fds=True)
        except OSError as exc:
            return RunResult(0.0, 0.0, 0.0, 127, False, "", "", f"cannot start: {exc}")
        timed_out = _wait_or_kill(proc.pid, timeout_s)
        exited = time.monotonic_ns()
        cpus = "" if timed_out else read_exit_cpus(proc.pid)
        untimed = time.monotonic_ns() - exited
        _, status, usage = os.wait4(proc.pid, 0)
        wall_s = (time.monotonic_ns() - start - untimed) / 1e9
        others = other_share(cpu_before, CpuTimes.now(), _our_cpu_s() - ours_before)
        proc.returncode = os.waitstatus_to_exitcode(status)
    return RunResult(wall_s, usage.ru_utime, usage.ru_stime, proc.returncode, timed_out,
                     _tail(out_path), _tail(err_path), exit_cpus=cpus, other_cpu=others)


def _our_cpu_s() -> float:
    """CPU seconds of this process and its reaped children (the runs) so far."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def _wait_or_kill(pid: int, timeout_s: float) -> bool:
    """Block until the child exits or the timeout passes; on timeout kill its group."""
    fd = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([fd], [], [], timeout_s)
    finally:
        os.close(fd)
    if ready:
        return False
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return True
