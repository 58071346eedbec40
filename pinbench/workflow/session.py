"""One pinbench Snakemake per working directory, Snakemake's stale locks cleared, and its
exit not kept waiting."""
from __future__ import annotations

import fcntl
import gc
import os
import threading
from pathlib import Path

_SESSION_LOCK: list[int] = []  # the open descriptor, held for the life of the process


def clear_stale_locks(state_dir: str = ".snakemake") -> bool:
    """Remove Snakemake's directory locks left by a killed run, so the next call resumes.

    A Snakemake killed with SIGKILL leaves its locks behind, and the next call
    would refuse to start until ``--unlock``. Every pinbench Snakemake holds an
    ``flock`` on ``.snakemake/pinbench-session.lock`` for its whole life (the
    kernel drops it when the process dies), so when this process can take it,
    no other pinbench Snakemake is alive here and any lock left is stale.
    Returns True when locks were removed. A Snakemake that the SLURM executor started in a
    job (``SLURM_JOB_ID``) is a step of the one that holds the session: it clears nothing.
    """
    if "SLURM_JOB_ID" in os.environ:
        return False
    lock_dir = Path(state_dir) / "locks"
    Path(state_dir).mkdir(exist_ok=True)
    fd = os.open(Path(state_dir) / "pinbench-session.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return False
    _SESSION_LOCK.append(fd)
    stale = list(lock_dir.glob("*.lock")) if lock_dir.is_dir() else []
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


def had_nothing_to_do(workflow) -> bool:
    """Whether Snakemake's ``workflow`` executed and found nothing to be done (not a dry
    run, not a job of a remote executor). Snakemake 9 builds its scheduler before it
    checks the DAG, and returns with an empty DAG without running any hook."""
    try:
        return (getattr(workflow, "scheduler", None) is not None and workflow.dag is not None
                and len(workflow.dag) == 0 and not workflow.dryrun
                and workflow.is_main_process)
    except Exception:  # another Snakemake's internals: say nothing rather than fail
        return False
