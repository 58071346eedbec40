"""The OMPT tool (pintools/ompt/pinbench_ompt.c) on small programs with planted facts.

``tests/data/ompt/planted.c``: 3 parallel regions of 2 threads; in each, thread 0 sleeps
200 ms before an explicit barrier (thread 1 waits that long there), each thread holds one
critical section 50 ms (the other waits for it), thread 0 creates 8 tasks and waits for
them. Built with clang (libomp), and with gcc, g++ and gfortran, run on libomp through the
``libgomp.so.1`` redirection. Counts must be exact; waits within stated tolerances (the
sleeps can overshoot on a busy machine, never undershoot).
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import ompt_tool
from optional_tools import COMPILERS, need

from pinbench.measure.explain import NO_RECORD, explain_environment, read_record, runtime_used

DATA = Path(__file__).resolve().parent / "data" / "ompt"
REGIONS, SLEEP_S, HOLD_S, TASKS = 3, 0.2, 0.05, 8


@pytest.fixture(scope="module")
def tool() -> dict[str, str]:
    return ompt_tool()


def build(compiler: str, source: str, out: Path) -> Path:
    need(compiler)
    proc = subprocess.run([compiler, "-O2", "-fopenmp", "-o", str(out), str(DATA / source)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return out


def explained_run(tool: dict, argv: list[str], tmp_path: Path, threads: int = 2) -> dict | None:
    out = str(tmp_path / "record.json")
    env = explain_environment({"PATH": os.environ["PATH"], "OMP_NUM_THREADS": str(threads)},
                              tool, out)
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "validation: OK" in proc.stdout
    return read_record(out)


def by_type(record: dict) -> tuple[dict, list[dict]]:
    initial = [t for t in record["threads"] if t["type"] == "initial"]
    workers = [t for t in record["threads"] if t["type"] == "worker"]
    assert len(initial) == 1
    return initial[0], workers


def barrier_waits(thread: dict) -> tuple[float, int]:
    """Seconds and number of barrier waits, explicit and implicit together (libomp reports a
    gcc program's explicit barrier, GOMP_barrier, as an implicit one)."""
    return (thread["barrier_explicit_wait_s"] + thread["barrier_implicit_wait_s"],
            thread["barrier_explicit_waits"] + thread["barrier_implicit_waits"])


@pytest.mark.parametrize("compiler", COMPILERS)
def test_planted_idle_locks_and_counts_recovered(tool, tmp_path, compiler):
    binary = build(compiler, "planted.c", tmp_path / f"planted-{compiler}")
    record = explained_run(tool, [str(binary), str(REGIONS), "200", "50", str(TASKS)], tmp_path)
    assert record is not None, NO_RECORD
    assert record["runtime"].startswith("LLVM OMP")
    initial, workers = by_type(record)
    assert len(workers) == 1
    worker = workers[0]
    # counts, exact
    assert initial["parallel_regions"] == REGIONS and worker["parallel_regions"] == 0
    assert initial["implicit_tasks"] == worker["implicit_tasks"] == REGIONS
    # per region and thread: the explicit barrier and the region's end
    assert barrier_waits(initial)[1] == barrier_waits(worker)[1] == 2 * REGIONS
    if compiler == "clang":
        assert initial["barrier_explicit_waits"] == worker["barrier_explicit_waits"] == REGIONS
    assert initial["critical_waits"] == worker["critical_waits"] == REGIONS
    assert initial["taskwait_waits"] == REGIONS
    assert initial["tasks_created"] == REGIONS * TASKS
    assert initial["tasks_executed"] + worker["tasks_executed"] == REGIONS * TASKS
    # planted waits: the worker waits for thread 0's sleep at the barrier
    worker_barrier = barrier_waits(worker)[0]
    assert REGIONS * SLEEP_S * 0.95 <= worker_barrier <= REGIONS * SLEEP_S * 1.5
    assert barrier_waits(initial)[0] < REGIONS * (HOLD_S + 0.1)  # only the critical's turn
    # one of the two threads waits for the other's critical section in each region
    critical = initial["critical_wait_s"] + worker["critical_wait_s"]
    assert REGIONS * HOLD_S * 0.9 <= critical <= REGIONS * HOLD_S * 2.5
    # time in the team covers the regions: sleeps and critical sections
    assert worker["team_s"] >= REGIONS * (SLEEP_S + 2 * HOLD_S) * 0.95
    assert record["span_s"] >= REGIONS * (SLEEP_S + 2 * HOLD_S) * 0.95
    if compiler == "gcc":
        assert "redirected to libomp" in runtime_used(record, str(binary))
    else:
        assert "redirected" not in runtime_used(record, str(binary))


@pytest.mark.parametrize("compiler, source", [("g++", "planted.cpp"), ("clang++", "planted.cpp"),
                                              ("gfortran", "planted.f90")])
def test_cxx_and_fortran_programs_run_on_libomp_with_the_tool(tool, tmp_path, compiler, source):
    binary = build(compiler, source, tmp_path / "planted")
    record = explained_run(tool, [str(binary)], tmp_path)
    assert record is not None, NO_RECORD
    initial, (worker,) = by_type(record)
    assert initial["parallel_regions"] == REGIONS
    assert barrier_waits(worker)[1] == 2 * REGIONS
    assert REGIONS * SLEEP_S * 0.95 <= barrier_waits(worker)[0] <= REGIONS * SLEEP_S * 1.5


def test_four_threads_each_wait_for_the_sleeper(tool, tmp_path):
    binary = build("clang", "planted.c", tmp_path / "planted")
    record = explained_run(tool, [str(binary), "2", "100", "0", "0"], tmp_path, threads=4)
    initial, workers = by_type(record)
    assert len(workers) == 3
    for worker in workers:
        assert worker["barrier_explicit_waits"] == 2
        assert 0.19 <= worker["barrier_explicit_wait_s"] <= 0.35


def test_tasks_run_inside_a_wait_are_work(tool, tmp_path):
    # 2 regions of 8 tasks sleeping 25 ms: thread 0 runs some in its taskwait, the worker the
    # others at the region's end barrier; a task's time is work, not the wait's
    binary = build("clang", "planted.c", tmp_path / "planted")
    record = explained_run(tool, [str(binary), "2", "0", "0", "8", "25"], tmp_path)
    threads = record["threads"]
    assert sum(t["tasks_executed"] for t in threads) == 16
    for thread in threads:
        waits = barrier_waits(thread)[0] + thread["taskwait_wait_s"]
        assert thread["team_s"] - waits >= thread["tasks_executed"] * 0.025 * 0.95, thread


def test_a_program_without_openmp_leaves_no_record(tool, tmp_path):
    source = tmp_path / "plain.c"
    source.write_text('#include <stdio.h>\nint main(void){puts("validation: OK");return 0;}\n')
    subprocess.run(["gcc", "-o", str(tmp_path / "plain"), str(source)], check=True)
    assert explained_run(tool, [str(tmp_path / "plain")], tmp_path) is None
    assert runtime_used(None, str(tmp_path / "plain")) == "none"


def test_without_an_output_path_the_tool_writes_nothing(tool, tmp_path):
    binary = build("clang", "planted.c", tmp_path / "planted")
    env = {"PATH": os.environ["PATH"], "OMP_NUM_THREADS": "2",
           "OMP_TOOL_LIBRARIES": tool["tool"]}
    proc = subprocess.run([str(binary), "1", "0", "0", "0"], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and list(tmp_path.glob("*.json")) == []


def test_the_gomp_folder_beside_the_tool_redirects_to_libomp(tool):
    assert Path(tool["gomp_dir"]).parent == Path(tool["tool"]).parent
    assert os.path.realpath(Path(tool["gomp_dir"]) / "libgomp.so.1") == tool["libomp"]


@pytest.mark.parametrize("compiler", COMPILERS)
def test_a_worker_idle_between_regions_is_not_a_barrier_wait(tool, tmp_path, compiler):
    """tests/data/ompt/phases.c: 4 regions, in each the worker waits 30 ms for thread 0 at the
    closing barrier, then 80 ms of serial part. libomp reports the worker's end of that barrier
    only when the next region wakes it: the wait and its team time stop at the region's end, and
    the serial part is outside its team (it was booked as barrier wait, 0.48 s instead of 0.12)."""
    regions, wait_s, serial_s = 4, 0.03, 0.08
    binary = build(compiler, "phases.c", tmp_path / f"phases-{compiler}")
    record = explained_run(tool, [str(binary), str(regions), "0", "30", "80"], tmp_path)
    initial, (worker,) = by_type(record)
    waited, barriers = barrier_waits(worker)
    assert barriers == regions
    assert regions * wait_s * 0.9 <= waited <= regions * (wait_s + serial_s / 4), worker
    assert worker["team_s"] <= regions * (wait_s + serial_s / 4), worker
    assert worker["lifetime_s"] - worker["team_s"] >= 0.8 * regions * serial_s, worker


@pytest.mark.parametrize("kind", ["barrier", "parallel", "lock"])
def test_the_micro_loops_constructs_are_counted_exactly(tool, tmp_path, kind):
    """perf/ompt_constructs.c, which perf/ompt_overhead.py --constructs times with and without
    the tool: each construct of its loops is counted once per instance, per thread for a
    barrier (n explicit ones and the region's end) and a lock (a lock-heavy loop)."""
    n = 500
    binary = build("gcc", "../../../perf/ompt_constructs.c", tmp_path / "ompt_constructs")
    threads = explained_run(tool, [str(binary), kind, str(n)], tmp_path)["threads"]
    counted = {"barrier": [barrier_waits(t)[1] for t in threads],
               "parallel": [t["parallel_regions"] for t in threads],
               "lock": [t["lock_waits"] for t in threads]}[kind]
    assert counted == {"barrier": [n + 1, n + 1], "parallel": [n, 0], "lock": [n, n]}[kind]
