"""The runtimes' binding policies (pinbench.place.policies) against the real runtimes on faked
machines: GCC's libgomp reads a faked /sys/devices/system/cpu (bind-mounted in a private mount
namespace), LLVM's libomp a faked /proc/cpuinfo (as tests/test_kmp_libomp.py); both get the
faked machine's CPUs from tests/data/fake_mask.c, bind nothing, and report each thread's place
through OMP_DISPLAY_AFFINITY."""
from __future__ import annotations

import csv
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import needs_two_cpus, run_campaign
from optional_tools import COMPILERS, requires
from test_kmp_libomp import cpuinfo, faked_machine, linux_smt

from pinbench.measure.verify import parse_cpu_list, verify
from pinbench.place.domains import PlacementError
from pinbench.place.policies import NAMES, assignment, predict
from pinbench.results.placements import read_placement
from pinbench.topology import Node, load, pus_below, subtree

#: (hwloc synthetic string, the hwloc levels libomp reads as socket, core, thread, allowed PUs).
MACHINES = [
    ("Package:2 Core:4 PU:2", "package.core.pu", None),
    (f"Package:2 Core:4 PU:2(indexes={linux_smt(8, 2)})", "package.core.pu", None),
    (f"Package:2 Core:3 PU:2(indexes={linux_smt(6, 2)})", "package.core.pu", None),
    ("Package:2 Core:4 PU:1(indexes=Package:Core)", "package.core.pu", None),
    ("Package:3 Core:2 PU:2", "package.core.pu", {0, 1, 2, 4, 5, 7, 8, 9, 11}),
    (f"Package:2 Core:4 PU:2(indexes={linux_smt(8, 2)})", "package.core.pu",
     {0, 1, 2, 3, 8, 9, 12, 13, 14}),
]
FORMAT = "pinbench-policy %n %A"


def fake_sysfs(topo, root: Path) -> Path:
    """/sys/devices/system/cpu of the whole machine, as libgomp reads it."""
    def group(node: Node, kind: str) -> list[int]:
        while node.parent is not None and node.type != kind:
            node = node.parent
        return pus_below(node)

    pus = {n.os_index: n for n in subtree(topo.whole) if n.type == "PU"}
    for pu, node in pus.items():
        topology = root / f"cpu{pu}" / "topology"
        topology.mkdir(parents=True)
        (topology / "thread_siblings_list").write_text(
            ",".join(map(str, sorted(group(node, "Core")))) + "\n")
        (topology / "core_siblings_list").write_text(
            ",".join(map(str, sorted(group(node, "Package")))) + "\n")
    every = ",".join(map(str, sorted(pus)))
    for name in ("online", "possible", "present"):
        (root / name).write_text(every + "\n")
    return root


def reported(output: str) -> list[list[int]]:
    """Each thread's CPUs, as the runtime's affinity display says, in thread order."""
    seen = {}
    for line in output.splitlines():
        if line.startswith("pinbench-policy "):
            _, thread, cpus = line.split()
            seen[int(thread)] = sorted(parse_cpu_list(cpus))
    return [seen[t] for t in sorted(seen)]


def _env(shim: Path, allowed: set[int], procs: int, policy: str, threads: int) -> dict:
    bind, _, places = policy.partition("-")
    return {"PATH": "/usr/bin:/bin", "LD_PRELOAD": str(shim),
            "PINBENCH_FAKE_CPUS": ",".join(map(str, sorted(allowed))),
            "PINBENCH_FAKE_NPROCS": str(procs), "OMP_PROC_BIND": bind, "OMP_PLACES": places,
            "OMP_DISPLAY_AFFINITY": "TRUE", "OMP_AFFINITY_FORMAT": FORMAT,
            "OMP_NUM_THREADS": str(threads)}


@pytest.mark.slow
@requires("unshare", "clang")
@pytest.mark.parametrize("index", range(len(MACHINES)),
                         ids=[f"{s} {sorted(a) if a else 'all'}" for s, _, a in MACHINES])
def test_predictions_equal_what_libgomp_and_libomp_bind(tmp_path, fake_mask, spin_binaries,
                                                        index):
    spec, levels, allowed = MACHINES[index]
    topo, allowed, every = faked_machine(spec, allowed, tmp_path)
    sysfs = fake_sysfs(load(spec), tmp_path / "sys-cpu")
    info = tmp_path / "cpuinfo"
    info.write_text(cpuinfo(spec, levels, index))
    compared = 0
    for policy in NAMES:
        for threads in (2, 3, len(allowed) // 2 + 1, len(allowed)):
            try:
                expected = predict(topo, policy, threads)
            except PlacementError:
                continue  # more threads than places: left to the runtimes
            env = _env(fake_mask, allowed, max(every) + 1, policy, threads)
            gomp = subprocess.run(
                ["unshare", "--mount", "sh", "-c",
                 'mount --bind "$0" /sys/devices/system/cpu && exec "$1" 0', str(sysfs),
                 str(spin_binaries["gcc"])], env=env, capture_output=True, text=True)
            assert gomp.returncode == 0, gomp.stderr
            assert reported(gomp.stdout + gomp.stderr) == expected["libgomp"], (policy, threads)
            omp = subprocess.run([str(spin_binaries["clang"]), "0"], capture_output=True,
                                 text=True, env=env | {"KMP_TOPOLOGY_METHOD": "cpuinfo",
                                                       "KMP_CPUINFO_FILE": str(info)})
            assert omp.returncode == 0, omp.stderr
            assert reported(omp.stdout + omp.stderr) == expected["libomp"], (policy, threads)
            compared += 1
    assert compared >= 20


def test_spread_partitions_as_each_runtime_does():
    # P = 6, T = 4: libgomp's two larger subpartitions first, libomp's spaced (P + 1) / T apart
    assert assignment(6, 4, "spread", "libgomp") == [0, 2, 4, 5]
    assert assignment(6, 4, "spread", "libomp") == [0, 1, 3, 5]
    assert assignment(16, 3, "spread", "libgomp") == [0, 6, 11]
    assert assignment(16, 3, "spread", "libomp") == [0, 5, 11]
    # what libomp 14 bound on a faked 16-PU machine, every team size (tests/test_policies.py)
    assert assignment(16, 7, "spread", "libomp") == [0, 2, 4, 7, 9, 12, 14]
    assert assignment(16, 13, "spread", "libomp") == [0, 1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15]
    assert assignment(8, 4, "spread", "libomp") == assignment(8, 4, "spread", "libgomp") \
        == [0, 2, 4, 6]
    with pytest.raises(PlacementError, match="more threads than places"):
        assignment(2, 3, "close", "libgomp")


def test_a_policy_run_is_verified_against_its_places():
    assert verify([[0, 8], [1, 9]], {0: frozenset({0, 8}), 1: frozenset({1, 9})}) == "ok"
    assert verify([[0, 8], [1, 9]], {0: frozenset({0}), 1: frozenset({1, 9})}) == "mismatch"
    assert verify([0, 1], {0: frozenset({0}), 1: frozenset({1})}) == "ok"


@pytest.mark.slow
@needs_two_cpus
@pytest.mark.parametrize("cc", COMPILERS)
def test_a_campaign_measures_the_runtimes_policies_verified(tmp_path, cc):
    work = tmp_path / "work"
    work.mkdir()
    strategies = ["os", "compact", "close-threads", "spread-cores", "primary-threads"]
    (work / "campaign.yaml").write_text(yaml.safe_dump({
        "campaign": "policies", "repetitions": 3, "threads": [2], "strategies": strategies,
        "compiler": {"cc": cc}, "machines": {"here": {"topology": "auto"}},
        "benchmarks": {"spin": {"source": "tests/data/spin.c", "input": "20",
                                "timeout_s": 20}}}))
    run = run_campaign(work)
    assert run.returncode == 0, run.stderr[-3000:]
    results = work / "results" / "policies" / "here"
    spread = read_placement(results / "placements" / "spin" / "t2" / "spread-cores.json")
    assert spread.policy == {"OMP_PROC_BIND": "spread", "OMP_PLACES": "cores"}
    assert set(spread.places_by_runtime) == {"libgomp", "libomp"}
    with open(work / "results" / "policies" / "runs.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    runtime = "libgomp" if cc == "gcc" else "libomp"
    for policy in ("close-threads", "spread-cores", "primary-threads"):
        mine = [row for row in rows if row["strategy"] == policy]
        assert len(mine) == 3 and {row["verification"] for row in mine} == {"ok"}, mine
        planned = read_placement(results / "placements" / "spin" / "t2" / f"{policy}.json")
        assert {row["pus"] for row in mine} == {
            " ".join(",".join(map(str, place)) for place in planned.places_by_runtime[runtime])}
    # the runtime binds these: measured apart from compact even where they coincide
    assert not any("close-threads" in row["stands_for"] for row in rows)
