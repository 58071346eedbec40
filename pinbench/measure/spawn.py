"""Start one benchmark run in a fixed environment and time it.

The child gets a minimal environment (no inherited variables but those named),
address-space randomisation off (``personality(ADDR_NO_RANDOMIZE)``, as
``setarch -R`` does), its own process group so a timeout kills the whole group,
and ``PR_SET_PDEATHSIG`` so it dies with the launcher instead of running on as an
orphan that would disturb the next measurement. It stays in the launcher's session:
a session of its own would be a new autogroup of the scheduler per run, which
slows short programs on a busy machine (see ``launcher.c``). All of that is
done by the C launcher (:mod:`pinbench.measure.launcher`), which starts the program
in a vfork-style child and times it itself: wall time is a monotonic clock
around spawn..wait, user and system time come from ``wait4``'s rusage.

The program's stdout and stderr go to two memory files of the launcher, emptied before
each run: no file is created or truncated per run (truncating an ext4 file that held
data costs about 0.2 ms), and nothing is read while it runs. A program that writes more
than 16 MiB has all but the last :data:`OUTPUT_LIMIT` bytes freed as it goes (the launcher
looks every 0.1 s at most), so it holds 16 MiB plus what the program writes in 0.1 s; the
record says how much it wrote (:attr:`RunResult.output_bytes`).

The launcher is the subreaper of each run: what the program leaves running when it exits
(a forked child it did not wait for) is killed and counted (:attr:`RunResult.leftover`),
and the run fails, so nothing it left writes into or slows a later run.

Before the spawn and after the reaping (outside the timed span), the launcher samples
the machine's CPU time from ``/proc/stat`` (kept open): what the run and the launcher did
not use, others did (:attr:`RunResult.other_cpu`); the measuring Python process sleeps on
the launcher's pipe meanwhile. A run too short for a share
(:func:`pinbench.measure.system.shortest_share_s`, 0.1 s on two CPUs) is sampled before only.

Between the program's exit and its reaping, the launcher asks the kernel the CPUs its
initial thread was last allowed (``sched_getaffinity`` of the zombie: its
``Cpus_allowed_list``): nothing runs in the program for it, and that call is left out of
the wall time. While the program runs, it also looks at the CPUs each of its threads may run
on (at 10, 20, 40 ms ..., then every second: :attr:`RunResult.thread_cpus`), so that a
program that moves its own threads with ``sched_setaffinity`` is caught; asked to, at those
of every process below it too (:attr:`RunResult.executables`: a program run through a
wrapper, :mod:`pinbench.measure.verify`).

The program starts in the folder the request names (:mod:`pinbench.measure.workdir`), or in
this process's.
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

from pinbench.measure import launcher as c_launcher
from pinbench.measure.system import CpuTimes, other_share

#: Bytes kept from each output stream of a run.
OUTPUT_LIMIT = 1 << 20


def base_environment() -> dict[str, str]:
    """The environment every run starts from, whatever the caller's is."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": os.environ.get("HOME", "/"),
        "LANG": "C",
        "LC_ALL": "C",
    }


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
    #: the program's peak resident set (kB), from ``wait4``
    max_rss_kb: int = 0
    #: the processes the program left running when it exited, killed by the launcher
    leftover: int = 0
    #: all the program wrote to stdout and stderr (of which the last OUTPUT_LIMIT are kept)
    output_bytes: int = 0
    #: the program's process id: its initial thread's task id (0: it did not start)
    pid: int = 0
    #: process id -> task id -> the CPUs that thread was seen allowed on while the program
    #: ran (an initial thread's: at the last look); the program's own process, and with
    #: ``descendants`` (:func:`prepare`) every process below it
    thread_cpus: dict[int, dict[int, str]] = dataclasses.field(default_factory=dict)
    #: process id -> the executable it ran, for every process looked at with ``descendants``
    executables: dict[int, str] = dataclasses.field(default_factory=dict)
    #: the program's counters from its execve to its exit (perf_event_open: software events,
    #: hardware ones where the machine has them), name -> count (None: never scheduled)
    counters: dict[str, float | None] = dataclasses.field(default_factory=dict)
    #: the counters the kernel would not count here, name -> why
    uncounted: dict[str, str] = dataclasses.field(default_factory=dict)


def executable(argv0: str, env: dict[str, str]) -> str:
    """The file ``argv0`` names, searched in ``env``'s ``PATH`` when it has no slash (as
    ``subprocess`` does); unchanged when not found, so the launcher reports the error."""
    if "/" in argv0:
        return argv0
    for folder in os.get_exec_path(env):
        candidate = os.path.join(folder, argv0)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return argv0


def prepare(argv: list[str], env: dict[str, str], timeout_s: float, cwd: str = "",
            descendants: bool = False) -> bytes:
    """The launcher's request to run ``argv`` with exactly ``env`` (as :func:`run_once` makes
    it) in the folder ``cwd`` ("": this process's), looking at the threads of every process
    below it too with ``descendants``: made once, it serves every run of the same command
    (``run_once``'s ``request``)."""
    return c_launcher.request(executable(argv[0], env), argv, env, timeout_s, OUTPUT_LIMIT,
                              cwd, descendants)


def run_once(argv: list[str], env: dict[str, str], timeout_s: float,
             launcher: c_launcher.Launcher | None = None,
             request: bytes | None = None) -> RunResult:
    """Run ``argv`` once with exactly ``env`` and return its times and output.

    The output goes to memory files of the launcher (nothing is read while the program
    runs), and the last :data:`OUTPUT_LIMIT` bytes of each stream come back. A run past
    ``timeout_s`` is killed with its process group. A launcher lost during the run (the
    program stopped or killed it) makes a failed result (``error``). ``launcher``: the
    launcher process to use (default: this process's own,
    :func:`pinbench.measure.launcher.shared`);
    ``request``: what :func:`prepare` made of these ``argv``, ``env`` and ``timeout_s``.
    """
    try:
        reply = (launcher or c_launcher.shared()).send(
            request if request is not None else prepare(argv, env, timeout_s))
    except c_launcher.LauncherLost as exc:
        return RunResult(0.0, 0.0, 0.0, -9, False, "", "", str(exc))
    if reply.error:
        error = OSError(reply.error, os.strerror(reply.error), argv[0]) if reply.error > 0 \
            else f"cannot enter the folder it starts in ({os.strerror(-reply.error)})"
        return RunResult(0.0, 0.0, 0.0, 127, False, "", "", f"cannot start: {error}")
    others = other_share(CpuTimes(reply.busy_before, reply.total_before),
                         CpuTimes(reply.busy_after, reply.total_after), reply.own_cpu_s)
    return RunResult(reply.wall_s, reply.user_s, reply.sys_s,
                     os.waitstatus_to_exitcode(reply.wait_status), reply.timed_out,
                     reply.stdout, reply.stderr, exit_cpus=reply.exit_cpus, other_cpu=others,
                     max_rss_kb=reply.max_rss_kb, leftover=reply.leftover,
                     output_bytes=reply.output_bytes, pid=reply.pid, thread_cpus=reply.threads,
                     executables=reply.processes, counters=reply.counters,
                     uncounted=reply.uncounted)
