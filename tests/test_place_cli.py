"""``pinbench place``: one strategy, JSON, the comparison table, and one-line errors."""
import json
import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT, preset

from pinbench.cli import main as pinbench
from pinbench.graph.matrix import write_matrix
from pinbench.topology import load


@pytest.fixture
def matrix_file(tmp_path):
    upper = np.triu(np.random.default_rng(0).integers(0, 100, (8, 8)), 1)
    write_matrix(upper + upper.T, tmp_path / "m.csv")
    return str(tmp_path / "m.csv")


def test_one_strategy_prints_pus_j_and_omp_places(matrix_file, capsys):
    assert pinbench(["place", "--topology", preset("core2"), "--matrix", matrix_file,
                     "--strategy", "lpgp"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("lpgp: 8 threads on Package:2")
    pus = [int(pair.split("->")[1]) for pair in lines[1].split(": ")[1].split()]
    assert sorted(pus) == list(range(8))
    assert lines[2].startswith("J: ")
    assert lines[3] == "OMP_PLACES=" + ",".join(f"{{{pu}}}" for pu in pus)


def test_json_has_pus_j_places_and_shared_levels(matrix_file, capsys):
    assert pinbench(["place", "--topology", preset("nehalem"), "--matrix", matrix_file,
                     "--strategy", "gplp", "--sockets", "2", "--seed", "3", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["strategy"] == "gplp-2" and sorted(found["pus"]) == list(range(8))
    assert found["omp_places"].count("{") == 8 and isinstance(found["J"], float)
    levels = found["shared_level"]
    assert len(levels) == 8 and all(len(row) == 8 for row in levels)
    assert {levels[i][j] for i in range(8) for j in range(8) if i != j} <= {"L3Cache", "Machine"}


def test_all_compares_every_strategy(matrix_file, capsys):
    assert pinbench(["place", "--topology", preset("core2"), "--matrix", matrix_file,
                     "--strategy", "all", "--sockets", "1"]) == 2  # 8 threads on one socket
    capsys.readouterr()
    assert pinbench(["place", "--topology", preset("core2"), "--matrix", matrix_file,
                     "--strategy", "all"]) == 0
    rows = capsys.readouterr().out.splitlines()[2:]
    names = [row.split()[0] for row in rows]
    assert names == ["random", "compact", "scatter", "lp-compact", "lp-scatter", "gp", "lpgp",
                     "gplp", "hierarchical"]
    ratios = {row.split()[0]: float(row.split()[2]) for row in rows}
    assert min(ratios.values()) == 1.0 and ratios["hierarchical"] == 1.0


def test_all_as_json(tmp_path, capsys):
    """On this machine: one thread more than its placeable PUs is refused; two threads (one
    on a single PU) are placed by every strategy."""
    pus = len(load("auto").placeable)
    for threads, status in ((pus + 1, 2), (min(pus, 2), 0)):
        upper = np.triu(np.full((threads, threads), 3), 1)
        write_matrix(upper + upper.T, tmp_path / "m.csv")
        capsys.readouterr()
        assert pinbench(["place", "--topology", "auto", "--matrix", str(tmp_path / "m.csv"),
                         "--strategy", "all", "--json"]) == status, threads
    found = json.loads(capsys.readouterr().out)
    assert set(found) == {"random", "compact", "scatter", "lp-compact", "lp-scatter", "gp",
                          "lpgp", "gplp", "hierarchical"}
    assert all(len(entry["pus"]) == threads for entry in found.values())


@pytest.mark.parametrize("args, message", [
    (["--strategy", "treematch"], "unknown strategy 'treematch'"),
    (["--strategy", "gp", "--sockets", "2"], "--sockets applies to lpgp and gplp"),
    (["--strategy", "lpgp", "--sockets", "0"], "--sockets must be at least 1"),
    (["--strategy", "lpgp", "--sockets", "3"], "3 sockets asked for"),
    (["--strategy", "gp", "--topology", "Package:2 Core:2 PU:1"], "8 threads do not fit on 4"),
    (["--strategy", "gp", "--matrix", "missing.csv"], "cannot read missing.csv"),
    (["--strategy", "gp", "--matrix", "BAD"], "not symmetric"),
])
def test_errors_are_one_line_and_exit_2(matrix_file, tmp_path, capsys, args, message):
    (tmp_path / "bad.csv").write_text("0,1\n2,0\n")
    options = {"--topology": preset("core2"), "--matrix": matrix_file}
    pairs = dict(zip(args[::2], args[1::2]))
    if pairs.get("--matrix") == "BAD":
        pairs["--matrix"] = str(tmp_path / "bad.csv")
    options.update(pairs)
    argv = [item for pair in options.items() for item in pair]
    assert pinbench(["place", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("pinbench place: error: ") and message in err


def test_runs_as_a_module(matrix_file):
    proc = subprocess.run([sys.executable, "-m", "pinbench", "place", "--topology", preset("nehalem"),
                           "--matrix", matrix_file, "--strategy", "hierarchical", "--json"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert sorted(json.loads(proc.stdout)["pus"]) == list(range(8))
