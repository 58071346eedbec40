"""Which pinbench made a result: its version and, from a git checkout, its commit.

``pinbench --version`` prints :func:`describe`; every campaign's ``environment.json`` records
:func:`identity`, so the two always agree.
"""
from __future__ import annotations

import functools
import subprocess
from pathlib import Path

from pinbench import __version__

#: The folder that holds the package (a git work tree when pinbench runs from a clone).
_SOURCE = Path(__file__).resolve().parent


@functools.lru_cache(maxsize=None)
def identity() -> dict[str, str | bool | None]:
    """``{"version", "commit", "modified"}``: the commit is None outside a git checkout;
    ``modified`` says whether the package's files differ from that commit."""
    def git(*args: str) -> str | None:
        try:
            proc = subprocess.run(["git", "-C", str(_SOURCE), *args], capture_output=True,
                                  text=True, timeout=10, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return proc.stdout.strip() if proc.returncode == 0 else None

    top = git("rev-parse", "--show-toplevel")
    commit = git("rev-parse", "HEAD") if top and _SOURCE.is_relative_to(top) else None
    modified = bool(git("status", "--porcelain", "--", ".")) if commit else None
    return {"version": __version__, "commit": commit, "modified": modified}


def describe() -> str:
    """One line, e.g. ``pinbench 0.4.0 (commit 1a2b3c4d5e6f, modified)``."""
    found = identity()
    if found["commit"] is None:
        return f"pinbench {found['version']} (not from a git checkout)"
    return (f"pinbench {found['version']} (commit {found['commit'][:12]}"
            f"{', modified' if found['modified'] else ''})")
