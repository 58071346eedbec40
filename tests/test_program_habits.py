"""Programs as users have them: run through a wrapper script (the program writes its results
into a file, the script shows them), and writing files into their current folder. The
binding checked is the OpenMP program's (``verify: openmp``), and each run starts in a folder
of its own that nothing else writes into (or in the benchmark's ``cwd``)."""
import os
from pathlib import Path

import pytest
from conftest import ROOT, compile_c, needs_two_cpus, run_campaign
from test_launcher import TWO_PUS, job, placement
from test_workflow import read_csv, write_campaign

from pinbench.measure import workdir
from pinbench.measure.job import measure_one, run_job
from pinbench.measure.launcher import Launcher
from pinbench.measure.settings import JobSettings
from pinbench.measure.spawn import base_environment, prepare, run_once
from pinbench.results.placements import read_placement

#: An OpenMP program that works in its current folder: it reads the milliseconds to spin from
#: the file its argument names, appends a line to out.txt there and says how many lines
#: out.txt holds (1: no run wrote there before it).
HABITS = r"""
#include <omp.h>
#include <stdio.h>
int main(int argc, char **argv) {
    double ms;
    FILE *in = argc > 1 ? fopen(argv[1], "r") : NULL;
    if (!in || fscanf(in, "%lf", &ms) != 1) {
        fprintf(stderr, "cannot read the milliseconds from %s\n", argc > 1 ? argv[1] : "-");
        return 2;
    }
    fclose(in);
    long total = 0;
    #pragma omp parallel reduction(+ : total)
    {
        double end = omp_get_wtime() + ms / 1000.0;
        while (omp_get_wtime() < end) {
        }
        total += 1;
    }
    FILE *out = fopen("out.txt", "a");
    fprintf(out, "threads: %ld\n", total);
    fclose(out);
    out = fopen("out.txt", "r");
    int lines = 0;
    char line[64];
    while (fgets(line, sizeof line, out))
        lines++;
    fclose(out);
    printf("runs_here: %d\nvalidation: OK\n", lines);
    return 0;
}
"""
#: The wrapper: the program (built beside it as <wrapper>.prog) writes its results into a
#: file of the current folder, which the script then shows.
WRAPPER = """#!/bin/sh
"$0.prog" "$@" > out.yaml && grep -e runs_here -e validation out.yaml
"""


def project_and_rundir(tmp_path: Path, ms: int) -> tuple[Path, Path]:
    """A project ``work`` with ``data/ms.txt`` and a folder ``rundir`` with ``ms.txt``, both
    holding ``ms`` (the milliseconds :data:`HABITS` spins)."""
    work, rundir = tmp_path / "work", tmp_path / "rundir"
    (work / "data").mkdir(parents=True)
    rundir.mkdir()
    for path in (work / "data" / "ms.txt", rundir / "ms.txt"):
        path.write_text(f"{ms}\n")
    return work, rundir


@pytest.fixture(scope="module")
def wrapped(tmp_path_factory) -> Path:
    """:data:`WRAPPER` around :data:`HABITS` built with gcc (libgomp)."""
    out = tmp_path_factory.mktemp("habits")
    (out / "habits.c").write_text(HABITS)
    compile_c(out / "habits.c", out / "wrapper.prog")
    (out / "wrapper").write_text(WRAPPER)
    (out / "wrapper").chmod(0o755)
    (out / "ms.txt").write_text("30\n")
    return out / "wrapper"


@needs_two_cpus
@pytest.mark.parametrize("threads", [1, 2])
def test_a_wrapped_program_is_verified_with_verify_openmp(wrapped, threads, tmp_path):
    """The process started is the shell (its CPUs: all of them): today's check of it is a
    mismatch at every thread count; the OpenMP program below it ran where planned."""
    pus = TWO_PUS[:threads][::-1]
    records = {}
    for verify in ("launched", "openmp"):
        spec = job(wrapped, {"compact": placement("compact", pus)}, threads=threads,
                   argv=[str(wrapped), str(wrapped.parent / "ms.txt")], verify=verify,
                   scratch=str(tmp_path))
        records[verify] = measure_one(spec, "compact", 0, 0)
    assert records["launched"].ok and records["launched"].verification == "mismatch"
    assert records["openmp"].ok and records["openmp"].verification == "ok", records["openmp"]
    assert records["openmp"].observed == " ".join(f"{t}:{pu}" for t, pu in enumerate(pus))


@needs_two_cpus
def test_a_job_whose_wrapper_is_checked_says_so_in_one_line(wrapped, tmp_path):
    said = []
    spec = job(wrapped, {"compact": placement("compact", TWO_PUS[:1])}, threads=1,
               argv=[str(wrapped), str(wrapped.parent / "ms.txt")], scratch=str(tmp_path / "s"),
               quiet={"threshold": 1.0, "max_wait_s": 0})
    records = run_job(spec, tmp_path / "j.jsonl", tmp_path / "t.csv", str(tmp_path / "lock"),
                      said.append)
    assert [r.verification for r in records] == ["mismatch"]
    assert said[-1] == (f"[local spin t1] {wrapped} runs no OpenMP itself (a wrapper?): the "
                        "binding checked is its own; `verify: openmp` on the benchmark checks the "
                        "OpenMP programs it starts")
    program = wrapped.with_suffix(".prog")
    direct = job(program, {"compact": placement("compact", [max(TWO_PUS) + 5])}, threads=1,
                 argv=[str(program), str(wrapped.parent / "ms.txt")],
                 scratch=str(tmp_path / "s"), quiet={"threshold": 1.0, "max_wait_s": 0})
    records = run_job(direct, tmp_path / "d.jsonl", tmp_path / "d.csv", str(tmp_path / "lock"),
                      said.append)
    assert [r.verification for r in records] == ["mismatch"]  # a PU the machine lacks
    assert "a wrapper?" not in said[-1]


def test_a_wrapped_program_that_runs_no_openmp_is_missing_not_verified(tmp_path):
    """Nothing under the wrapper runs OpenMP (no line, no runtime): nothing is taken for it."""
    spec = job("/bin/sh", {"compact": placement("compact", TWO_PUS[:1])}, threads=1,
               argv=["/bin/sh", "-c", "sleep 0.05; echo 'validation: OK'"], verify="openmp")
    record = measure_one(spec, "compact", 0, 0)
    assert record.ok and record.verification == "missing" and record.observed == ""


def test_runs_start_in_an_empty_scratch_folder_removed_at_the_end(wrapped, tmp_path,
                                                                   monkeypatch):
    """Every run finds its folder empty (out.txt holds its own line only), the project gets
    nothing, a relative path of the project in the command still names its file, and the
    folder is gone when the job ends."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "ms.txt").write_text("5\n")
    scratch = tmp_path / "results" / "scratch" / "t1"
    spec = job(wrapped, {"os": placement("os", None)}, threads=1, repetitions=3,
               argv=[str(wrapped), "data/ms.txt"], validate="^runs_here: 1$",
               quiet={"threshold": 1.0, "max_wait_s": 0}, scratch=str(scratch))
    records = run_job(spec, tmp_path / "j.jsonl", tmp_path / "t.csv", str(tmp_path / "lock"),
                      lambda line: None)
    assert [r.ok for r in records] == [True] * 3, records[0].failure
    assert sorted(os.listdir(tmp_path)) == ["data", "j.jsonl", "lock", "t.csv"]
    assert not scratch.exists()


def test_a_run_starts_in_the_folder_asked_and_the_next_in_the_launchers_own(tmp_path):
    """The launcher moves there before the clone and back for a request naming no folder; a
    folder that cannot be entered fails the run in one line."""
    pwd = ["/bin/sh", "-c", "pwd"]
    with Launcher() as launcher:
        inside = run_once(pwd, base_environment(), 10, launcher,
                          prepare(pwd, base_environment(), 10, str(tmp_path)))
        home = run_once(pwd, base_environment(), 10, launcher)
        lost = run_once(pwd, base_environment(), 10, launcher,
                        prepare(pwd, base_environment(), 10, str(tmp_path / "gone")))
    assert inside.stdout == f"{tmp_path}\n" and home.stdout == f"{os.getcwd()}\n"
    assert lost.error == ("cannot start: cannot enter the folder it starts in (No such file or "
                          "directory)")


def test_emptying_a_folder_removes_links_not_what_they_point_to(tmp_path):
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "file").write_text("x")
    folder = tmp_path / "scratch"
    (folder / "sub" / "deeper").mkdir(parents=True)
    (folder / "out.txt").write_text("x")
    (folder / "link").symlink_to(kept)
    workdir.empty(str(folder))
    assert os.listdir(folder) == [] and (kept / "file").read_text() == "x"


def test_the_settings_of_a_benchmark_that_sets_neither_are_those_of_before():
    """No ``cwd``, ``verify: launched``: the measure rule's params and the journal's
    fingerprint hold neither (Snakemake re-runs nothing, journals resume)."""
    spec = job(Path("/bin/true"), {"os": placement("os", None)})
    data = JobSettings.to_json(spec)
    assert "cwd" not in data and "verify" not in data
    assert "cwd" not in spec.fingerprint_fields()["command"]
    assert "verify" not in spec.fingerprint_fields()["command"]
    assert JobSettings.from_json(data).verify == "launched"


@pytest.mark.slow
def test_a_campaign_of_a_program_writing_into_its_folder(wrapped, tmp_path):
    """No new key: each run finds its folder empty (before, every run but the first found the
    earlier runs' out.txt and failed, and out.txt stayed in the project), and the input, a
    relative path of the project, is read as before."""
    work = tmp_path / "work"
    (work / "data").mkdir(parents=True)
    (work / "data" / "ms.txt").write_text("20\n")
    write_campaign(work, threads=[1], machines={"here": {"topology": "auto"}},
                   benchmarks={"habits": {"source": str(wrapped.parent / "habits.c"),
                                          "input": "data/ms.txt",
                                          "validate": "^runs_here: 1$"}})
    run = run_campaign(work)
    assert run.returncode == 0, run.stderr[-3000:]
    rows = read_csv(work / "results" / "tiny" / "runs.csv")
    assert len(rows) == 9 and all(r["ok"] == "True" for r in rows), rows[-1]["failure"]
    assert sorted(os.listdir(work)) == [".snakemake", "campaign.yaml", "data", "results"]
    assert not (work / "results" / "tiny" / "here" / "scratch").exists()


@pytest.mark.slow
def test_a_campaign_of_a_wrapped_program_and_of_one_with_a_cwd(wrapped, tmp_path):
    """``wrapped``: the wrapper, ``verify: openmp``, its input a relative path of the project;
    ``inplace``: the program in a ``cwd`` of its own, reading a file there. Every pinned run is
    verified; the wrapped runs each start in an empty folder (the program's out.txt holds its
    own line); the ``cwd`` keeps every run's line; the project gets no file."""
    work, rundir = project_and_rundir(tmp_path, 30)
    source = wrapped.parent / "habits.c"
    reps = 3
    write_campaign(work, threads=[1, 2], repetitions=reps, machines={"here": {"topology": "auto"}},
                   benchmarks={
                       "wrapped": {"source": str(source), "input": "data/ms.txt",
                                   "build": f"{{cc}} {{cflags}} -o {{output}}.prog {{source}} "
                                            f"{{ldflags}} && cp {wrapped} {{output}}",
                                   "verify": "openmp", "validate": "^runs_here: 1$"},
                       "inplace": {"source": str(source), "input": "ms.txt",
                                   "cwd": str(rundir)}})
    before = set(os.listdir(ROOT))
    run = run_campaign(work)
    assert run.returncode == 0, run.stderr[-3000:]
    rows = read_csv(work / "results" / "tiny" / "runs.csv")
    assert {r["benchmark"] for r in rows} == {"wrapped", "inplace"}
    assert all(r["ok"] == "True" for r in rows), [r["failure"] for r in rows if r["ok"] != "True"]
    pinned = [r for r in rows if r["strategy"] != "os"]
    assert {r["verification"] for r in pinned} == {"ok"}
    assert {r["verification"] for r in rows if r["strategy"] == "os"} == {"n/a"}
    inplace = [r for r in rows if r["benchmark"] == "inplace"]
    assert len((rundir / "out.txt").read_text().splitlines()) == len(inplace)
    assert sorted(os.listdir(work)) == [".snakemake", "campaign.yaml", "data", "results"]
    assert set(os.listdir(ROOT)) == before
    assert not (work / "results" / "tiny" / "here" / "scratch").exists()


@pytest.mark.parametrize("entry, message", [
    ({"verify": "sometimes"}, "benchmarks.spin.verify: 'sometimes' is not one of "
                              "['launched', 'openmp']"),
    ({"cwd": "no/such/folder"}, "benchmarks.spin.cwd: no/such/folder is not a folder (the "
                                "runs start there)"),
])
def test_a_bad_cwd_or_verify_is_refused_in_one_line(tmp_path, entry, message):
    work = write_campaign(tmp_path, machines={"here": {"topology": "auto"}},
                          benchmarks={"spin": {"source": "tests/data/spin.c"} | entry})
    run = run_campaign(work, "-n")
    assert run.returncode == 2, run.stderr
    assert run.stderr.strip() == f"pinbench run: error: {message}", run.stderr


@pytest.mark.slow
def test_traced_runs_start_where_the_timed_runs_start(wrapped, tmp_path):
    """The traced run of a graph strategy's cell starts in the benchmark's ``cwd`` (reading
    the input deck there: the trace would fail elsewhere, and the graph strategy be left out),
    or in an empty folder of its own (the project's relative input made absolute, and what it
    writes kept out of the project)."""
    work, rundir = project_and_rundir(tmp_path, 20)
    source = str(wrapped.parent / "habits.c")
    write_campaign(work, threads=[2], strategies=["os", "compact", "lp-compact"],
                   machines={"here": {"topology": "auto"}},
                   benchmarks={"inplace": {"source": source, "input": "ms.txt",
                                           "cwd": str(rundir)},
                               "scratch": {"source": source, "input": "data/ms.txt",
                                           "validate": "^runs_here: 1$"}})
    run = run_campaign(work)
    assert run.returncode == 0, run.stderr[-3000:]
    results = work / "results" / "tiny"
    for bench in ("inplace", "scratch"):
        placed = read_placement(results / "here" / "placements" / bench / "t2" / "lp-compact.json")
        assert placed.left_out is None and placed.pus is not None, placed.left_out
    rows = read_csv(results / "runs.csv")
    assert all(r["ok"] == "True" for r in rows), [r["failure"] for r in rows if r["ok"] != "True"]
    inplace = [r for r in rows if r["benchmark"] == "inplace"]
    assert len((rundir / "out.txt").read_text().splitlines()) == len(inplace) + 1  # + the trace
    assert sorted(os.listdir(work)) == [".snakemake", "campaign.yaml", "data", "results"]
    assert not (results / "here" / "scratch").exists()
