"""A failed trace fails only the strategies that need its affinity matrix, through the real
`pinbench run`: the traced build of one benchmark fails, another's traced binary holds no
tracer runtime; both are still placed and measured with every other strategy, the graph
strategy is left out of them, and the end of the call and the report say which and why in one
line. A C++ program built by CMake is traced with the documented recipe beside them."""
import csv
import json
import os
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import yaml
from conftest import DATA, run_campaign
from optional_tools import requires
from test_trace import CMAKE_LISTS

from pinbench.graph.matrix import write_matrix
from pinbench.results import traces
from pinbench.results.placements import read_placement
from pinbench.workflow import tracecache

STRATEGIES = ["os", "compact", "lp-compact"]


def read_csv(path: Path) -> list[dict]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def experiments(rows: list[dict], bench: str) -> set[str]:
    """The strategies measured for ``bench``, each under its own name or another's."""
    return {s for r in rows if r["benchmark"] == bench
            for s in [r["strategy"], *r["stands_for"].split()]}


@pytest.mark.slow
@requires("cmake", "g++")
def test_a_failed_trace_leaves_out_only_the_strategies_that_need_the_matrix(tmp_path):
    project = tmp_path / "pairs"
    project.mkdir()
    shutil.copy(DATA / "pairs_cxx.cpp", project)
    (project / "CMakeLists.txt").write_text(CMAKE_LISTS)
    spin = str(DATA / "spin.c")
    config = {
        "campaign": "traces", "repetitions": 3, "threads": ["all"], "strategies": STRATEGIES,
        "explain": None, "machines": {"here": {"topology": "auto"}},
        "benchmarks": {
            # the recipe of docs/tracing.md: CMake puts the link flags before the objects
            "cmake": {
                "tree": str(project), "inputs": [str(project / "CMakeLists.txt"),
                                                 str(project / "*.cpp")],
                "build": "cmake -S {tree} -B {tree}/build -DCMAKE_CXX_FLAGS='-O2 -fopenmp' && "
                         "cmake --build {tree}/build && cp {tree}/build/pairs {output}",
                "trace_build": "cmake -S {tree} -B {tree}/build-traced "
                               "-DCMAKE_CXX_FLAGS='-O2 {trace_cflags}' "
                               "-DCMAKE_EXE_LINKER_FLAGS='{trace_ldflags}' && "
                               "cmake --build {tree}/build-traced && "
                               "cp {tree}/build-traced/pairs {output}",
                "input": "300", "validate": r"^checksum: \d+$", "timeout_s": 30},
            # built for tracing without the tracer's flags: the tracer refuses it
            "unlinked": {"source": spin, "input": "20", "timeout_s": 20,
                         "trace_build": "{cc} {cflags} -o {output} {source} {ldflags}",
                         "metrics": {"checksum": r"^checksum: (\d+)$",
                                     "hits": {"regex": r"^hits: (\S+)$", "required": False}}},
            # a traced build that fails
            "unbuilt": {"source": spin, "input": "20", "timeout_s": 20,
                        "trace_build": "{cc} {cflags} {trace_cflags} -o {output} {source} "
                                       "-lpinbench_no_such_library"},
        },
    }
    (tmp_path / "campaign.yaml").write_text(yaml.safe_dump(config))
    run = run_campaign(tmp_path)
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    assert run.returncode == 1, run.stderr[-3000:]
    results = tmp_path / "results" / "traces"
    n = len(os.sched_getaffinity(0))
    unlinked = results / "here" / "bin" / "unlinked.traced"
    [line] = [x for x in run.stderr.splitlines() if x.startswith("campaign failed: ")]
    groups = [  # one per benchmark, in either order
        f"lp-compact left out of here/unlinked/t{n}: {unlinked} cannot be traced by the tsan "
        "tracer: no pinbench tracer symbols (pinbench_tsan_runtime); compile it with the CFLAGS "
        "and link it with the LDFLAGS of `pinbench trace --print-flags`, in separate commands "
        "(docs/tracing.md)",
        f"lp-compact left out of here/unbuilt/t{n}: the traced build failed: /usr/bin/ld: "
        "cannot find -lpinbench_no_such_library: No such file or directory / collect2: error: "
        "ld returned 1 exit status (log: results/traces/here/logs/build/unbuilt.traced.log)"]
    assert line in [f"campaign failed: {first}; {second} (the other results and the report "
                    "are kept)" for first, second in (groups, groups[::-1])], line
    assert f"trace unlinked t{n} failed: " in run.stdout
    assert "build unbuilt for tracing failed: the strategies that need its affinity matrix " \
        "are left out, the others measured" in run.stderr

    rows = read_csv(results / "runs.csv")
    assert all(r["ok"] == "True" for r in rows), [r["failure"] for r in rows]
    assert experiments(rows, "cmake") == set(STRATEGIES)
    assert experiments(rows, "unlinked") == experiments(rows, "unbuilt") == {"os", "compact"}
    # an optional metric the program never prints: no value, the runs ok
    assert {tuple(json.loads(r["metrics"])) for r in rows if r["benchmark"] == "unlinked"} == {
        ("checksum",)}
    left = read_placement(results / "here" / "placements" / "unlinked" / f"t{n}" /
                          "lp-compact.json")
    assert left.pus is None and "no pinbench tracer symbols" in left.left_out
    cmake = read_placement(results / "here" / "placements" / "cmake" / f"t{n}" / "lp-compact.json")
    assert cmake.left_out is None and cmake.J is not None
    report = (results / "report" / "index.html").read_text()
    assert "Strategies left out" in report
    assert re.search(rf"here/unbuilt, {n} threads:\s+lp-compact left out \(the traced build "
                     "failed: ", report)

    # a failed trace is not tried again while nothing it depends on changed
    idle = run_campaign(tmp_path, "-n")
    assert idle.returncode == 0 and "Nothing to be done" in idle.stdout + idle.stderr

    # fixed: traced, lp-compact placed and measured; the cell's earlier runs kept, set aside
    del config["benchmarks"]["unlinked"]["trace_build"]
    (tmp_path / "campaign.yaml").write_text(yaml.safe_dump(config))
    fixed = run_campaign(tmp_path)
    assert fixed.returncode == 1, fixed.stderr[-3000:]
    [line] = [x for x in fixed.stderr.splitlines() if x.startswith("campaign failed: ")]
    assert line.startswith(f"campaign failed: lp-compact left out of here/unbuilt/t{n}: ")
    assert "unlinked" not in line
    rows = read_csv(results / "runs.csv")
    assert experiments(rows, "unlinked") == set(STRATEGIES)
    [aside] = [x for x in fixed.stdout.splitlines() if "measurements set aside" in x]
    assert aside.startswith(f"WARNING: measurements set aside: here/unlinked/t{n}: "), aside


def test_a_matrix_without_a_shared_line_is_a_failed_trace(tmp_path, monkeypatch, capsys):
    """A trace whose matrix shares no line between two threads cannot rank the graph
    strategies: it is recorded as failed (they are left out), said why in one line; one
    that shares a line is kept."""
    monkeypatch.chdir(tmp_path)
    binary = tmp_path / "prog.traced"
    binary.write_bytes(b"\x7fELF")
    config = {"campaign": "c", "benchmarks": {"b": {}}}
    wildcards = SimpleNamespace(machine="here", bench="b", n="2")
    for weights, failed in (([[5.0, 0.0], [0.0, 7.0]], True), ([[5.0, 1.0], [1.0, 7.0]], False)):
        matrix = tmp_path / f"{failed}" / "t2.csv"
        matrix.parent.mkdir()
        monkeypatch.setattr(tracecache, "_trace", lambda config, wildcards, binary, out, log,
                            weights=weights: write_matrix(np.array(weights), out))
        tracecache.trace_cell(config, wildcards, str(binary), str(matrix), str(tmp_path / "log"))
        why = traces.failure(matrix)
        if failed:
            assert why.startswith("no cache line was shared by two of the 2 threads (an "
                                  "all-zero matrix): it cannot rank placements")
            assert f"trace b t2 failed: {why}; the strategies that need its affinity matrix " \
                "are left out there, the others measured" in capsys.readouterr().out
        else:
            assert why is None and matrix.stat().st_size
