"""Affinity matrices: W[i][j] = accesses to cache lines shared by threads i and j.

The file format is the one numalize, EagerMap and TreeMatch read: N lines of N
comma-separated non-negative numbers, no header, symmetric. A JSON sidecar
(same name, ``.json``) says how the matrix was made.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np


class MatrixError(ValueError):
    """A matrix file is unusable; the message is one line."""


def read_matrix(path: Path) -> np.ndarray:
    """Read and check an affinity matrix (square, finite, non-negative, symmetric)."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise MatrixError(f"cannot read {path}: {exc.strerror}") from None
    rows = [line.replace(";", ",").split(",") for line in text.splitlines() if line.strip()]
    if not rows or any(len(row) != len(rows) for row in rows):
        raise MatrixError(f"{path}: not a square matrix ({len(rows)} rows)")
    try:
        matrix = np.array([[float(cell) for cell in row] for row in rows], dtype=float)
    except ValueError:
        raise MatrixError(f"{path}: not a matrix of numbers") from None
    if not np.all(np.isfinite(matrix)) or np.any(matrix < 0):
        raise MatrixError(f"{path}: weights must be finite and non-negative")
    if not np.allclose(matrix, matrix.T, rtol=1e-9, atol=0):
        raise MatrixError(f"{path}: the matrix is not symmetric")
    return matrix


def write_matrix(matrix: np.ndarray, path: Path) -> None:
    """Write a matrix in the plain CSV format (integers when all weights are whole)."""
    matrix = np.asarray(matrix)
    whole = np.all(np.mod(matrix, 1) == 0)
    lines = [",".join(str(int(v)) if whole else repr(float(v)) for v in row) for row in matrix]
    Path(path).write_text("\n".join(lines) + "\n")
