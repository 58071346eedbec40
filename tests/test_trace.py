"""The cache-line sharing tracers (pinbench/trace/, pinbench/trace/pintools/).

- The bundled benchmarks with planted sharing, traced by the tsan runtime (gcc and
  clang builds) and by the Valgrind tool, under every weight (over every access, and
  over the accesses inside parallel regions only): more than 99% of the weight falls
  inside the planted groups, and the tracers find the same groups.  Planted structure:
    pairs       {i, i+N/2};
    quads       {g, g+Q, g+2Q, g+3Q}, Q = ceil(N/4);
    falseshare  the threads whose counters share a line: {0..7}, {8..15}, ... (all
                pairs for N <= 8), plus thread 0 with everyone (counting every access:
                it zeroes and sums all counters serially);
    triad       no sharing between the workers' blocks except at block boundaries
                (neighbours i, i+1), plus thread 0 with everyone (counting every access:
                its serial validation pass reads all of a[] after the kernel).
- Serial phases (tests/data/serial_init.c: serial initialisation, a serial pass between
  the parallel Jacobi sweeps): counting every access, they make a star around thread 0;
  the default rule (accesses inside parallel regions only) recovers the nearest
  neighbours, and the graph strategies then place them together.
- Which accesses the parallel-* weights count, on a hand-checkable case
  (tests/data/count_rule.c).
- C++ and Fortran test programs with planted pairs (tests/data), traced by the tsan
  runtime (g++, clang++, gfortran; Fortran with clang is skipped: no flang here); the C++
  one built by CMake and by a makefile that links with its compile flags, and refused in
  one line naming what it holds when built with the compiler's own ThreadSanitizer.
- The Valgrind tool against lackey's memory trace, on a program whose threads never wait
  for each other (tests/data/pairs_nowait.c): the same counts whatever the schedule.
- The weight definitions on a hand-checkable case (tests/data/weights.c).
- Exact counts through the access path: runs on one line, interleaved streams over many
  table pages, straddling reads, two lines in turn (tests/data/streams.c).
- --print-flags from another directory, usage errors (one line, status 2), Pin (skipped
  unless PIN_ROOT is set).
"""
from __future__ import annotations

import collections
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import OnFirstUse, compile_c, helper, needs_valgrind, preset
from optional_tools import COMPILERS, need, requires

from pinbench import native
from pinbench.graph.matrix import read_matrix
from pinbench.place import registry
from pinbench.place.record import make_placement
from pinbench.results.placements import shared_levels
from pinbench.results.formats import CURRENT
from pinbench.topology import load
from pinbench.trace import build as tb
from pinbench.trace.elf import needed_libraries
from pinbench.trace.run import DEFAULT_WEIGHT, WEIGHT_DEFINITIONS, trace
from pinbench.workflow.campaign import load_campaign

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
BENCH = ROOT / "benchmarks"
PY = sys.executable

#: small inputs: the kernel's own sharing dominates start-up and spin-waiting
#: (4 threads on this 2-core machine: the pair barriers spin and yield)
TSAN_INPUTS = {
    "pairs": (4, ["kib=256", "jobs=2", "rounds=400"]),
    "quads": (8, ["kib=256", "jobs=2", "rounds=200"]),
    "triad": (4, ["n=100000", "iters=10"]),
    "falseshare": (4, ["incs=1000000"]),
}
VALGRIND_INPUTS = {
    "pairs": (4, ["kib=256", "jobs=2", "rounds=40"]),
    "quads": (8, ["kib=256", "jobs=2", "rounds=20"]),
    "triad": (4, ["n=100000", "iters=5"]),
    "falseshare": (4, ["incs=1000000"]),
}


# ------------------------------------------------------------------------------ helpers

def planted_mask(bench: str, n: int, count: str = "all") -> np.ndarray:
    """Pairs of threads that share on purpose (see the module docstring), counting
    every access (``count`` "all") or only those inside parallel regions ("parallel")."""
    mask = np.zeros((n, n), dtype=bool)
    serial_star = count == "all"
    if bench == "pairs":
        h = n // 2
        groups = [[i, i + h] for i in range(h)]
    elif bench == "quads":
        q = -(-n // 4)
        groups = [list(range(g, n, q)) for g in range(q)]
    elif bench == "falseshare":
        groups = [list(range(s, min(s + 8, n))) for s in range(0, n, 8)]
        mask[0, :] = mask[:, 0] = serial_star
    elif bench == "triad":
        groups = [[i, i + 1] for i in range(n - 1)]
        mask[0, :] = mask[:, 0] = serial_star
    else:
        raise ValueError(bench)
    for group in groups:
        for i in group:
            for j in group:
                mask[i, j] = True
    np.fill_diagonal(mask, False)
    return mask


def assert_planted(bench: str, matrix: np.ndarray, side: dict) -> None:
    """More than 99% of the weight inside the planted groups.  For triad inside parallel
    regions, no sharing at all: the weight is below 1% of the accesses (every line shared
    by two threads would give about twice the accesses; what is left is the region's
    shared variables on the master's stack and, under Valgrind, the runtime's barriers;
    counting every access, the serial validation pass makes it 0.08 to 0.55)."""
    if bench == "triad" and side["count"] == "parallel":
        assert matrix.sum() < 0.01 * side["accesses"], (matrix, side["accesses"])
    else:
        assert inside(matrix, planted_mask(bench, len(matrix), side["count"])) > 0.99


def star(n: int) -> np.ndarray:
    """Thread 0 with every other thread."""
    mask = np.zeros((n, n), dtype=bool)
    mask[0, 1:] = mask[1:, 0] = True
    return mask


def inside(matrix: np.ndarray, mask: np.ndarray) -> float:
    """Fraction of the weight inside the planted groups."""
    total = matrix.sum()
    assert total > 0, "empty matrix"
    return float(matrix[mask].sum() / total)


def significant_pairs(matrix: np.ndarray, share: float = 0.01) -> set[tuple[int, int]]:
    """The thread pairs that carry more than ``share`` of the weight."""
    n = len(matrix)
    total = matrix.sum()
    return {(i, j) for i in range(n) for j in range(i + 1, n) if matrix[i, j] > share * total}


def weights_reference(counts: dict[int, dict[int, int]], n: int, weight: str) -> np.ndarray:
    """W from per-(line, thread) counts, written independently of pb_core.h."""
    w = np.zeros((n, n), dtype=np.int64)
    for per_thread in counts.values():
        threads = sorted(per_thread)
        for a, i in enumerate(threads):
            for j in threads[a + 1:]:
                ci, cj = per_thread[i], per_thread[j]
                value = ci + cj if weight == "common" else min(ci, cj)
                w[i, j] += value
                w[j, i] += value
    return w


def events_reference(accesses: list[tuple[int, int]], n: int) -> np.ndarray:
    """numalize's sharing events from a sequence of (thread, line) accesses."""
    e = np.zeros((n, n), dtype=np.int64)
    sharers: dict[int, list[int]] = {}
    for t, line in accesses:
        recent = sharers.setdefault(line, [])  # most recent distinct accessor first, at most 2
        if recent and recent[0] == t:
            if len(recent) == 2:
                e[t, recent[1]] += 1
            continue
        for s in recent:
            if s != t:
                e[t, s] += 1
        sharers[line] = [t] + recent[:1]
    return e + e.T


def read_raw(path: Path) -> dict[int, dict[int, int]]:
    counts: dict[int, dict[int, int]] = collections.defaultdict(dict)
    for row in path.read_text().splitlines()[1:]:
        line, thread, count = map(int, row.split(","))
        counts[line][thread] = count
    return counts


def flags() -> tuple[list[str], list[str]]:
    cflags, ldflags = tb.traced_build_flags()
    return shlex.split(cflags), shlex.split(ldflags)


def build_traced(source: Path, out: Path, compiler: str, extra: tuple[str, ...] = ()) -> Path:
    """Compile with the tsan compile flags, link with the runtime (two separate steps)."""
    need(compiler)
    cflags, ldflags = flags()
    obj = out.with_suffix(".o")
    for cmd in ([compiler, "-O2", *extra, *cflags, "-c", str(source), "-o", str(obj)],
                [compiler, str(obj), *ldflags, "-lm", "-o", str(out)]):
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=out.parent)
        assert proc.returncode == 0, proc.stderr
    return out


def link_with_runtime(source: Path, out: Path) -> Path:
    """A plain OpenMP build (no instrumentation: the program calls the ABI itself), linked
    with the runtime."""
    _, ldflags = flags()
    obj = out.with_suffix(".o")
    for cmd in (["gcc", "-O2", "-fopenmp", "-c", str(source), "-o", str(obj)],
                ["gcc", str(obj), *ldflags, "-o", str(out)]):
        proc = subprocess.run(cmd, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
    return out


def build_native(source: Path, out: Path, compiler: str) -> Path:
    need(compiler)
    proc = subprocess.run([compiler, "-O2", "-fopenmp", str(source), "-o", str(out), "-lm"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return out


# ------------------------------------------------------------------------------ fixtures

@pytest.fixture(scope="session")
def bins(tmp_path_factory) -> OnFirstUse:
    """(kind, compiler, benchmark) -> binary; kind "tsan" (traced build) or "native"."""
    out = tmp_path_factory.mktemp("trace-bins")

    def make(key: tuple[str, str, str]) -> Path:
        kind, cc, bench = key
        build = build_traced if kind == "tsan" else build_native
        return build(BENCH / f"{bench}.c", out / f"{bench}-{kind}-{cc}", cc)

    return OnFirstUse(make)


@pytest.fixture(scope="session")
def traced(bins, tmp_path_factory):
    """Trace once, share the matrices between the tests: (tracer, cc, bench, weight) -> W."""
    out = tmp_path_factory.mktemp("trace-out")
    cache: dict[tuple, tuple[np.ndarray, dict]] = {}

    def get(tracer: str, cc: str, bench: str, weight: str = "common"):
        key = (tracer, cc, bench, weight)
        if key not in cache:
            helper(tracer)
            n, args = (TSAN_INPUTS if tracer == "tsan" else VALGRIND_INPUTS)[bench]
            kind = "tsan" if tracer == "tsan" else "native"
            csv = out / ("-".join(key) + ".csv")
            side = trace([str(bins[kind, cc, bench]), *args], n, csv, tracer, weight,
                            stdout=subprocess.DEVNULL)
            cache[key] = (read_matrix(csv), side)
        return cache[key]

    return get


# ------------------------------------------------------------------------------ planted structure

def counted(weight: str) -> str:
    """The sidecar's ``count`` of a weight name."""
    return "parallel" if weight.startswith("parallel-") else "all"


@pytest.mark.slow
@pytest.mark.parametrize("bench", list(TSAN_INPUTS))
@pytest.mark.parametrize("cc", COMPILERS)
@pytest.mark.parametrize("weight", WEIGHT_DEFINITIONS)
def test_tsan_recovers_planted_sharing(traced, bench, cc, weight):
    matrix, side = traced("tsan", cc, bench, weight)
    n = TSAN_INPUTS[bench][0]
    assert matrix.shape == (n, n)
    assert side["tracer"] == "tsan" and side["weight"] == weight and side["threads"] == n
    assert side["count"] == counted(weight) and side["count_definition"]
    assert side["line_bytes"] == 64 and side["shared_lines"] > 0 and side["accesses"] > 0
    assert_planted(bench, matrix, side)


@needs_valgrind
@pytest.mark.parametrize("bench", list(VALGRIND_INPUTS))
@pytest.mark.parametrize("weight", WEIGHT_DEFINITIONS)
def test_valgrind_recovers_planted_sharing(traced, bench, weight):
    matrix, side = traced("valgrind", "gcc", bench, weight)
    n = VALGRIND_INPUTS[bench][0]
    assert matrix.shape == (n, n) and side["tracer"] == "valgrind"
    assert side["weight"] == weight and side["count"] == counted(weight)
    assert_planted(bench, matrix, side)


@needs_valgrind
def test_valgrind_on_a_clang_binary(bins, tmp_path):
    """libomp under Valgrind, default weight: the runtime's own work inside the regions and
    clang's by-reference captures (the master's stack line, read at every word of the job
    set-up) weigh more than with libgomp; the pairs still carry > 97% of the weight (99.5%;
    98.7% counting every access, which adds the runtime's start-up lines and the progress
    counters thread 0 initialises)."""
    csv = tmp_path / "m.csv"
    trace([str(bins["native", "clang", "pairs"]), "kib=256", "jobs=2", "rounds=300"], 4, csv,
             "valgrind", stdout=subprocess.DEVNULL)
    matrix = read_matrix(csv)
    assert inside(matrix, planted_mask("pairs", 4)) > 0.97
    assert significant_pairs(matrix, 0.05) == {(0, 2), (1, 3)}


@needs_valgrind
@pytest.mark.parametrize("bench, weight", [
    *((bench, "common") for bench in TSAN_INPUTS),
    # triad has no sharing inside parallel regions: no structure to agree on
    *((bench, DEFAULT_WEIGHT) for bench in TSAN_INPUTS if bench != "triad")])
def test_tracers_agree_on_the_structure(traced, bench, weight):
    """Same heavy pairs (> 1% of the weight) from tsan (gcc and clang builds) and Valgrind."""
    found = {name: significant_pairs(traced(*name, bench, weight)[0])
             for name in (("tsan", "gcc"), ("tsan", "clang"), ("valgrind", "gcc"))}
    assert len(set(map(frozenset, found.values()))) == 1, found
    a = traced("tsan", "gcc", bench, weight)[0]
    b = traced("valgrind", "gcc", bench, weight)[0]
    cosine = (a * b).sum() / np.sqrt((a * a).sum() * (b * b).sum())
    assert cosine > 0.99


def test_falseshare_lines_and_control(bins, tmp_path):
    """10 threads: counters 0-7 share a line, 8-9 the next; stride=8: no false sharing,
    only thread 0 (which zeroes and sums the counters serially) shares with each thread,
    and inside parallel regions nobody shares (the region's shared variables on the
    master's stack only: below 1e-3 of the accesses, against 1.5 counting every access)."""
    csv = tmp_path / "fs.csv"
    trace([str(bins["tsan", "gcc", "falseshare"]), "incs=1000000"], 10, csv, "tsan", "min",
             stdout=subprocess.DEVNULL)
    matrix = read_matrix(csv)
    assert inside(matrix, planted_mask("falseshare", 10)) > 0.999
    assert matrix[1:8, 8:].max() < 1e-4 * matrix.max()  # different lines: at most a few reads
    trace([str(bins["tsan", "gcc", "falseshare"]), "incs=1000000", "stride=8"], 4, csv,
             "tsan", "common", stdout=subprocess.DEVNULL)
    matrix = read_matrix(csv)
    assert matrix[1:, 1:].max() < 1e-3 * matrix.sum()
    assert inside(matrix, star(4)) > 0.99
    side = trace([str(bins["tsan", "gcc", "falseshare"]), "incs=1000000", "stride=8"], 4, csv,
                 stdout=subprocess.DEVNULL)
    assert side["weight"] == DEFAULT_WEIGHT
    assert 0 < read_matrix(csv).sum() < 1e-3 * side["accesses"]


# ------------------------------------------------------------------------------ serial phases

#: tests/data/serial_init.c: n=510 (rows of 512 doubles), 10 sweeps; 8 threads, as many as
#: the Core2 preset has cores
SERIAL_INIT = (8, ["510", "10"])


def neighbour_share(matrix: np.ndarray) -> float:
    """Fraction of the weight on the pairs |i - j| = 1."""
    n = len(matrix)
    mask = np.abs(np.subtract.outer(np.arange(n), np.arange(n))) == 1
    return inside(matrix, mask)


@pytest.fixture(scope="session")
def serial_init(tmp_path_factory):
    """Trace serial_init.c once per (tracer, cc, weight): -> (W, sidecar)."""
    out = tmp_path_factory.mktemp("serial-init")
    made = OnFirstUse(lambda key: (build_traced if key[0] == "tsan" else build_native)(
        DATA / "serial_init.c", out / "-".join(key), key[1]))
    cache: dict[tuple, tuple[np.ndarray, dict]] = {}

    def get(tracer: str, cc: str, weight: str):
        key = (tracer, cc, weight)
        if key not in cache:
            helper(tracer)
            n, args = SERIAL_INIT
            csv = out / ("-".join(key) + ".csv")
            side = trace([str(made[tracer, cc]), *args], n, csv, tracer, weight,
                         stdout=subprocess.DEVNULL)
            cache[key] = (read_matrix(csv), side)
        return cache[key]

    return get


@pytest.mark.parametrize("tracer, cc", [
    ("tsan", "gcc"), ("tsan", "clang"),
    ("valgrind", "gcc")])
def test_serial_phases_swamp_every_access_not_the_parallel_rule(serial_init, tracer, cc):
    """Counting every access, the pairs with thread 0 carry > 90% of the weight (each
    worker's block was written by the master); counting the accesses inside parallel
    regions (the default), the nearest neighbours carry > 90% and are each thread's
    heaviest partner."""
    every, _ = serial_init(tracer, cc, "common")
    assert inside(every, star(len(every))) > 0.9 and neighbour_share(every) < 0.5
    matrix, side = serial_init(tracer, cc, DEFAULT_WEIGHT)
    assert side["weight"] == DEFAULT_WEIGHT and side["count"] == "parallel"
    assert neighbour_share(matrix) > 0.9
    assert all(abs(int(np.argmax(row)) - i) == 1 for i, row in enumerate(matrix))


def test_graph_strategies_place_the_recovered_neighbours_together(serial_init):
    """Core2 (two sockets of two L2 pairs), 8 threads.  Under the default rule each graph
    strategy puts neighbours 2k, 2k+1 on the cores of one L2 (the most a chain can get),
    and all but lp-scatter (which spreads the pairs) threads 0-3 on one socket; J tells
    scatter from the best placement by a factor > 1.5.  Counting every access, the star
    around thread 0 swamps J: scatter is within 5% of the best."""
    topo = load(preset("core2"))
    n = SERIAL_INIT[0]
    for weight, spread in (("common", (1.0, 1.05)), (DEFAULT_WEIGHT, (1.5, np.inf))):
        matrix = serial_init("tsan", "gcc", weight)[0]
        best = make_placement(topo, "hierarchical", n, matrix=matrix).J
        scatter = make_placement(topo, "scatter", n, matrix=matrix).J
        assert spread[0] < scatter / best < spread[1], (weight, scatter, best)
    matrix = serial_init("tsan", "gcc", DEFAULT_WEIGHT)[0]
    for strategy in registry.GRAPH:
        record = make_placement(topo, strategy, n, matrix=matrix)
        level = shared_levels(topo, record.pus)
        assert all(level[i][i + 1] == "L2Cache" for i in range(0, n, 2)), (strategy, level)
        if strategy != "lp-scatter":
            assert level[1][2] == level[5][6] == "Package", (strategy, level)


# ------------------------------------------------------------------------------ C++ and Fortran

@pytest.mark.parametrize("compiler, source, extra", [
    ("g++", "pairs_cxx.cpp", ()),
    ("clang++", "pairs_cxx.cpp", ("-std=c++17",)),
    ("gfortran", "pairs_f90.f90", ()),
    pytest.param("flang", "pairs_f90.f90", (), marks=pytest.mark.skip(
        reason="Fortran with clang needs flang, which Debian 12 does not ship with clang 14")),
])
def test_cxx_and_fortran_with_the_tsan_runtime(tmp_path, compiler, source, extra):
    exe = build_traced(DATA / source, tmp_path / Path(source).stem, compiler, extra)
    csv = tmp_path / "m.csv"
    proc_out = tmp_path / "stdout"
    with proc_out.open("w") as out:
        side = trace([str(exe), "300"], 4, csv, stdout=out)
    assert re.match(r"checksum: -?\d+$", proc_out.read_text().strip())
    matrix = read_matrix(csv)
    assert side["threads"] == 4 and side["shared_lines"] >= 64
    assert inside(matrix, planted_mask("pairs", 4)) > 0.99


# ------------------------------------------------------------------------------ CMake and make

#: A C++ project as users ship it, with a CMake project and a makefile. CMake puts
#: CMAKE_CXX_FLAGS (-fsanitize=thread) on its link line and CMAKE_EXE_LINKER_FLAGS before
#: the objects; the makefile links with its compile flags, LDFLAGS before the objects too.
CMAKE_LISTS = """cmake_minimum_required(VERSION 3.13)
project(pairs CXX)
find_package(OpenMP REQUIRED)
add_executable(pairs pairs_cxx.cpp)
target_link_libraries(pairs PRIVATE OpenMP::OpenMP_CXX)
"""
MAKEFILE = """CXXFLAGS ?= -O2 -fopenmp
LDFLAGS ?= -fopenmp
pairs: pairs_cxx.o
\t$(CXX) $(CXXFLAGS) $(LDFLAGS) -o $@ $^
pairs_cxx.o: pairs_cxx.cpp
\t$(CXX) $(CXXFLAGS) -c -o $@ $<
"""


def cxx_project(folder: Path) -> Path:
    """tests/data/pairs_cxx.cpp with a CMakeLists.txt and a Makefile, in ``folder``."""
    folder.mkdir()
    shutil.copy(DATA / "pairs_cxx.cpp", folder)
    (folder / "CMakeLists.txt").write_text(CMAKE_LISTS)
    (folder / "Makefile").write_text(MAKEFILE)
    return folder


@pytest.mark.slow
@requires("g++")
@pytest.mark.parametrize("tool", [pytest.param("cmake", marks=requires("cmake")), "make"])
def test_programs_built_by_cmake_or_a_makefile_trace_with_the_printed_flags(tmp_path, tool):
    """The flags of --print-flags passed as a user passes flags to CMake or make: the link
    line holds -fsanitize=thread and the link flags come before the objects; the program
    is linked with the runtime alone and traced (the planted pairs found)."""
    cflags, ldflags = tb.traced_build_flags()
    src = cxx_project(tmp_path / "project")
    if tool == "cmake":
        steps = [["cmake", "-S", str(src), "-B", str(src / "build"),
                  f"-DCMAKE_CXX_FLAGS=-O2 {cflags}", f"-DCMAKE_EXE_LINKER_FLAGS={ldflags}"],
                 ["cmake", "--build", str(src / "build"), "--verbose"]]
        exe = src / "build" / "pairs"
    else:
        steps = [["make", "-C", str(src), f"CXXFLAGS=-O2 {cflags}", f"LDFLAGS={ldflags}"]]
        exe = src / "pairs"
    for step in steps:
        proc = subprocess.run(step, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    [link] = [line for line in proc.stdout.splitlines() if re.search(r" -o (\S*/)?pairs ", line)]
    assert link.index("-fsanitize=thread") < link.index(ldflags) < link.index("pairs_cxx.cpp.o"
                                                                             if tool == "cmake"
                                                                             else "pairs_cxx.o")
    assert not [name for name in needed_libraries(exe) if name.startswith("libtsan")]
    side = trace([str(exe), "300"], 4, tmp_path / "m.csv", stdout=subprocess.DEVNULL)
    assert side["threads"] == 4 and side["shared_lines"] >= 64
    assert inside(read_matrix(tmp_path / "m.csv"), planted_mask("pairs", 4)) > 0.99


@pytest.mark.slow
@pytest.mark.parametrize("compiler, flags, found", [
    ("g++", ["-fsanitize=thread"],
     r"linked with libtsan\.so\.\d+, no pinbench tracer symbols \(pinbench_tsan_runtime\)"),
    ("clang++", ["-fsanitize=thread", "-std=c++17"],
     r"the compiler's ThreadSanitizer runtime built in, no pinbench tracer symbols"),
    ("g++", ["-s"], r": no pinbench tracer symbols \(pinbench_tsan_runtime\);"),
])
def test_a_binary_the_tsan_tracer_cannot_use_is_refused_naming_what_it_holds(
        tmp_path, compiler, flags, found):
    """Built with the compiler's own ThreadSanitizer (the sanitizer's runtime, not pinbench's),
    or not for tracing at all (stripped): one line saying what the binary holds."""
    need(compiler)
    exe = tmp_path / "pairs"
    subprocess.run([compiler, "-O1", "-fopenmp", *flags, str(DATA / "pairs_cxx.cpp"), "-o",
                    str(exe)], check=True)
    proc = subprocess.run([PY, "-m", "pinbench", "trace", "--threads", "2", "--out", "m.csv",
                           "--", str(exe)], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith(f"pinbench trace: error: {exe} cannot be traced by the tsan "
                                  "tracer: ")
    assert re.search(found, proc.stderr), proc.stderr
    assert not (tmp_path / "m.csv").exists()


@pytest.mark.slow
@requires("g++")
def test_a_program_compiled_and_linked_in_one_command_is_refused_as_not_instrumented(tmp_path):
    """The link flags' -fno-sanitize=thread, on a command that also compiles, switches the
    instrumentation off: the binary holds the runtime (so no ELF check can tell), which is
    never called; the tracer says so in one line instead of blaming the parallel regions."""
    cflags, ldflags = tb.traced_build_flags()
    exe = tmp_path / "pairs"
    subprocess.run(["sh", "-c", f"g++ -O1 {cflags} {DATA / 'pairs_cxx.cpp'} -o {exe} {ldflags}"],
                   check=True)
    proc = subprocess.run([PY, "-m", "pinbench", "trace", "--threads", "2", "--out", "m.csv",
                           "--", str(exe)], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.splitlines() == [
        f"pinbench trace: error: {exe} ran no code compiled with -fsanitize=thread (the tsan "
        "tracer's runtime is linked in but was never called): compile it with the flags of "
        "--print-flags, apart from the link, whose -fno-sanitize=thread switches the "
        "instrumentation off on a command that also compiles"], proc.stderr
    subprocess.run(["sh", "-c", f"g++ -O1 {cflags} -c {DATA / 'pairs_cxx.cpp'} -o {exe}.o && "
                    f"g++ {exe}.o -o {exe} {ldflags}"], check=True)
    proc = subprocess.run([PY, "-m", "pinbench", "trace", "--threads", "2", "--out", "m.csv",
                           "--", str(exe)], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "m.json").read_text())["instrumented"] is True


def test_needed_libraries_are_read_from_the_dynamic_section(tmp_path):
    """As ``readelf -d`` lists them; None for what is no ELF program."""
    readelf = subprocess.run(["readelf", "-d", "/bin/sh"], capture_output=True, text=True,
                             check=True).stdout
    assert needed_libraries("/bin/sh") == re.findall(r"\(NEEDED\).*\[(.+)\]", readelf)
    (tmp_path / "script").write_text("#!/bin/sh\n")
    assert needed_libraries(tmp_path / "script") is None
    assert needed_libraries(tmp_path / "missing") is None


# ------------------------------------------------------------------------------ lackey

def lackey_counts(log: Path, shift: int = 6) -> dict[int, dict[int, int]]:
    """Per-(line, thread) counts from lackey's --trace-mem output (L/S: 1, M: load+store)
    and --trace-sched (the thread that acquires the lock runs next; Valgrind tid 1 = 0)."""
    counts: dict[int, collections.Counter] = collections.defaultdict(collections.Counter)
    tid = 0
    pattern = re.compile(r"^ ([LSM]) ([0-9a-f]+),(\d+)$|SCHED\[(\d+)\]:\s+acquired lock", re.M)
    for m in pattern.finditer(log.read_text(errors="replace")):
        if m.group(4):
            tid = int(m.group(4)) - 1
            continue
        addr, size = int(m.group(2), 16), max(int(m.group(3)), 1)
        n = 2 if m.group(1) == "M" else 1
        for line in range((addr >> shift), ((addr + size - 1) >> shift) + 1):
            counts[line][tid] += n
    return {line: dict(c) for line, c in counts.items()}


@pytest.mark.slow
@needs_valgrind
def test_valgrind_tool_agrees_with_lackey(tmp_path):
    """Same program, same environment (so the same stack layout), --fair-sched=yes in both:
    both tools see every instruction of the client (program, libc, libgomp, loader) alike,
    and the tool's counts per line and thread are lackey's.

    The program is one whose threads never wait for each other (tests/data/pairs_nowait.c),
    run with OMP_WAIT_POLICY=passive (libgomp's waits in the kernel, not spinning) and
    LD_BIND_NOW=1 (no lazy symbol binding by whichever thread calls first), so what each
    thread does is the same in both runs whatever the schedule: only the roles in the
    runtime's barriers at the region's start and end (which thread arrives last and wakes
    the others) differ, a few accesses. A program whose threads spin while waiting would be
    counted as the schedule went (3% apart on a loaded machine).
    """
    n = 4
    program = [str(compile_c(DATA / "pairs_nowait.c", tmp_path / "pairs_nowait")), "50"]
    csv = tmp_path / "m.csv"
    env = dict(os.environ, OMP_WAIT_POLICY="passive", LD_BIND_NOW="1")
    side = trace(program, n, csv, "valgrind", "min", env=env, stdout=subprocess.DEVNULL,
                 raw=tmp_path / "raw.csv", tracer_options=["--fair-sched=yes"])
    ours = read_raw(tmp_path / "raw.csv")
    log = tmp_path / "lackey.log"
    proc = subprocess.run(["valgrind", "--fair-sched=yes", "--tool=lackey", "--trace-mem=yes",
                           "--trace-sched=yes", f"--log-file={log}", *program],
                          env=env | side["environment"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.returncode == 0, proc.stderr
    theirs = lackey_counts(log)
    accesses = sum(sum(per.values()) for per in theirs.values())
    assert accesses > 300_000
    # the same (line, thread) counts but for the barriers' roles: a few accesses each (0 to
    # 38 in 20 runs, idle and at load 4.7; of about 400,000)
    differ = sum(abs(ours.get(line, {}).get(t, 0) - theirs.get(line, {}).get(t, 0))
                 for line in ours.keys() | theirs.keys() for t in range(n))
    assert differ <= 256, differ
    for weight in ("min", "common"):
        mine, ref = weights_reference(ours, n, weight), weights_reference(theirs, n, weight)
        assert np.abs(mine - ref).sum() <= 2 * (n - 1) * differ, (weight, mine, ref)
        assert significant_pairs(mine, 0.05) == significant_pairs(ref, 0.05) == {(0, 2), (1, 3)}
    # the tool's own matrix is the one its raw counts give
    assert np.array_equal(read_matrix(csv), weights_reference(ours, n, "min"))


# ------------------------------------------------------------------------------ weights by hand

#: tests/data/weights.c, worked out by hand (see its header comment).
#: 64-byte lines: A {0: 3, 1: 5}, B {0: 2, 1: 2, 2: 4}, C {1: 2, 2: 7}, D {1: 1}
#: 128-byte lines: AB {0: 5, 1: 7, 2: 4}, CD {1: 2, 2: 7}
HAND = {
    (64, "common"): [[0, 12, 6], [12, 0, 15], [6, 15, 0]],
    (64, "min"): [[0, 5, 2], [5, 0, 4], [2, 4, 0]],
    # E[1][0] = 5 (A) + 1 (B), E[2][1] = 4, E[2][0] = 1 (B), E[1][2] = 1 (B) + 2 (C)
    (64, "events"): [[0, 6, 1], [6, 0, 7], [1, 7, 0]],
    (128, "common"): [[0, 12, 9], [12, 0, 20], [9, 20, 0]],
    (128, "min"): [[0, 5, 4], [5, 0, 6], [4, 6, 0]],
    # AB: t0 x3; t1 x5 -> E[1][0] 5; t0 x2 -> E[0][1] 2; t1 -> E[1][0] 6; t2 x4 -> E[2][1] 4,
    # E[2][0] 1; t1 (buf+124) -> E[1][2] 1; CD: t2 x7; t1 (buf+124, buf+188) -> E[1][2] 3
    (128, "events"): [[0, 8, 1], [8, 0, 7], [1, 7, 0]],
}
HAND_STATS = {64: (26, 4, 3), 128: (25, 2, 2)}  # accesses, distinct lines, shared lines
HAND_COUNTS = {
    64: {0: {0: 3, 1: 5}, 1: {0: 2, 1: 2, 2: 4}, 2: {1: 2, 2: 7}, 3: {1: 1}},
    128: {0: {0: 5, 1: 7, 2: 4}, 1: {1: 2, 2: 7}},
}
HAND_SEQUENCE = {  # (thread, line) in the order weights.c makes them
    64: [(0, 0)] * 3 + [(1, 0)] * 5 + [(0, 1)] * 2 + [(1, 1)] + [(2, 1)] * 4 + [(2, 2)] * 7
        + [(1, 1), (1, 2), (1, 2), (1, 3)],
    128: [(0, 0)] * 3 + [(1, 0)] * 5 + [(0, 0)] * 2 + [(1, 0)] + [(2, 0)] * 4 + [(2, 1)] * 7
         + [(1, 0), (1, 1), (1, 1)],
}


@pytest.fixture(scope="module")
def weights_bin(tmp_path_factory) -> Path:
    return link_with_runtime(DATA / "weights.c", tmp_path_factory.mktemp("weights") / "weights")


@pytest.mark.parametrize("line_bytes, weight", list(HAND))
def test_weights_by_hand(weights_bin, tmp_path, line_bytes, weight):
    csv = tmp_path / "w.csv"
    side = trace([str(weights_bin)], 3, csv, "tsan", weight, line_bytes, raw=tmp_path / "raw.csv")
    assert read_matrix(csv).tolist() == HAND[line_bytes, weight]
    assert (side["accesses"], side["distinct_lines"], side["shared_lines"]) == HAND_STATS[line_bytes]
    assert side["line_bytes"] == line_bytes and side["weight"] == weight
    # the raw counts, relative to the first line
    raw = read_raw(tmp_path / "raw.csv")
    first = min(raw)
    assert {line - first: per for line, per in raw.items()} == HAND_COUNTS[line_bytes]
    # the sidecar is JSON, the same path with .json, with its version
    written = json.loads(csv.with_suffix(".json").read_text())
    assert written["weight_definition"] and written["format"] == CURRENT["sidecar"]


def streams_expected(base: int) -> dict[int, dict[int, int]]:
    """tests/data/streams.c's counts per (64-byte line index, thread), from its constants."""
    run, run_lines, streams, words, rounds, alt = 5, 100, 6, 4096, 3, 7
    block = run_lines * 64 + streams * words * 8 + 2 * 4096
    counts: dict[int, dict[int, int]] = collections.defaultdict(dict)
    for t in (0, 1):
        first = (base + t * block) // 64
        for line in range(run_lines):  # runs, then the straddling reads at the boundaries
            counts[first + line][t] = 8 * run + (line > 0) + (line < run_lines - 1)
        stream_lines = streams * words * 8 // 64
        for line in range(stream_lines):
            counts[first + run_lines + line][t] = 8 * rounds
        pair = first + run_lines + stream_lines
        counts[pair][t] = counts[pair + 64][t] = alt
    return counts


@pytest.fixture(scope="module")
def streams_bin(tmp_path_factory) -> Path:
    return link_with_runtime(DATA / "streams.c", tmp_path_factory.mktemp("streams") / "streams")


@pytest.mark.parametrize("weight", ["parallel-common", "common", "parallel-events"])
def test_same_line_runs_and_interleaved_streams_counted_exactly(streams_bin, tmp_path, weight):
    """Runs of accesses to one line, 6 interleaved streams over many table pages,
    straddling reads and two lines read in turn: every (line, thread) count exact, under
    the access path (parallel-common), the all-accesses rule and the events slow path."""
    csv, raw = tmp_path / "s.csv", tmp_path / "raw.csv"
    env = dict(os.environ, OMP_NUM_THREADS="2", PINBENCH_TRACE_OUT=str(csv),
               PINBENCH_TRACE_RAW=str(raw), PINBENCH_TRACE_WEIGHT=weight)
    proc = subprocess.run([str(streams_bin)], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    base = int(re.search(r"^base (\d+)$", proc.stdout, re.M).group(1))
    expected = streams_expected(base)
    got = read_raw(raw)
    assert {line: got.get(line, {}) for line in expected} == expected
    if weight.startswith("parallel-"):  # nothing else is counted inside the region
        assert set(got) == set(expected)
    assert read_matrix(csv).shape == (2, 2)


#: tests/data/count_rule.c: the threads that read its line, in order, counting every
#: access and counting only those inside active parallel regions (see its header comment)
COUNT_RULE_SEQUENCE = {"all": [0] * 8 + [1] * 2 + [2] * 3 + [0] * 7,
                       "parallel": [0] + [1] * 2 + [2] * 3}


@pytest.fixture(scope="module")
def count_rule_bin(tmp_path_factory) -> Path:
    return link_with_runtime(DATA / "count_rule.c",
                             tmp_path_factory.mktemp("count-rule") / "count_rule")


@pytest.mark.parametrize("weight", WEIGHT_DEFINITIONS)
def test_count_rule_by_hand(count_rule_bin, tmp_path, weight):
    """Serial code, a region of one thread and the serial code after a region (in the
    function that ran it) count for common, min, events only; the region's accesses,
    in a function it calls too, for all."""
    sequence = COUNT_RULE_SEQUENCE[counted(weight)]
    kind = weight.removeprefix("parallel-")
    expected = (events_reference([(t, 0) for t in sequence], 3) if kind == "events"
                else weights_reference({0: collections.Counter(sequence)}, 3, kind))
    csv = tmp_path / "c.csv"
    side = trace([str(count_rule_bin)], 3, csv, "tsan", weight)
    assert read_matrix(csv).tolist() == expected.tolist()
    assert side["accesses"] == len(sequence) and side["count"] == counted(weight)


@pytest.mark.parametrize("line_bytes", [64, 128])
def test_python_reference_weights_by_hand(line_bytes):
    """The references used with lackey give the hand-worked matrices too."""
    for weight in ("common", "min"):
        got = weights_reference(HAND_COUNTS[line_bytes], 3, weight)
        assert got.tolist() == HAND[line_bytes, weight]
    assert events_reference(HAND_SEQUENCE[line_bytes], 3).tolist() == HAND[line_bytes, "events"]


@needs_valgrind
@requires("g++")
def test_valgrind_events_match_the_sequential_definition(tmp_path):
    """Valgrind runs one thread at a time, so its events equal numalize's definition applied
    to lackey-like sequences; checked here on the C++ test program's planted pairs."""
    exe = tmp_path / "pairs_cxx"
    proc = subprocess.run(["g++", "-O2", "-fopenmp", str(DATA / "pairs_cxx.cpp"), "-o", str(exe)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    csv = tmp_path / "m.csv"
    trace([str(exe), "300"], 4, csv, "valgrind", "events", stdout=subprocess.DEVNULL)
    assert inside(read_matrix(csv), planted_mask("pairs", 4)) > 0.99


# ------------------------------------------------------------------------------ command line

def test_print_flags_from_another_directory(tmp_path):
    for cmd in ([PY, "-m", "pinbench", "trace", "--print-flags"],
                [str(Path(PY).parent / "pinbench"), "trace", "--print-flags"]):
        proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.splitlines()
        assert len(lines) == 2 and lines[0].startswith("CFLAGS=") and lines[1].startswith("LDFLAGS=")
    cflags, ldflags = lines[0][len("CFLAGS="):], lines[1][len("LDFLAGS="):]
    assert "-fsanitize=thread" in cflags and "-fsanitize" not in ldflags
    assert str(native.built("tsan")) in ldflags
    (tmp_path / "x.c").write_text(
        "#include <omp.h>\n#include <stdio.h>\nstatic long a[4096];\n"
        "int main(void) {\n#pragma omp parallel\n"
        "  for (int r = 0; r < 100; r++) for (int i = 0; i < 4096; i++) a[i] += r;\n"
        "  printf(\"%ld\\n\", a[7]); return 0; }\n")
    script = f"cc {cflags} -c x.c && cc x.o {ldflags} -o x"
    proc = subprocess.run(["sh", "-c", script], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    proc = subprocess.run([PY, "-m", "pinbench", "trace", "--threads", "2", "--out", "m.csv", "--",
                           "./x"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    matrix = read_matrix(tmp_path / "m.csv")
    assert matrix.shape == (2, 2) and matrix[0, 1] > 2 * 100 * 4096  # all of a[] is shared
    assert json.loads((tmp_path / "m.json").read_text())["tracer"] == "tsan"


@pytest.mark.parametrize("args, message", [
    ([], "give --threads"),
    (["--threads", "2", "--out", "m.csv"], "give --threads"),
    (["--threads", "x", "--out", "m.csv", "--", "true"], "invalid int value"),
    (["--threads", "0", "--out", "m.csv", "--", "true"], "at least 1"),
    (["--tracer", "gdb", "--threads", "2", "--out", "m.csv", "--", "true"], "invalid choice"),
    (["--weight", "max", "--threads", "2", "--out", "m.csv", "--", "true"], "invalid choice"),
    (["--line-bytes", "48", "--threads", "2", "--out", "m.csv", "--", "true"], "power of two"),
    (["--print-flags", "--threads", "2"], "takes no other"),
    (["--threads", "2", "--out", "m.csv", "--", "./no-such-program"], "program not found"),
    (["--threads", "2", "--out", "m.csv", "--", "/bin/true"], "no pinbench tracer symbols"),
    (["--tracer", "pin", "--threads", "2", "--out", "m.csv", "--", "/bin/true"], "PIN_ROOT"),
])
def test_bad_usage_exits_2_with_one_line(tmp_path, args, message):
    env = {k: v for k, v in os.environ.items() if k != "PIN_ROOT"}
    proc = subprocess.run([PY, "-m", "pinbench", "trace", *args], cwd=tmp_path,
                          env=env, capture_output=True, text=True)
    assert proc.returncode == 2
    assert len(proc.stderr.splitlines()) == 1 and message in proc.stderr, proc.stderr
    assert not (tmp_path / "m.csv").exists()


@needs_valgrind
def test_failing_program_exits_2_with_one_line(tmp_path):
    proc = subprocess.run([PY, "-m", "pinbench", "trace", "--tracer", "valgrind", "--threads", "2",
                           "--out", "m.csv", "--", "/bin/false"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "pinbench trace: error: /bin/false exited with status 1 under the valgrind tracer"]


@needs_valgrind
def test_parallel_rule_refuses_a_program_without_parallel_regions(tmp_path):
    """Nothing counted (no OpenMP fork call seen): one line, status 2, no matrix of zeros
    passed on; counting every access, the same run gives a matrix."""
    cmd = [PY, "-m", "pinbench", "trace", "--tracer", "valgrind", "--threads", "2", "--out",
           "m.csv", "--", "/bin/true"]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "pinbench trace: error: /bin/true made no access inside an OpenMP parallel "
        "region that the valgrind tracer recognised; weight 'common' counts every access"]
    proc = subprocess.run([*cmd[:4], "--weight", "common", *cmd[4:]], cwd=tmp_path,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "m.json").read_text())["count"] == "all"


def test_runtime_rejects_bad_environment(weights_bin):
    proc = subprocess.run([str(weights_bin)], capture_output=True, text=True,
                          env=dict(os.environ, OMP_NUM_THREADS="3", PINBENCH_TRACE_OUT="/tmp/x.csv",
                                   PINBENCH_TRACE_WEIGHT="max"))
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "pinbench-tsan: PINBENCH_TRACE_WEIGHT must be [parallel-]common, [parallel-]min or "
        "[parallel-]events, not max"]


def test_runtime_without_output_path_traces_nothing(weights_bin, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PINBENCH_TRACE")}
    proc = subprocess.run([str(weights_bin)], cwd=tmp_path, capture_output=True, text=True,
                          env=dict(env, OMP_NUM_THREADS="3"))
    assert proc.returncode == 0 and not list(tmp_path.iterdir())


def test_campaigns_trace_with_the_tracers_weights_and_default():
    """the campaign schema's tracing.weight offers exactly the weights trace() takes, and
    a campaign that names none gets trace()'s default, the parallel-only rule."""
    config = {"campaign": "c", "machines": {"m": {"topology": "core2"}},
              "benchmarks": {"b": {"source": "tests/data/spin.c"}}}
    config, _ = load_campaign(config, ROOT)
    assert config["tracing"]["weight"] == DEFAULT_WEIGHT == "parallel-common"
    schema = yaml.safe_load((ROOT / "pinbench" / "workflow" / "schemas" / "campaign.schema.yaml").read_text())
    assert schema["properties"]["tracing"]["properties"]["weight"]["enum"] == list(
        WEIGHT_DEFINITIONS)


def test_the_tracers_are_the_helpers_pinbench_setup_built():
    assert tb.built_tracer("tsan") == native.built("tsan")
    with pytest.raises(tb.TraceError, match="unknown tracer"):
        tb.built_tracer("dtrace")


# ------------------------------------------------------------------------------ Pin

@pytest.mark.skipif(not os.environ.get("PIN_ROOT"), reason="PIN_ROOT is not set (no Intel Pin kit)")
def test_pin_tool_recovers_pairs(bins, tmp_path):
    tool = tb.built_tracer("pin")
    assert tool.is_file()
    n, args = VALGRIND_INPUTS["pairs"]
    csv = tmp_path / "m.csv"
    side = trace([str(bins["native", "gcc", "pairs"]), *args], n, csv, "pin",
                    stdout=subprocess.DEVNULL)
    assert side["tracer"] == "pin"
    assert inside(read_matrix(csv), planted_mask("pairs", n)) > 0.99
