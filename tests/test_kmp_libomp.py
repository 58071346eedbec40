"""compact and scatter against LLVM libomp's own KMP_AFFINITY placements on faked machines.

libomp (Debian's, clang 14) reads the machine from a fake /proc/cpuinfo
(``KMP_TOPOLOGY_METHOD=cpuinfo``, ``KMP_CPUINFO_FILE``: "processor", "physical id",
"core id", "thread id") and keeps only the OS procs of its affinity mask;
tests/data/fake_mask.c, preloaded, gives it the mask and processor count of the
faked machine. With ``KMP_AFFINITY=verbose,granularity=fine,compact|scatter`` each
thread prints the OS proc it is bound to. pinbench gets the same machine as an hwloc
synthetic string, with the same allowed PUs (``lstopo --allow``). The cpuinfo file is
written from hwloc-calc's listing of that machine, its records shuffled and its core
ids sparse, as real ones are (libomp sorts them).

libomp 14's cpuinfo parser knows three levels: a "node_<n> id" level of more than one
object crashes it (``__kmp_affinity_create_cpuinfo_map`` counts the level but never
fills it). So the faked machines have three levels that split PUs; any three hwloc
levels can play them (the L2 caches of a Core2 as libomp's "cores", its cores as
"threads").
"""
import random
import re
import subprocess
from pathlib import Path

import pytest
from optional_tools import requires

from pinbench import native
from pinbench.place.independent import compact, scatter
from pinbench.topology import Topology, load

pytestmark = requires("clang")
BOUND = re.compile(r"KMP_AFFINITY: pid \d+ tid \d+ thread (\d+) bound to OS proc set (\d+)$")


def linux_smt(cores: int, threads: int) -> str:
    """PU indexes of Linux numbering: thread t of core c is PU c + t * cores (tree order)."""
    return ",".join(str(c + t * cores) for c in range(cores) for t in range(threads))


#: (hwloc synthetic string, the three hwloc levels libomp sees as socket, core, thread,
#:  allowed PUs or None for all).
MACHINES = [
    ("Package:3 Core:2 PU:1", "package.core.pu", None),
    ("Package:3 Core:2 PU:1", "package.core.pu", {0, 2, 3, 5}),
    ("Package:2 Core:2 PU:2", "package.core.pu", {0, 1, 2, 5, 7}),
    (f"Package:2 Core:4 PU:2(indexes={linux_smt(8, 2)})", "package.core.pu", None),
    (f"Package:2 Core:4 PU:2(indexes={linux_smt(8, 2)})", "package.core.pu",
     {0, 1, 2, 3, 8, 9, 12, 13, 14}),
    ("Package:2 Core:4 PU:1(indexes=Package:Core)", "package.core.pu", {1, 2, 3, 4, 5, 6, 7}),
    ("Package:2 Core:4 PU:1(indexes=Package:Core)", "package.core.pu", {1, 2, 4, 5, 7}),
    ("Package:2 L2Cache:2 Core:2 PU:1(indexes=Package:L2Cache)", "package.l2cache.pu", None),
    ("Package:2 L2Cache:2 Core:2 PU:1(indexes=Package:L2Cache)", "package.l2cache.pu",
     {0, 1, 4, 5, 6}),
    ("Package:4 Core:4 PU:4", "package.core.pu", None),
    ("Package:4 Core:4 PU:4", "package.core.pu", set(range(0, 64, 3)) | {1, 2, 62, 63}),
    ("Package:2 Core:3 PU:2(indexes=0,1,8,9,16,17,80,81,88,89,96,97)", "package.core.pu",
     {0, 8, 9, 17, 81, 88, 96}),
] + [("Package:3 Core:3 PU:2", "package.core.pu", set(random.Random(seed).sample(range(18), k)))
     for seed, k in enumerate((3, 5, 8, 11, 14, 17))]


def run(*args: str) -> str:
    return subprocess.run(args, capture_output=True, text=True, check=True).stdout


def hwloc_pus(spec: str) -> list[int]:
    """The machine's PUs (OS indexes) in hwloc's logical order."""
    return [int(pu) for pu in run("hwloc-calc", "-i", spec, "--po", "-I", "pu", "all").split(",")]


def cpuinfo(spec: str, levels: str, seed: int) -> str:
    """A /proc/cpuinfo of the machine: one record per PU, ids from hwloc-calc's listing."""
    pus = hwloc_pus(spec)
    paths = run("hwloc-calc", "-i", spec, "-H", levels, "all").split()
    assert len(paths) == len(pus)  # one PU below each object of the lowest level
    records = []
    for pu, path in zip(pus, paths):
        package, core, thread = (int(part.split(":")[1]) for part in path.split("."))
        records.append(f"processor\t: {pu}\nphysical id\t: {package}\n"
                       f"core id\t\t: {core + 5 * (core // 3)}\nthread id\t: {thread}\n")
    random.Random(seed).shuffle(records)
    return "\n".join(records) + "\n"


def libomp_placement(binary: Path, shim: Path, info: Path, kind: str, threads: int,
                     allowed: set[int], procs: int) -> list[int]:
    """The OS proc of each OpenMP thread, as libomp's KMP_AFFINITY verbose output says."""
    env = {"PATH": "/usr/bin:/bin", "LD_PRELOAD": str(shim), "KMP_TOPOLOGY_METHOD": "cpuinfo",
           "KMP_CPUINFO_FILE": str(info), "KMP_AFFINITY": f"verbose,granularity=fine,{kind}",
           "OMP_NUM_THREADS": str(threads), "PINBENCH_FAKE_CPUS": ",".join(map(str, allowed)),
           "PINBENCH_FAKE_NPROCS": str(procs)}
    proc = subprocess.run([str(binary), "0"], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert f"KMP_AFFINITY: {len(allowed)} available OS procs" in proc.stderr, proc.stderr
    bound = sorted((int(m[1]), int(m[2])) for line in proc.stderr.splitlines()
                   if (m := BOUND.search(line)))
    assert len(bound) == threads, proc.stderr
    return [cpu for _, cpu in bound]  # thread i has the i-th global thread id


@pytest.fixture(scope="module")
def shim(fake_mask):
    try:
        native.find_libomp()
    except native.Unavailable as exc:
        pytest.skip(str(exc))
    return fake_mask


def faked_machine(spec: str, allowed: set[int] | None, folder: Path
                  ) -> tuple[Topology, set[int], list[int]]:
    """The machine ``spec`` with only ``allowed`` PUs (None: all) as pinbench loads it, its
    allowed PUs, and every PU of it in hwloc's order."""
    every = hwloc_pus(spec)
    allowed = set(every) if allowed is None else allowed
    cpuset = run("hwloc-calc", "-i", spec, "--pi", *[f"pu:{pu}" for pu in allowed]).strip()
    xml = folder / "machine.xml"
    xml.write_text(run("lstopo-no-graphics", "-i", spec, "--allow", cpuset, "--of", "xml", "-"))
    return load(str(xml)), allowed, every


@pytest.mark.parametrize("index", range(len(MACHINES)),
                         ids=[f"{s} {sorted(a) if a else 'all'}" for s, _, a in MACHINES])
def test_compact_and_scatter_equal_libomps(tmp_path, shim, spin_binaries, index):
    spec, levels, allowed = MACHINES[index]
    topo, allowed, every = faked_machine(spec, allowed, tmp_path)
    assert set(topo.placeable) == allowed
    info = tmp_path / "cpuinfo"
    info.write_text(cpuinfo(spec, levels, index))
    n = len(allowed)
    for kind, ours in (("compact", compact), ("scatter", scatter)):
        for threads in sorted({n // 2 + 1, n}):
            assert libomp_placement(spin_binaries["clang"], shim, info, kind, threads, allowed,
                                    max(every) + 1) == ours(topo, threads), (kind, threads)
