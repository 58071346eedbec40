"""Affinity matrix files: W[i][j] = accesses to cache lines shared by threads i and j.

pinbench's own format, written by its tracers: N lines of N comma-separated
non-negative numbers, no header, symmetric, line i holding thread i's row. A
JSON sidecar beside it (same name, ``.json``) says how the matrix was made.

Other mapping tools read such a file differently, so :func:`write_matrix` and
:func:`read_matrix` take the layout of a tool (:data:`FORMATS`), and
``pinbench matrix IN OUT --to TOOL`` converts a file:

- ``numalize`` (Diener et al.), also read by EagerMap's ``maptool`` (Cruz et
  al.): numalize writes its rows from the LAST thread to the first, and
  EagerMap's ``parse_csv`` reads line k into row N-1-k (columns stay in thread
  order); it reads whole numbers only (digits, comma-separated). A pinbench
  file given to EagerMap unchanged is therefore a different, non-symmetric
  matrix (with rows, not columns, reversed).
- ``treematch`` (Jeannot, Mercier, Tessier): ``tm_load_aff_mat`` reads line i
  as row i, numbers separated by spaces or tabs (a comma-separated line is one
  unparsable field).

:func:`read_matrix` accepts commas, semicolons, spaces or tabs between numbers.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pinbench.errors import PinbenchError


class MatrixError(PinbenchError, ValueError):
    """A matrix file is unusable; the message is one line."""


@dataclass(frozen=True)
class MatrixFormat:
    """How a tool lays out a matrix in a file."""

    last_thread_first: bool  #: line k holds row N-1-k
    separator: str
    whole_numbers: bool  #: the tool reads integers only


FORMATS = {
    "pinbench": MatrixFormat(last_thread_first=False, separator=",", whole_numbers=False),
    "numalize": MatrixFormat(last_thread_first=True, separator=",", whole_numbers=True),
    "treematch": MatrixFormat(last_thread_first=False, separator=" ", whole_numbers=False),
}
_SEPARATORS = re.compile(r"[,;\s]+")


def _format(name: str) -> MatrixFormat:
    if name not in FORMATS:
        raise MatrixError(f"unknown matrix format {name!r} (choose from {', '.join(FORMATS)})")
    return FORMATS[name]


def read_matrix(path: Path | str, layout: str = "pinbench") -> np.ndarray:
    """Read and check an affinity matrix (square, finite, non-negative, symmetric).

    ``layout`` names the tool whose file it is (:data:`FORMATS`); row i of the
    result is thread i's.
    """
    fmt = _format(layout)
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise MatrixError(f"cannot read {path}: {exc.strerror}") from None
    rows = [_SEPARATORS.split(line.strip()) for line in text.splitlines() if line.strip()]
    if not rows or any(len(row) != len(rows) for row in rows):
        raise MatrixError(f"{path}: not a square matrix ({len(rows)} rows)")
    try:
        matrix = np.array([[float(cell) for cell in row] for row in rows], dtype=float)
    except ValueError:
        raise MatrixError(f"{path}: not a matrix of numbers") from None
    if fmt.last_thread_first:
        matrix = matrix[::-1]
    if not np.all(np.isfinite(matrix)) or np.any(matrix < 0):
        raise MatrixError(f"{path}: weights must be finite and non-negative")
    if not np.allclose(matrix, matrix.T, rtol=1e-9, atol=0):
        hint = "" if fmt.last_thread_first else \
            " (a numalize or EagerMap file lists the last thread first: read it as numalize)"
        raise MatrixError(f"{path}: the matrix is not symmetric{hint}")
    return matrix


def write_matrix(matrix: np.ndarray, path: Path | str, layout: str = "pinbench") -> None:
    """Write a matrix in the layout a tool reads (integers when all weights are whole).

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "m.csv")
    >>> write_matrix(np.array([[0, 1, 2], [1, 0, 3], [2, 3, 0]]), path, "numalize")
    >>> open(path).read().splitlines()
    ['2,3,0', '1,0,3', '0,1,2']
    """
    fmt = _format(layout)
    matrix = np.asarray(matrix)
    whole = bool(np.all(np.mod(matrix, 1) == 0))
    if fmt.whole_numbers and not whole:
        raise MatrixError(f"{layout} reads whole numbers only; this matrix has fractions "
                          "(scale and round it first)")
    rows = matrix[::-1] if fmt.last_thread_first else matrix
    lines = [fmt.separator.join(str(int(v)) if whole else repr(float(v)) for v in row)
             for row in rows]
    Path(path).write_text("\n".join(lines) + "\n")
