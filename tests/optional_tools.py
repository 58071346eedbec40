"""The optional tools some tests need: a skip mark naming what is missing, and a PATH from
which every optional tool is taken away (a user's machine without clang, Valgrind, likwid,
Chromium or SLURM), for the tests that show a campaign completes without them."""
from __future__ import annotations

import fnmatch
import os
import shutil
from pathlib import Path

import pytest

#: Commands that pinbench can do without (each enables one feature or one group of tests),
#: as shell patterns: the C compilers beyond gcc, Valgrind, likwid, Chromium, SLURM and
#: munge, perf, cmake.
OPTIONAL_TOOLS = ("clang", "clang-*", "clang++*", "valgrind*", "vgdb", "likwid-*", "chromium*",
                  "chromedriver", "slurm*", "srun", "sbatch", "salloc", "squeue", "sinfo",
                  "scancel", "scontrol", "sacct*", "munge*", "unmunge", "perf", "cmake",
                  "gfortran*", "g++*", "c++", "*-linux-gnu-gfortran*", "*-linux-gnu-g++*")
#: The Debian package of each test-only tool the skip reasons name.
PACKAGES = {"clang": "clang libomp-dev", "clang++": "clang", "valgrind": "valgrind",
            "likwid-pin": "likwid", "chromium": "chromium", "cmake": "cmake",
            "gfortran": "gfortran", "g++": "g++", "slurmctld": "slurm-wlm", "munged": "munge",
            "unshare": "util-linux"}


def missing(*tools: str) -> list[str]:
    """The ``tools`` not found on PATH."""
    return [tool for tool in tools if shutil.which(tool) is None]


def _reason(absent: list[str]) -> str:
    """Why a test needing the ``absent`` tools is skipped: them and their packages."""
    packages = sorted({PACKAGES.get(tool, tool) for tool in absent})
    return f"needs {', '.join(absent)} (not installed: package {' '.join(packages)})"


def requires(*tools: str) -> pytest.MarkDecorator:
    """A mark that skips a test when one of ``tools`` is not installed, naming it and its
    package (``make test`` installs them as root; a user without them sees the skips)."""
    absent = missing(*tools)
    return pytest.mark.skipif(bool(absent), reason=_reason(absent))


def need(*tools: str) -> None:
    """:func:`requires` from inside a test or a fixture: skip the test when one of ``tools``
    is not installed."""
    absent = missing(*tools)
    if absent:
        pytest.skip(_reason(absent))


def stripped_path(folder: Path, path: str | None = None) -> str:
    """A PATH of one folder of links to every command of ``path`` (default ``$PATH``), the
    first of each name, without the :data:`OPTIONAL_TOOLS`: what a user without them has."""
    folder.mkdir(parents=True, exist_ok=True)
    for directory in (path if path is not None else os.environ.get("PATH", "")).split(os.pathsep):
        if not directory or not os.path.isdir(directory):
            continue
        for entry in os.scandir(directory):
            link = folder / entry.name
            if link.exists() or link.is_symlink() or any(
                    fnmatch.fnmatchcase(entry.name, pattern) for pattern in OPTIONAL_TOOLS):
                continue
            if os.access(entry.path, os.X_OK) and not entry.is_dir():
                link.symlink_to(entry.path)
    return str(folder)


#: The C compilers a test is run with, one parameter each: clang's skipped where it is missing.
COMPILERS = ("gcc", pytest.param("clang", marks=requires("clang")))
