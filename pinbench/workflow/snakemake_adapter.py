"""What pinbench's Snakefile relies on inside Snakemake, beyond its documented API: one module.

``rules/common.smk`` calls these functions and reads nothing of Snakemake's internals itself;
``tests/test_snakemake_adapter.py`` pins each assumption below against the installed
Snakemake, so that an upgrade that breaks one fails there, naming it, rather than a campaign
misbehaving quietly:

- Snakemake's file persistence keeps its directory locks in :data:`STATE_DIR` as
  :data:`LOCK_FILES` (``snakemake/persistence/file.py``: ``locks/<n>.input.lock`` and
  ``locks/<n>.output.lock``), and refuses to start while one names its files
  (:func:`clear_stale_locks`);
- its scheduler's job rate limiter wakes it with a ``threading.Timer``
  (``JobScheduler._schedule_reevalutation``), which outlives it (:func:`exit_without_waiting`);
- the ``Workflow`` properties read: ``scheduler``, ``dag``, ``dryrun`` and
  ``is_main_process`` (:func:`had_nothing_to_do`), ``overwrite_configfiles``
  (:func:`config_files`) and ``basedir`` (:func:`main_directory`);
- a logger plugin registered by its module (``LoggerPluginRegistry().register_plugin``,
  the interface's own registry) is offered by ``--logger`` to a Snakemake command line
  parsed after it, and, writing to the stream, replaces Snakemake's listing
  (:func:`use_logger`);
- asked to stop (SIGINT: ``KeyboardInterrupt``; SIGTERM: the scheduler's own handler, set
  before ``onstart`` runs, in the main thread), Snakemake waits for its running local jobs,
  and signals none of them (:func:`forward_stops`); a job that never ends (a long build or
  trace, a job thread stuck) would keep it waiting, SIGTERM or not (:func:`_stop`).
"""
from __future__ import annotations

import contextlib
import fcntl
import gc
import os
import signal
import sys
import threading
import time
from pathlib import Path

from pinbench.measure import interrupt

#: Snakemake's state directory, in its working directory (``PersistenceBase``'s default).
STATE_DIR = ".snakemake"
#: Snakemake's lock files, in :data:`STATE_DIR`.
LOCK_FILES = "locks/*.lock"
#: The file every pinbench Snakemake holds an ``flock`` on, in :data:`STATE_DIR`.
SESSION_LOCK = "pinbench-session.lock"

_SESSION_LOCK: list[int] = []  # the open descriptor, held for the life of the process


def clear_stale_locks(state_dir: str | os.PathLike = STATE_DIR) -> bool:
    """Remove Snakemake's directory locks left by a killed run, so the next call resumes.

    A Snakemake killed with SIGKILL leaves its locks behind, and the next call
    would refuse to start until ``--unlock``. Every pinbench Snakemake holds an
    ``flock`` on :data:`SESSION_LOCK` for its whole life (the kernel drops it
    when the process dies), so when this process can take it, no other pinbench
    Snakemake is alive here and any lock left is stale. Returns True when locks
    were removed. A Snakemake that the SLURM executor started in a job
    (``SLURM_JOB_ID``) is a step of the one that holds the session: it clears nothing.
    """
    if "SLURM_JOB_ID" in os.environ:
        return False
    state = Path(state_dir)
    state.mkdir(exist_ok=True)
    fd = os.open(state / SESSION_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return False
    _SESSION_LOCK.append(fd)
    stale = list(state.glob(LOCK_FILES))
    for path in stale:
        path.unlink(missing_ok=True)
    return bool(stale)


def exit_without_waiting() -> None:
    """Spare a Snakemake whose work is done two waits at exit that do nothing for it.

    Each time Snakemake's scheduler waits for a job it starts a ``threading.Timer`` that wakes
    it a second later (its job rate limit, ``--max-jobs-per-timespan``): the last one
    outlives the scheduler, and Python waits for it before exiting (up to a second). And at
    exit Python's garbage collector walks every object of the call again (thousands of
    modules, the DAG): frozen, they are left to the system, which frees the memory anyway.
    Call it when the call's work and output are done (``onsuccess``, or a call that had
    nothing to do).
    """
    for thread in threading.enumerate():
        if isinstance(thread, threading.Timer):
            thread.cancel()
    gc.freeze()


def use_logger() -> list[str]:
    """Offer Snakemake pinbench's logger plugin (:mod:`pinbench.workflow.snakemake_logger`)
    in this process, and return the options that make a Snakemake command line use it."""
    from snakemake_interface_logger_plugins.common import logger_plugin_module_prefix
    from snakemake_interface_logger_plugins.registry import LoggerPluginRegistry

    from pinbench.workflow import snakemake_logger

    LoggerPluginRegistry().register_plugin(
        logger_plugin_module_prefix + snakemake_logger.NAME, snakemake_logger)
    return ["--logger", snakemake_logger.NAME]


def had_nothing_to_do(workflow) -> bool:
    """Whether Snakemake's ``workflow`` executed and found nothing to be done (not a dry
    run, not a job of a remote executor). Snakemake 9 builds its scheduler before it
    checks the DAG, and returns with an empty DAG without running any hook."""
    return (workflow.scheduler is not None and workflow.dag is not None
            and len(workflow.dag) == 0 and not workflow.dryrun and workflow.is_main_process)


def config_files(workflow) -> list[str]:
    """The campaign files given to Snakemake (``--configfile``), which it has read itself."""
    return [str(path) for path in workflow.overwrite_configfiles]


def main_directory(workflow) -> Path:
    """The directory of the Snakefile Snakemake was started with (``-s``, or the one found)."""
    return Path(workflow.basedir)


#: Seconds a Snakemake asked to stop may take to end its jobs (measuring processes end their
#: run at once) before pinbench ends them and it (:func:`_stop`).
STOP_GRACE_S = 5.0
_STOPS: list[int] = []  # the stop signals received, in order


def stop_line(signum: int) -> str:
    """What a campaign says when it is stopped and no measuring process says it."""
    return (f"pinbench: stopped ({signal.Signals(signum).name}): every finished run is kept, "
            "and the next call resumes")


def _stop(signum: int, said: bool, grace_s: float | None = None) -> None:
    """A stop signal to this process, passed on to the measuring processes below it first
    (``said``: one was, and says the stop in its own line).

    The first stop is said in one line (:func:`stop_line`, unless a measuring process says
    it), and then nothing more comes from this process: the jobs the stop failed, with
    Snakemake's blocks on each, are no news. Snakemake waits for its running jobs, so a job
    that would not end (a long build or trace, a stuck thread) would keep it there, SIGTERM
    or not: a thread ends the process when it is still there ``grace_s``
    (:data:`STOP_GRACE_S`) later, and a second stop ends it at once (:func:`_end`)."""
    _STOPS.append(signum)
    if len(_STOPS) > 1:
        _end(signum)
    if not said:
        print(stop_line(signum), file=sys.stderr)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    quiet = os.open(os.devnull, os.O_WRONLY)
    for fd in (1, 2):
        os.dup2(quiet, fd)
    os.close(quiet)
    wait = STOP_GRACE_S if grace_s is None else grace_s

    def watch() -> None:
        time.sleep(wait)
        _end(signum)

    threading.Thread(target=watch, name="pinbench-stop", daemon=True).start()


def _end(signum: int) -> None:
    """End this process now, as a process killed by ``signum`` (exit status 128 + it), and
    every process below it (a build, a trace; the measuring processes had the stop already):
    what was journaled is kept, and the next call redoes the half-written outputs
    (``rerun-incomplete``) and resumes the measurements."""
    for pid in interrupt.descendants(os.getpid()):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    os._exit(128 + signum)


def forward_stops() -> None:
    """Make this Snakemake's measurement jobs stop when it is asked to: a SIGINT or SIGTERM
    to it alone is passed on to every measuring process below it (they end their run
    unjournaled and exit in one line) before Snakemake's own handler, which then waits for
    them as it waits for every running job (within :data:`STOP_GRACE_S`, and silently:
    :func:`_stop`); and they learn which process is the workflow's
    (:func:`pinbench.measure.interrupt.mark_workflow`), so that they stop when it dies of
    SIGKILL too. Call it from ``onstart``: Snakemake has set its handlers then, and starts
    its jobs after."""
    interrupt.mark_workflow()
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in (signal.SIGINT, signal.SIGTERM):
        previous = signal.getsignal(signum)

        def forward(received, frame, previous=previous):
            _stop(received, said=bool(interrupt.stop_measurements(os.getpid(), received)))
            if callable(previous):
                previous(received, frame)
            elif previous == signal.SIG_DFL:
                signal.signal(received, signal.SIG_DFL)
                os.kill(os.getpid(), received)

        signal.signal(signum, forward)
