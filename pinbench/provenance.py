"""Which pinbench made a result: its version and the commit of pinbench it came from.

The commit is that of pinbench's own git checkout when pinbench runs from one: a checkout that
tracks the package's files, not any repository the package happens to lie in (a copy of the
project inside another repository, a virtual environment inside a user's project). Otherwise it
is the commit a wheel or sdist was built from, which ``setup.py`` writes into the built package
as ``pinbench/_build.py``; a package built without git has none.

``pinbench --version`` prints :func:`describe`; every campaign's ``environment.json`` records
:func:`identity`, so the two always agree.
"""
from __future__ import annotations

import functools
import subprocess
from pathlib import Path

from pinbench import __version__

#: The folder that holds the package (a folder of pinbench's git work tree in a clone).
_SOURCE = Path(__file__).resolve().parent
#: The package's files whose tracking makes a checkout pinbench's own.
_OWN_FILES = ("__init__.py", "provenance.py")


def checkout(folder: Path) -> tuple[str, bool] | None:
    """``(commit, modified)`` of the git checkout that tracks the package files in ``folder``
    (``modified``: its files differ from that commit); None when no checkout tracks them or
    git is not there."""
    def git(*args: str) -> str | None:
        try:
            proc = subprocess.run(["git", "-C", str(folder), *args], capture_output=True,
                                  text=True, timeout=10, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return proc.stdout.strip() if proc.returncode == 0 else None

    if git("ls-files", "--error-unmatch", "--", *_OWN_FILES) is None:
        return None
    commit = git("rev-parse", "HEAD")
    return (commit, bool(git("status", "--porcelain", "--", "."))) if commit else None


def _built() -> tuple[str, bool] | None:
    """``(commit, modified)`` written into the package when it was built, if it was."""
    try:
        from pinbench import _build
    except ImportError:
        return None
    return _build.COMMIT, _build.MODIFIED


@functools.lru_cache(maxsize=None)
def identity() -> dict[str, str | bool | None]:
    """``{"version", "commit", "modified"}``: the commit is None when pinbench runs neither
    from its own checkout nor from a package built from one; ``modified`` says whether the
    package's files differed from that commit."""
    commit, modified = checkout(_SOURCE) or _built() or (None, None)
    return {"version": __version__, "commit": commit, "modified": modified}


def describe() -> str:
    """One line, e.g. ``pinbench 0.4.0 (commit 1a2b3c4d5e6f, modified)``."""
    found = identity()
    if found["commit"] is None:
        return f"pinbench {found['version']} (not from a git checkout)"
    return (f"pinbench {found['version']} (commit {found['commit'][:12]}"
            f"{', modified' if found['modified'] else ''})")
