"""Around a benchmark's build: one build at a time per source tree, and what the build wrote there.

Benchmarks built from one source tree by its own makefiles (the NAS Parallel
Benchmarks, say) would race if built at once ("Text file busy", a half-written
object file): :func:`building` holds a machine-wide lock named after the tree
(:func:`pinbench.workflow.campaign.build_tree`) for the whole build.

A build may also write files among its inputs (NAS's ``make`` writes ``npbparams.hpp``
beside the sources). Taken as an input, such a file would be newer than every
binary after the next build, and so rebuild (and re-trace) every benchmark on
every call. :func:`building` notes each input file that the build created or
changed; the workflow leaves those out of the build's inputs from then on
(:func:`generated_files`).

The traced variant of a benchmark with a declared ``tree`` is built in a private
copy of the tree (``{tree}`` in ``trace_build`` is the copy): the authors' makefiles
keep objects beside the sources, and instrumented objects must not end up in the
plain build, nor plain ones in the traced build.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

def lock_path(tree: str) -> Path:
    """The lock file of one source tree (in the system's temporary directory)."""
    digest = hashlib.sha256(tree.encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"pinbench-build-{digest}.lock"


def _snapshot(files: list[str]) -> dict[str, tuple[int, int]]:
    """path -> (mtime_ns, size) of each of ``files`` that exists."""
    found = {}
    for path in files:
        try:
            stat = os.stat(path)
        except OSError:
            continue
        found[path] = (stat.st_mtime_ns, stat.st_size)
    return found


def generated_files(record: Path | str) -> frozenset[str]:
    """The files that builds of a benchmark wrote into its tree (empty before any build)."""
    try:
        return frozenset(Path(record).read_text().splitlines())
    except OSError:
        return frozenset()


def private_copy(tree: str, copy: str) -> None:
    """A fresh copy of ``tree`` at ``copy`` (symbolic links kept as links)."""
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(tree, copy, symlinks=True)


@contextlib.contextmanager
def building(tree: str, record: Path | str, inputs: Callable[[], list[str]],
             say: Callable[[str], None] = lambda line: None,
             copy: str | None = None) -> Iterator[None]:
    """Hold ``tree``'s build lock for the body; then add to ``record`` those of the build's
    ``inputs`` (listed again after the body, so new files count) that the body changed.

    With ``copy``, the body builds in a fresh copy of ``tree`` made there (the traced
    variant: its instrumented objects must not mix with the tree's own), removed after.
    """
    with open(lock_path(tree), "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"waiting for another build in {tree} to finish")
            fcntl.flock(lock, fcntl.LOCK_EX)
        before = _snapshot(inputs())
        if copy is not None:
            private_copy(tree, copy)
        try:
            yield
        finally:
            if copy is not None:
                shutil.rmtree(copy, ignore_errors=True)
        after = _snapshot(inputs())
        written = {path for path, stat in after.items() if before.get(path) != stat}
        known = generated_files(record)
        new = sorted(written - known)
        if new:
            Path(record).parent.mkdir(parents=True, exist_ok=True)
            Path(record).write_text("".join(f"{p}\n" for p in sorted(known | written)))
            say(f"the build wrote {len(new)} of its input file(s), from now on not taken as "
                f"inputs: {', '.join(new[:5])}{' ...' if len(new) > 5 else ''}")
