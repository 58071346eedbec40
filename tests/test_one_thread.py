"""One-thread runs are verified too: libgomp prints no affinity line for a one-thread team, so
the launcher reads the initial thread's CPUs from the kernel once the program has exited."""
import os
import subprocess
from pathlib import Path

import pytest
from conftest import DATA, OnFirstUse, builds, run_campaign
from optional_tools import COMPILERS
from test_workflow import read_csv, write_campaign

from pinbench.measure import spawn
from pinbench.measure.job import Job, measure_one
from pinbench.measure.launcher import Launcher
from pinbench.measure.verify import format_binding
from pinbench.results.placements import Placement

ALLOWED = sorted(os.sched_getaffinity(0))
#: The planned PU: the last one allowed, so a thread left on CPU 0 cannot pass for it.
PU = ALLOWED[-1]
#: A CPU the machine lacks: the runtimes drop such a place and run the thread elsewhere.
INVALID = max(ALLOWED) + 5
UNBOUND = format_binding({0: frozenset(ALLOWED)})

#: Programs that run no parallel region, or undo their binding after the runtime reported it.
SOURCES = {
    "no-region": """
        #include <omp.h>
        #include <stdio.h>
        int main(void) {  /* an OpenMP call, no parallel region: both runtimes bind at it */
            printf("threads: %d\\nvalidation: OK\\n", omp_get_max_threads());
            return 0;
        }""",
    "serial": """
        #include <stdio.h>
        int main(void) {  /* no OpenMP call at all: no runtime ever binds the thread */
            puts("validation: OK");
            return 0;
        }""",
    "moved": """
        #define _GNU_SOURCE
        #include <omp.h>
        #include <sched.h>
        #include <stdio.h>
        int main(void) {  /* bound for the region, then allowed everywhere */
            int n = 0;
            #pragma omp parallel
            n = omp_get_num_threads();
            cpu_set_t all;
            CPU_ZERO(&all);
            for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) CPU_SET(cpu, &all);
            sched_setaffinity(0, sizeof all, &all);
            printf("threads: %d\\nvalidation: OK\\n", n);
            return 0;
        }""",
}


@pytest.fixture(scope="module")
def programs(tmp_path_factory) -> dict[str, OnFirstUse]:
    """program -> compiler -> binary: spin.c and :data:`SOURCES` with gcc or clang, and a
    statically linked spin.c (gcc), which ignores ``LD_PRELOAD`` but not the kernel."""
    out = tmp_path_factory.mktemp("one-thread")
    built = {"spin": builds(DATA / "spin.c", out)}
    for name, text in SOURCES.items():
        (out / f"{name}.c").write_text(text)
        built[name] = builds(out / f"{name}.c", out)
    static = out / "spin-static"
    proc = subprocess.run(["gcc", "-O2", "-fopenmp", "-static", "-o", str(static),
                           str(DATA / "spin.c"), "-lm"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    built["spin"]["static"] = static
    return built


def one_thread(binary: Path, strategy: str, pus: list[int] | None):
    """The record of one one-thread run of ``binary 20`` planned on ``pus``."""
    job = Job(machine="local", benchmark="b", threads=1, argv=[str(binary), "20"], env={},
              validate="^validation: OK$", time=None, timeout_s=20, repetitions=1,
              seed=1, order="interleaved", strategies=[strategy],
              placements={strategy: Placement(strategy=strategy, threads=1, topology="auto",
                                              placeable=[PU], pus=pus, J=None)})
    return measure_one(job, strategy, 0, 0)


@pytest.mark.parametrize("cc", [*COMPILERS, "static"])
def test_a_correct_binding_is_verified(programs, cc):
    row = one_thread(programs["spin"][cc], "compact", [PU])
    assert row.ok and row.verification == "ok", row
    assert row.observed == f"0:{PU}"


@pytest.mark.parametrize("cc", [*COMPILERS, "static"])
def test_a_binding_the_runtime_did_not_honour_is_a_mismatch(programs, cc):
    row = one_thread(programs["spin"][cc], "compact", [INVALID])
    assert row.ok and row.verification == "mismatch", row
    assert row.observed.startswith("0:") and str(INVALID) not in row.observed


@pytest.mark.parametrize("cc", COMPILERS)
def test_os_runs_are_not_bound_and_show_where_the_thread_could_run(programs, cc):
    row = one_thread(programs["spin"][cc], "os", None)
    assert row.ok and row.verification == "n/a" and row.observed == UNBOUND, row


@pytest.mark.parametrize("program, verdict", [
    ("no-region", "ok"),
    ("serial", "mismatch"),  # the plan was never applied: not passed as verified
    ("moved", "mismatch"),  # a binding undone after the runtime's report is caught at exit
])
@pytest.mark.parametrize("cc", COMPILERS)
def test_programs_without_a_parallel_region_or_that_move(programs, cc, program, verdict):
    if len(ALLOWED) < 2 and verdict == "mismatch":
        pytest.skip("needs two CPUs to tell a bound thread from an unbound one")
    row = one_thread(programs[program][cc], "compact", [PU])
    assert row.ok and row.verification == verdict, row
    assert row.observed == (f"0:{PU}" if verdict == "ok" else UNBOUND)


def test_the_launcher_reads_the_exited_programs_cpus_outside_the_wall_time():
    """No OpenMP: ``taskset`` binds and execs ``true``; a slow read of the kernel's answer (the
    launcher told to sleep 0.3 s after it) would show in the wall time if it were inside the
    timed span."""
    argv = ["taskset", "-c", str(PU), "/bin/true"]
    with Launcher(exit_read_delay_s=0.3) as slow:
        result = spawn.run_once(argv, spawn.base_environment(), 10, slow)
        assert result.exit_status == 0 and result.exit_cpus == str(PU)
        assert result.wall_s < 0.25
        hung = spawn.run_once(["/bin/sleep", "10"], spawn.base_environment(), 0.2, slow)
    assert hung.timed_out and hung.exit_cpus == ""


@pytest.mark.slow
@pytest.mark.parametrize("cc", COMPILERS)
def test_a_one_thread_campaign_verifies_every_pinned_run(tmp_path, cc):
    reps = 3
    work = write_campaign(tmp_path, threads=[1], repetitions=reps, compiler={"cc": cc},
                          machines={"here": {"topology": "auto"}},
                          benchmarks={"spin": {"source": "tests/data/spin.c", "input": "20"}})
    run = run_campaign(work)
    assert run.returncode == 0, run.stderr[-3000:]
    results = work / "results" / "tiny"
    rows = read_csv(results / "runs.csv")
    measured_as = {s: r["strategy"] for r in rows for s in [r["strategy"], *r["stands_for"].split()]}
    assert set(measured_as) == {"os", "random", "compact", "scatter"}
    assert measured_as["scatter"] == "compact"  # one thread on PU 0 either way: measured once
    assert len(rows) == 3 * reps and all(r["ok"] == "True" and r["threads"] == "1" for r in rows)
    pinned = [r for r in rows if r["strategy"] != "os"]
    assert [r["verification"] for r in pinned] == ["ok"] * len(pinned)
    assert all(r["observed"] == f"0:{r['pus']}" for r in pinned)
    cells = read_csv(results / "stats" / "cells.csv")
    assert {(c["strategy"], c["n"], c["misplaced"]) for c in cells} == {
        (s, str(reps), "0") for s in ("os", "random", "compact", "scatter")}
