"""pinbench's own C sources, compiled on demand: the launcher, the placement's hot loops.

Each is built with the system's C compiler (``gcc``, ``cc`` or ``clang``; the variable
``PINBENCH_LAUNCHER_CC`` names another) the first time a process needs it, into a
``build/`` folder beside its source, under a name that holds the hash of the source and
of the build command (a changed source is a new file), under a lock shared by concurrent
processes; files of older sources are removed (processes running them go on). pinbench
needs a C compiler to build its benchmarks anyway, so there is no fallback without one.
"""
from __future__ import annotations

import contextlib
import ctypes
import fcntl
import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path


def c_compiler(what: str, error: type[Exception]) -> str:
    """The path of the C compiler; ``error`` (a one-line message) when there is none."""
    for cc in (os.environ.get("PINBENCH_LAUNCHER_CC", ""), "gcc", "cc", "clang"):
        path = shutil.which(cc) if cc else None
        if path:
            return path
    raise error(f"building {what} needs a C compiler, none found "
                "(install the Debian package gcc, as scripts/setup.sh does)")


def compiled(source: Path, stem: str, flags: tuple[str, ...], what: str,
             error: type[Exception]) -> Path:
    """``source`` built with ``flags`` into ``build/<stem>-<hash>`` beside it, now if not yet.

    Raises ``error`` with the compiler's first error line when the build fails.
    """
    cc = c_compiler(what, error)
    key = hashlib.sha256(source.read_bytes() + "\0".join([cc, *flags]).encode()).hexdigest()[:16]
    build = source.parent / "build"
    out = build / f"{stem}-{key}"
    if out.exists():
        return out
    build.mkdir(parents=True, exist_ok=True)
    with open(build / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if out.exists():  # built by another process meanwhile
            return out
        with tempfile.TemporaryDirectory(dir=build) as tmp:
            made = Path(tmp) / out.name
            proc = subprocess.run([cc, *flags, "-o", str(made), str(source)],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                lines = [line for line in proc.stderr.splitlines() if line.strip()]
                first = next((line for line in lines if "error" in line), lines[0] if lines else "")
                raise error(f"building {what} failed ({Path(cc).name}): {first}")
            os.replace(made, out)
        for old in build.glob(f"{stem}-*"):  # of older sources
            if old != out:
                with contextlib.suppress(OSError):
                    old.unlink()
    return out


#: How the placement's hot loops are built: a shared library that ctypes loads.
LIBRARY_FLAGS = ("-O2", "-std=gnu11", "-Wall", "-Wextra", "-shared", "-fPIC")


@functools.lru_cache(maxsize=None)
def library(source: Path, what: str, error: type[Exception]) -> ctypes.CDLL:
    """``source`` (a C file beside the module calling it) built as a shared library and
    loaded, once per process; ``error`` when it cannot be built."""
    return ctypes.CDLL(str(compiled(source, f"lib{source.stem}", LIBRARY_FLAGS, what, error)))
