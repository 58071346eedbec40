"""How a measuring process stops when asked: SIGINT, SIGTERM or SIGHUP, or its workflow gone.

:func:`install` (``python -m pinbench.measure``, before its imports) handles the three
signals; a stop while the process starts is noted and raised once it can be said in one line
(:func:`started`, in ``main``). Outside a run a signal raises :class:`Interrupted` at once
(waiting for the machine lock or a quiet machine ends there). From the start of a run to its
journaled record (:func:`journaling`) it is only noted: the wait for the launcher's reply
(:meth:`pinbench.measure.launcher.Launcher.send`) also watches :func:`wake_fd`, which the
signal makes readable, and on it asks the launcher to kill the run (and whatever the run left)
and raises :class:`Interrupted`; a run whose reply is there already is journaled first, then
the section raises. A run is thus journaled whole or not at all, and the next call measures
only the runs the journal lacks.

The workflow's process (``pinbench run`` or ``snakemake``) says who it is in
:data:`WORKFLOW_VARIABLE` (``host pid``, :func:`mark_workflow`, from the Snakefile): its jobs'
measuring processes on the same host also stop when it is gone (killed with SIGKILL, where
no signal reaches them): :func:`workflow_fd` is a pidfd the same wait watches. Snakemake
itself, asked to stop, waits for its running jobs; :func:`stop_measurements` is what its
process calls first (:func:`pinbench.workflow.snakemake_adapter.forward_stops`), so that they
stop promptly; one still starting gets the signal once it handles it (:func:`installed`), and
the measure rule starts it with the stop signals ignored until then.
"""
from __future__ import annotations

import contextlib
import functools
import os
import select
import signal
import time
from collections.abc import Iterator

#: The signals that stop a measuring process.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
#: The environment variable naming the workflow's process: ``<host> <pid>``.
WORKFLOW_VARIABLE = "PINBENCH_WORKFLOW"
#: Why a measuring process stops when its workflow's process is gone.
WORKFLOW_GONE = "the workflow's process ended"
#: What the measuring process's command line holds (``python -m pinbench.measure``).
MEASURING_MODULE = b"pinbench.measure"


class Interrupted(Exception):
    """The measuring process was asked to stop (str: by what, in words); ``signum``: the
    signal (0: the workflow's process is gone)."""

    def __init__(self, why: str, signum: int):
        super().__init__(why)
        self.signum = signum


_pending: Interrupted | None = None
_depth = 0
_wake = -1


def install() -> None:
    """Handle the stop signals in this process (from its main thread), once: first thing,
    before the measuring process's imports. Until :func:`started` a stop is only noted (an
    exception in an import would end the process with a traceback); :func:`started` raises
    it."""
    global _wake, _depth
    if _wake >= 0:
        return
    read, write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    _wake = read
    _depth += 1
    for signum in STOP_SIGNALS:
        signal.signal(signum, _on_signal)


def started() -> None:
    """The process has started and stops in one line from here: a stop noted since
    :func:`install` is raised now, later ones as they come."""
    _leave()


def _leave() -> None:
    """Leave a section where a stop is only noted (:func:`install`, :func:`journaling`):
    out of the last one, raise the stop noted, if any."""
    global _depth, _pending
    _depth -= 1
    if not _depth and _pending is not None:
        stop, _pending = _pending, None
        raise stop


def _on_signal(signum: int, frame) -> None:
    global _pending
    stop = Interrupted(f"{signal.Signals(signum).name}", signum)
    if _depth:
        _pending = _pending or stop
        return
    raise stop


def wake_fd() -> int:
    """A descriptor readable once a stop signal came (-1: :func:`install` was not called)."""
    return _wake


def take_pending() -> Interrupted | None:
    """The stop that came during :func:`journaling`, if any, taken (and the wake
    descriptor drained): whoever takes it raises it."""
    global _pending
    if _wake >= 0:
        with contextlib.suppress(BlockingIOError):
            while os.read(_wake, 64):
                pass
    stop, _pending = _pending, None
    return stop


@contextlib.contextmanager
def journaling() -> Iterator[None]:
    """A run, from its start to its journaled record: a stop signal is noted, not raised
    (the launcher's wait raises it while the run is under way); raised on leaving."""
    global _depth
    _depth += 1
    try:
        yield
    except BaseException:
        _depth -= 1
        raise
    _leave()


def mark_workflow() -> None:
    """Name this process as the workflow's for the measuring processes it starts (kept when
    the variable is set already: a job's own Snakemake process inherits its workflow's)."""
    os.environ.setdefault(WORKFLOW_VARIABLE, f"{os.uname().nodename} {os.getpid()}")


@functools.cache
def workflow_fd() -> int:
    """A pidfd of the workflow's process on this host (readable once it exits), opened once;
    -1 when there is none to watch (another host, no variable, no pidfds). A workflow gone
    already (killed while this process started) gives a descriptor readable at once: the
    read end of a pipe whose write end is closed."""
    host, _, pid = os.environ.get(WORKFLOW_VARIABLE, "").partition(" ")
    if host != os.uname().nodename or not pid.isdigit():
        return -1
    try:
        return os.pidfd_open(int(pid))
    except ProcessLookupError:
        read, write = os.pipe2(os.O_CLOEXEC)
        os.close(write)
        return read
    except OSError:
        return -1


def check() -> None:
    """Raise :class:`Interrupted` when the workflow's process is gone (between runs: a wait
    for a quiet machine)."""
    fd = workflow_fd()
    if fd >= 0 and select.select([fd], [], [], 0)[0]:
        raise Interrupted(WORKFLOW_GONE, 0)


def descendants(root: int) -> list[int]:
    """The processes below ``root`` (its children, theirs, ...), from /proc."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    stat = handle.read()
            except OSError:
                continue
            parents[int(entry)] = int(stat[stat.rindex(b")") + 2:].split()[1])
    found, frontier = [], [root]
    while frontier:
        below = [pid for pid, parent in parents.items() if parent in frontier]
        found += below
        frontier = below
    return found


#: How long :func:`stop_measurements` waits for a measuring process still starting (before
#: :func:`install`) to handle the stop signals.
STARTING_S = 2.0


def installed(pid: int) -> bool:
    """Whether process ``pid`` handles every stop signal (its caught signals in /proc): a
    measuring process past :func:`install` (Python itself catches SIGINT alone)."""
    with open(f"/proc/{pid}/status") as status:
        caught = int(next(line for line in status if line.startswith("SigCgt:")).split()[1], 16)
    return all(caught >> (signum - 1) & 1 for signum in STOP_SIGNALS)


def stop_measurements(root: int, signum: int = signal.SIGTERM) -> list[int]:
    """Send ``signum`` to every measuring process below ``root``; their pids. One still
    starting gets it once it handles it (:func:`installed`, within :data:`STARTING_S`): before,
    the signal would end it without its line (SIGTERM) or with a traceback (SIGINT)."""
    stopped = []
    for pid in descendants(root):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if MEASURING_MODULE not in handle.read().split(b"\0"):
                    continue
            deadline = time.monotonic() + STARTING_S
            while not installed(pid) and time.monotonic() < deadline:
                time.sleep(0.005)
            os.kill(pid, signum)
        except OSError:
            continue
        stopped.append(pid)
    return stopped
