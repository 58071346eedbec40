"""Arrays that take a fraction of a second to compute and never change, kept on disk between
processes: the permutation test's reference distributions
(:mod:`pinbench.stats.location`) and the sequential design's tables of nominal levels
(:mod:`pinbench.stats.sequential`). Every measuring job of ``design: sequential`` looks at
its runs a few times; computed afresh in each job they cost about 0.15 s a reference
distribution and 0.25 s a table, most of what the design added to a job's time outside its
runs (docs/performance.md).

The folder is ``$PINBENCH_CACHE``, else ``$XDG_CACHE_HOME/pinbench``, else
``~/.cache/pinbench`` (2 MB a reference distribution; deleting it only costs the time). A
file's name holds a digest of everything that made it: the arguments, the source of the
modules whose code computes it and NumPy's version (its random streams), so a change to any
of them computes the array afresh rather than reading a stale one. A file that cannot be
read, or is not the shape expected, is computed again; one that cannot be written is not
kept: never an error (a read-only home costs the time, nothing else). Files are written
whole and renamed into place, so jobs side by side never read half of one.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np


def folder() -> Path:
    """Where the arrays are kept (see the module's text)."""
    if os.environ.get("PINBENCH_CACHE"):
        return Path(os.environ["PINBENCH_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pinbench"


@functools.cache
def _source(path: str) -> bytes:
    """The bytes of a source file (read once per process)."""
    return Path(path).read_bytes()


def cached(name: str, key: Sequence, sources: Sequence[str], shape: tuple[int, ...],
           compute: Callable[[], np.ndarray]) -> np.ndarray:
    """The array ``compute()`` returns for ``key``, read from the folder when an earlier
    process kept it (its digest covering ``key``, the files ``sources`` and NumPy's version,
    of the ``shape`` expected), else computed and kept."""
    digest = hashlib.sha256(repr((tuple(key), np.__version__)).encode()
                            + b"".join(_source(s) for s in sources)).hexdigest()[:24]
    path = folder() / f"{name}-{digest}.npy"
    try:
        value = np.load(path, allow_pickle=False)
        if value.shape == shape:
            return value
    except (OSError, ValueError, EOFError):
        pass
    value = compute()
    temporary = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=path.stem, suffix=".tmp",
                                         delete=False) as handle:
            temporary = handle.name
            np.save(handle, value, allow_pickle=False)
        os.replace(temporary, path)
    except OSError:
        if temporary:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
    return value
