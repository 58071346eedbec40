"""The C launcher that starts and times every run (``launcher.c``, built by ``pinbench setup``).

One ``pinbench-launcher`` process lives beside the measuring process and runs its
programs one at a time: per run, one request down a pipe, one reply line back. It starts
each program in a vfork-style child (no page tables copied, no Python between fork and
exec), so the time it records is that of a bare ``posix_spawn`` + ``wait4`` plus a few
system calls: ``personality(ADDR_NO_RANDOMIZE)``, ``PR_SET_PDEATHSIG``, ``setpgid``, the
output redirections. Python's ``subprocess`` with a ``preexec_fn`` (the way before) forks
the whole interpreter and runs Python in the child: about 2 ms more per run.

The launcher is built with the system's C compiler by ``pinbench setup``
(:mod:`pinbench.native`); without it a job stops with the one line that names that command.
There is no fallback: runs timed another way would carry another constant cost, which a
resumed journal would then mix.

Parent-death chain: the launcher sets ``PR_SET_PDEATHSIG`` (SIGKILL) on itself at start
and checks its parent is still the measuring process, and each program sets it too: if the
measuring process dies, the launcher dies, and with it the program.

The launcher enforces each run's timeout, but the program can stop or kill it (its parent is
one ``getppid`` away): the measuring process waits for a reply :data:`GRACE_S` past the
timeout at most. A launcher that does not answer by then is killed with every process below
it, one that died is noticed at once; either way the run is lost (:class:`LauncherLost`: the
job records it as failed) and the next run starts another launcher. A stop signal during the
wait (:mod:`pinbench.measure.interrupt`) makes the launcher kill the run and exit.
"""
from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field

from pinbench import native
from pinbench.errors import PinbenchError
from pinbench.measure import interrupt
from pinbench.measure.system import shortest_share_s

#: Version of the way runs are timed, written in new journals' headers.
TIMER = "c-launcher-1"
#: Fields of the launcher's reply line (see launcher.c).
REPLY_FIELDS = 22
#: How long past a run's timeout the measuring process waits for the launcher's reply.
GRACE_S = 10.0


class LauncherError(PinbenchError, RuntimeError):
    """The launcher cannot be started; one-line message."""


class LauncherLost(LauncherError):
    """The launcher died or stopped answering during a run (the program may have stopped or
    killed it): the run is lost, the next one starts another launcher; one-line message."""


def request(path: str, argv: list[str], env: dict[str, str], timeout_s: float,
            output_limit: int, cwd: str = "", descendants: bool = False) -> bytes:
    """The launcher's request to run ``argv`` (executable ``path``) with exactly ``env``
    (see :meth:`Launcher.run`): its length, then NUL-terminated fields."""
    fields = [b"%d" % max(1, int(timeout_s * 1e9)), b"%d" % output_limit,
              b"%d" % descendants, os.fsencode(cwd), os.fsencode(path),
              b"%d" % len(argv), *map(os.fsencode, argv), b"%d" % len(env),
              *(os.fsencode(f"{name}={value}") for name, value in env.items())]
    payload = b"\0".join(fields) + b"\0"
    return len(payload).to_bytes(8, "little") + payload


@dataclass
class Reply:
    """What the launcher says of one run (times in seconds, CPU samples in clock ticks)."""

    wall_s: float
    user_s: float
    sys_s: float
    max_rss_kb: int
    wait_status: int
    timed_out: bool
    error: int  #: errno when the program could not start (negative: its folder), else 0
    busy_before: int
    total_before: int
    busy_after: int
    total_after: int
    own_cpu_s: float  #: the launcher's CPU time and its reaped children's during the samples
    exit_cpus: str
    pid: int  #: the program's process id (its initial thread's task id)
    leftover: int  #: processes the program left running after it exited (killed)
    output_bytes: int  #: all the program wrote to stdout and stderr
    stdout: str  #: the end of what the program wrote to stdout (at most ``output_limit``)
    stderr: str
    #: process id -> the CPUs each of its threads (task id) was seen allowed on while the
    #: program ran, as the kernel lists them (``"0-3"``; an initial thread's: at the last
    #: look); {} for a run too short to be looked at
    threads: dict[int, dict[int, str]]
    #: the program's counters (perf_event_open), name -> count (None: never scheduled)
    counters: dict[str, float | None] = field(default_factory=dict)
    #: the counters the kernel would not count, name -> why
    uncounted: dict[str, str] = field(default_factory=dict)
    #: process id -> the executable it ran at the last look, for every process of the run
    #: looked at (only with ``descendants``: :func:`request`)
    processes: dict[int, str] = field(default_factory=dict)


def parse_counters(text: str) -> tuple[dict[str, float | None], dict[str, str]]:
    """The reply's counters field: the counts, and why the others are missing.

    >>> parse_counters("page_faults=120,cycles=?,llc_misses=!2")
    ({'page_faults': 120.0, 'cycles': None}, {'llc_misses': 'No such file or directory'})
    >>> parse_counters("-")
    ({}, {})
    """
    counted: dict[str, float | None] = {}
    refused: dict[str, str] = {}
    for item in text.split(",") if text != "-" else []:
        name, _, value = item.partition("=")
        if value.startswith("!"):
            refused[name] = os.strerror(int(value[1:]))
        else:
            counted[name] = None if value == "?" else float(value)
    return counted, refused


def parse_threads(text: str) -> dict[int, dict[int, str]]:
    """The reply's threads: process id -> task id -> CPUs.

    >>> parse_threads("7:7=0-3;7:9=2;12:12=1")
    {7: {7: '0-3', 9: '2'}, 12: {12: '1'}}
    """
    threads: dict[int, dict[int, str]] = {}
    for item in text.split(";") if text else []:
        task, _, cpus = item.partition("=")
        pid, _, tid = task.partition(":")
        threads.setdefault(int(pid), {})[int(tid)] = cpus
    return threads


def parse_processes(data: bytes) -> dict[int, str]:
    r"""The reply's processes: process id -> executable.

    >>> parse_processes(b"7\x00/bin/sh\x009\x00/opt/a b\x00")
    {7: '/bin/sh', 9: '/opt/a b'}
    """
    fields = data.split(b"\0")[:-1]
    return {int(pid): os.fsdecode(exe) for pid, exe in zip(fields[::2], fields[1::2])}


class Launcher:
    """A running ``pinbench-launcher``; :meth:`run` starts one program and waits for it.
    :class:`pinbench.native.NotBuilt` when ``pinbench setup`` has not built it (or its
    source changed since).

    ``exit_read_delay_s`` (tests only) makes the launcher sleep after reading the exited
    program's CPUs, to show that this read is outside the recorded time; ``grace_s``: how
    long past a run's timeout its reply is waited for.
    """

    def __init__(self, exit_read_delay_s: float = 0.0, grace_s: float = GRACE_S):
        self._args = [str(native.built("launcher")), str(os.getpid()),
                      str(round(shortest_share_s() * 1e9))]
        if exit_read_delay_s:
            self._args.append(str(round(exit_read_delay_s * 1e6)))
        self.grace_s = grace_s
        self._owner = os.getpid()
        self._lock = threading.Lock()
        self._running = False  #: a request sent, its reply not read yet
        self._start()

    def _start(self) -> None:
        try:
            self._proc = subprocess.Popen(self._args, stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, close_fds=True)
        except OSError as exc:
            raise LauncherError(f"cannot start the launcher {self._args[0]}: {exc}") from None
        self.pid = self._proc.pid
        self._stdin = self._proc.stdin.fileno()
        self._poll = select.poll()
        for fd in (self._proc.stdout.fileno(), interrupt.wake_fd(), interrupt.workflow_fd()):
            if fd >= 0:
                self._poll.register(fd, select.POLLIN)
        self._reply_fd = self._proc.stdout.fileno()

    def alive(self) -> bool:
        """Whether the launcher is still running, for this process."""
        return self._owner == os.getpid() and self._proc.poll() is None

    def run(self, path: str, argv: list[str], env: dict[str, str], timeout_s: float,
            output_limit: int, cwd: str = "", descendants: bool = False) -> Reply:
        """Run ``argv`` (executable ``path``) with exactly ``env``, in the folder ``cwd``
        ("": the launcher's); kill its process group after ``timeout_s``; keep the last
        ``output_limit`` bytes of its stdout and stderr; ``descendants``: look at the threads
        of every process below the program too."""
        return self.send(request(path, argv, env, timeout_s, output_limit, cwd, descendants))

    def send(self, message: bytes) -> Reply:
        """Run the program of a :func:`request` (made once, sent for many runs); a launcher
        that died since the last run is replaced first. :class:`LauncherLost` when it dies
        or stops answering during the run; :class:`~pinbench.measure.interrupt.Interrupted`
        when a stop came during it (the launcher killed the run)."""
        parts, output, sizes = [], b"", (0, 0, 0, 0)
        with self._lock:
            if self._proc.poll() is not None:
                self._proc.stdout.close()
                self._start()
            self._running = True
            try:
                view = memoryview(message)
                while view:  # straight to the pipe: nothing is ever buffered on it
                    view = view[os.write(self._stdin, view):]
                self._wait(int(message[8:message.index(b"\0", 8)]) / 1e9 + self.grace_s)
                parts = self._proc.stdout.readline().split()
                if len(parts) == REPLY_FIELDS:
                    sizes = int(parts[17]), int(parts[18]), int(parts[19]), int(parts[20])
                    if any(sizes):
                        output = self._proc.stdout.read(sum(sizes))
            except OSError:
                pass
            self._running = False
        if len(parts) != REPLY_FIELDS or len(output) != sum(sizes):
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=1)
            stop = interrupt.take_pending()
            if stop is not None:  # the same stop signal ended the launcher (Ctrl-C)
                raise stop
            raise LauncherLost(f"the launcher (pid {self.pid}) died during the run "
                               f"(exit status {self._proc.poll()})")
        wall, user, system, rss, status, timed_out, error, busy0, total0, busy1, total1, \
            own = map(int, parts[:12])
        cpus = parts[12].decode()
        pid, leftover, out_total, err_total = map(int, parts[13:17])
        out, err = sizes[0], sizes[0] + sizes[1]
        looked = err + sizes[2]
        counted, refused = parse_counters(parts[21].decode())
        return Reply(wall / 1e9, user / 1e6, system / 1e6, rss, status, bool(timed_out), error,
                     busy0, total0, busy1, total1, own / 1e6, "" if cpus == "-" else cpus,
                     pid, leftover, out_total + err_total,
                     output[:out].decode("utf-8", "replace") if out else "",
                     output[out:err].decode("utf-8", "replace") if err > out else "",
                     parse_threads(output[err:looked].decode()), counted, refused,
                     parse_processes(output[looked:]))

    def _wait(self, limit_s: float) -> None:
        """Wait for the reply, at most ``limit_s``; a stop meanwhile ends the run and raises
        Interrupted, a launcher that does not answer is killed (LauncherLost)."""
        deadline = time.monotonic() + limit_s
        while True:
            left = deadline - time.monotonic()
            ready = {fd for fd, _ in self._poll.poll(max(0.0, left) * 1000)} if left > 0 else set()
            if self._reply_fd in ready:
                return
            stop = interrupt.take_pending() if interrupt.wake_fd() in ready else None
            if ready - {self._reply_fd, interrupt.wake_fd()}:  # the workflow's process is gone
                stop = interrupt.Interrupted(interrupt.WORKFLOW_GONE, 0)
            if stop is not None:
                self._proc.send_signal(signal.SIGTERM)  # it kills the run and what it left
                try:
                    self._proc.wait(timeout=self.grace_s)
                except subprocess.TimeoutExpired:
                    self._kill()
                raise stop
            if left <= 0:
                self._kill()
                raise LauncherLost(f"the launcher (pid {self.pid}) did not answer "
                                   f"{self.grace_s:g} s past the run's timeout (stopped by the "
                                   "program?): killed with the run")

    def _kill(self) -> None:
        """Kill the launcher and every process below it (they are the run's)."""
        for pid in [*interrupt.descendants(self.pid), self.pid]:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        self._proc.wait()

    def close(self) -> None:
        """End the launcher (it exits when its request pipe closes; a run left under way, by
        an exception during :meth:`send`, is killed first)."""
        if self._owner != os.getpid():
            return
        with contextlib.suppress(OSError):
            self._proc.stdin.close()
        if self._running and self._proc.poll() is None:
            self._proc.send_signal(signal.SIGTERM)
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._kill()
        self._proc.stdout.close()

    def __enter__(self) -> "Launcher":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_shared: Launcher | None = None
_shared_lock = threading.Lock()


def shared() -> Launcher:
    """This process's launcher, started on first use, again if it ended."""
    global _shared
    with _shared_lock:
        if _shared is None or not _shared.alive():
            _shared = Launcher()
        return _shared
