"""The affinity matrix file format."""
import numpy as np
import pytest

from affinity.graph.matrix import MatrixError, read_matrix, write_matrix


def test_round_trip(tmp_path):
    matrix = np.array([[0, 5, 1], [5, 0, 2], [1, 2, 0]])
    write_matrix(matrix, tmp_path / "m.csv")
    assert (tmp_path / "m.csv").read_text() == "0,5,1\n5,0,2\n1,2,0\n"
    assert np.array_equal(read_matrix(tmp_path / "m.csv"), matrix)


@pytest.mark.parametrize("text, message", [
    ("1,2\n3\n", "not a square matrix"),
    ("0,1\n2,0\n", "not symmetric"),
    ("0,-1\n-1,0\n", "non-negative"),
    ("0,x\nx,0\n", "not a matrix of numbers"),
    ("", "not a square matrix"),
])
def test_bad_matrices(tmp_path, text, message):
    (tmp_path / "m.csv").write_text(text)
    with pytest.raises(MatrixError, match=message):
        read_matrix(tmp_path / "m.csv")
