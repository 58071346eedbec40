"""The affinity matrix file format."""
import numpy as np
import pytest

from pinbench.cli import main as pinbench
from pinbench.graph.matrix import MatrixError, read_matrix, write_matrix


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


def eagermap_reads(text: str) -> np.ndarray:
    """EagerMap's maptool.c parse_csv, step by step: the column count from the first line's
    commas, digits only, line k into row nt-1-k (columns in thread order)."""
    lines = text.rstrip("\n\t\r ").split("\n")
    nt = lines[0].count(",") + 1
    matrix = np.zeros((nt, nt))
    for k, line in enumerate(lines):
        cells = line.split(",")
        assert len(cells) == nt and all(cell.isdigit() for cell in cells), line
        matrix[nt - 1 - k] = [int(cell) for cell in cells]
    return matrix


def treematch_reads(text: str) -> np.ndarray:
    """TreeMatch's tm_load_aff_mat / init_mat: one row per line, fields split on spaces and
    tabs, atof each, exactly N fields per line."""
    rows = text.splitlines()
    matrix = np.zeros((len(rows), len(rows)))
    for i, line in enumerate(rows):
        fields = [f for f in line.replace("\t", " ").split(" ") if f and not f.isspace()]
        assert len(fields) == len(rows), f"line {i}: {len(fields)} fields"
        matrix[i] = [float(f) for f in fields]
    return matrix


@pytest.fixture
def asymmetric_rows():
    """A symmetric matrix whose rows differ from its reversed rows: orientation shows."""
    upper = np.triu(np.random.default_rng(4).integers(1, 100, (6, 6)), 1)
    return upper + upper.T


def test_each_tool_reads_back_the_threads_rows(tmp_path, asymmetric_rows):
    for layout, reader in (("numalize", eagermap_reads), ("treematch", treematch_reads)):
        write_matrix(asymmetric_rows, tmp_path / f"{layout}.txt", layout)
        text = (tmp_path / f"{layout}.txt").read_text()
        assert np.array_equal(reader(text), asymmetric_rows), layout
        assert np.array_equal(read_matrix(tmp_path / f"{layout}.txt", layout), asymmetric_rows)


def test_a_pinbench_file_is_another_matrix_to_eagermap(tmp_path, asymmetric_rows):
    write_matrix(asymmetric_rows, tmp_path / "m.csv")
    seen = eagermap_reads((tmp_path / "m.csv").read_text())
    assert not np.array_equal(seen, asymmetric_rows) and not np.array_equal(seen, seen.T)
    with pytest.raises(AssertionError, match="fields"):
        treematch_reads((tmp_path / "m.csv").read_text())  # one comma-joined field per line
    write_matrix(asymmetric_rows, tmp_path / "n.csv", "numalize")
    with pytest.raises(MatrixError, match="read it as numalize"):
        read_matrix(tmp_path / "n.csv")  # a numalize file taken for a pinbench one


def test_conversion_command(tmp_path, asymmetric_rows, capsys):
    write_matrix(asymmetric_rows, tmp_path / "m.csv")
    assert pinbench(["matrix", str(tmp_path / "m.csv"), str(tmp_path / "e.csv"),
                     "--to", "numalize"]) == 0
    assert np.array_equal(eagermap_reads((tmp_path / "e.csv").read_text()), asymmetric_rows)
    assert pinbench(["matrix", str(tmp_path / "e.csv"), str(tmp_path / "t.txt"),
                     "--from", "numalize", "--to", "treematch"]) == 0
    assert np.array_equal(treematch_reads((tmp_path / "t.txt").read_text()), asymmetric_rows)
    write_matrix(asymmetric_rows / 3, tmp_path / "f.csv")
    assert pinbench(["matrix", str(tmp_path / "f.csv"), str(tmp_path / "x.csv"),
                     "--to", "numalize"]) == 2
    assert "whole numbers only" in capsys.readouterr().err
    assert pinbench(["matrix", str(tmp_path / "m.csv"), str(tmp_path / "x.csv"),
                     "--to", "scotch"]) == 2
