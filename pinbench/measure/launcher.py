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
"""
from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from dataclasses import dataclass

from pinbench import native
from pinbench.measure.system import shortest_share_s

#: Version of the way runs are timed, written in new journals' headers.
TIMER = "c-launcher-1"
#: Fields of the launcher's reply line (see launcher.c).
REPLY_FIELDS = 15


class LauncherError(RuntimeError):
    """The launcher cannot be started, or it died; one-line message."""


def request(path: str, argv: list[str], env: dict[str, str], timeout_s: float,
            output_limit: int) -> bytes:
    """The launcher's request to run ``argv`` (executable ``path``) with exactly ``env``
    (see :meth:`Launcher.run`): its length, then NUL-terminated fields."""
    fields = [b"%d" % max(1, int(timeout_s * 1e9)), b"%d" % output_limit, os.fsencode(path),
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
    error: int  #: errno when the program could not start, else 0
    busy_before: int
    total_before: int
    busy_after: int
    total_after: int
    own_cpu_s: float  #: the launcher's CPU time and its reaped children's during the samples
    exit_cpus: str
    stdout: str  #: the end of what the program wrote to stdout (at most ``output_limit``)
    stderr: str


class Launcher:
    """A running ``pinbench-launcher``; :meth:`run` starts one program and waits for it.
    :class:`pinbench.native.NotBuilt` when ``pinbench setup`` has not built it (or its
    source changed since).

    ``exit_read_delay_s`` (tests only) makes the launcher sleep after reading the exited
    program's CPUs, to show that this read is outside the recorded time.
    """

    def __init__(self, exit_read_delay_s: float = 0.0):
        args = [str(native.built("launcher")), str(os.getpid()),
                str(round(shortest_share_s() * 1e9))]
        if exit_read_delay_s:
            args.append(str(round(exit_read_delay_s * 1e6)))
        try:
            self._proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          close_fds=True)
        except OSError as exc:
            raise LauncherError(f"cannot start the launcher {args[0]}: {exc}") from None
        self.pid = self._proc.pid
        self._stdin = self._proc.stdin.fileno()
        self._owner = os.getpid()
        self._lock = threading.Lock()

    def alive(self) -> bool:
        """Whether the launcher is still running, for this process."""
        return self._owner == os.getpid() and self._proc.poll() is None

    def run(self, path: str, argv: list[str], env: dict[str, str], timeout_s: float,
            output_limit: int) -> Reply:
        """Run ``argv`` (executable ``path``) with exactly ``env``; kill its process group
        after ``timeout_s``; keep the last ``output_limit`` bytes of its stdout and stderr."""
        return self.send(request(path, argv, env, timeout_s, output_limit))

    def send(self, message: bytes) -> Reply:
        """Run the program of a :func:`request` (made once, sent for many runs)."""
        parts, output, sizes = [], b"", (0, 0)
        with self._lock:
            try:
                view = memoryview(message)
                while view:  # straight to the pipe: nothing is ever buffered on it
                    view = view[os.write(self._stdin, view):]
                parts = self._proc.stdout.readline().split()
                if len(parts) == REPLY_FIELDS:
                    sizes = int(parts[13]), int(parts[14])
                    if sizes[0] or sizes[1]:
                        output = self._proc.stdout.read(sizes[0] + sizes[1])
            except OSError:
                pass
        if len(parts) != REPLY_FIELDS or len(output) != sizes[0] + sizes[1]:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=1)
            raise LauncherError(f"the launcher (pid {self.pid}) died during a run "
                                f"(exit status {self._proc.poll()})")
        wall, user, system, rss, status, timed_out, error, busy0, total0, busy1, total1, \
            own = map(int, parts[:12])
        cpus = parts[12].decode()
        return Reply(wall / 1e9, user / 1e6, system / 1e6, rss, status, bool(timed_out), error,
                     busy0, total0, busy1, total1, own / 1e6, "" if cpus == "-" else cpus,
                     output[:sizes[0]].decode("utf-8", "replace") if sizes[0] else "",
                     output[sizes[0]:].decode("utf-8", "replace") if sizes[1] else "")

    def close(self) -> None:
        """End the launcher (it exits when its request pipe closes)."""
        if self._owner != os.getpid():
            return
        with contextlib.suppress(OSError):
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
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
