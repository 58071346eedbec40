"""The machine-wide lock: one measurement on the machine at a time, whoever started it."""
from __future__ import annotations

import contextlib
import fcntl
import os

#: The lock file every pinbench measurement of the machine takes (or ``$PINBENCH_LOCK``).
DEFAULT_LOCK = "/tmp/pinbench-machine.lock"


class MachineLock:
    """An exclusive ``flock`` that keeps two measurements off the machine at once.

    It is released by the kernel when its holder dies, even by SIGKILL.
    """

    def __init__(self, path: str, say):
        self.path, self.say, self.fd = path, say, -1

    def __enter__(self) -> "MachineLock":
        try:
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        except PermissionError:  # another user's lock file: lock it, leave its text alone
            self.fd = os.open(self.path, os.O_RDONLY)
        else:
            with contextlib.suppress(OSError):
                os.fchmod(self.fd, 0o666)  # every user of the machine shares the lock
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(self.fd, 64, 0).decode(errors="replace").strip()
            self.say(f"waiting for the machine lock {self.path} (held by {holder or 'another job'})")
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        with contextlib.suppress(OSError):
            os.ftruncate(self.fd, 0)
            os.pwrite(self.fd, f"pid {os.getpid()}\n".encode(), 0)
        return self

    def __exit__(self, *exc) -> None:
        os.close(self.fd)
