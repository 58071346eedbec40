"""A faked machine for the real ``likwid-pin``: its topology file, written from an hwloc tree.

likwid 5.2 reads ``/etc/likwid_topo.cfg`` (the format ``likwid-genTopoCfg`` writes) instead of
probing the hardware, and keeps the hardware threads of the process's affinity mask.
:func:`likwid_pin` runs ``likwid-pin -c EXPR -p`` (which prints the OS ids the expression
selects) in a private mount namespace where ``/etc`` is a copy holding the faked file, with
``tests/data/fake_mask.c`` preloaded so that the mask holds every PU of the faked machine.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from pinbench.topology import Topology, pus_below, subtree

#: The processor this file describes (likwid needs one; any x86-64 it knows).
CPUID_INFO = """\
cpuid_info family = 25
cpuid_info model = 17
cpuid_info stepping = 1
cpuid_info vendor = 0
cpuid_info part = 0
cpuid_info clock = 2600000000.0
cpuid_info turbo = 0
cpuid_info osname = AMD EPYC
cpuid_info features = FP MMX SSE SSE2 HTT RDTSCP SSSE FMA SSE4.1 SSE4.2 AES AVX AVX2 SSE3
cpuid_info featureFlags = 4325308495
cpuid_info architecture = x86_64
cpuid_info isIntel = 0
cpuid_info supportUncore = 0
cpuid_info supportClientmem = 0
cpuid_info perf_version = 0
cpuid_info perf_num_ctr = 0
cpuid_info perf_width_ctr = 0
cpuid_info perf_num_fixed_ctr = 0
"""


def topology_file(topo: Topology) -> str:
    """likwid's topology file for ``topo``: sockets, dies, cores, hardware threads (apicId is
    the OS index, which likwid reads back as the processor id), caches and NUMA domains."""
    objects = subtree(topo.whole)
    packages = [n for n in objects if n.type == "Package"] or [topo.whole]
    dies = [n for n in objects if n.type == "Die"]
    lines = [CPUID_INFO.rstrip()]
    threads = []
    for package_id, package in enumerate(packages):
        cores = [n for n in subtree(package) if n.type == "Core"] or \
            [n for n in subtree(package) if n.type == "PU"]
        for core_id, core in enumerate(cores):
            for thread_id, pu in enumerate(pus_below(core)):
                die = next((i for i, d in enumerate(dies) if pu in pus_below(d)), 0)
                threads.append((pu, thread_id, core_id, package_id, die))
    for index, (pu, thread_id, core_id, package_id, die) in enumerate(threads):
        key = f"cpuid_topology threadPool {index}"
        lines += [f"{key} threadId = {thread_id}", f"{key} coreId = {core_id}",
                  f"{key} packageId = {package_id}", f"{key} apicId = {pu}",
                  f"{key} dieId = {die}"]
    smt = max(thread_id for _, thread_id, *_ in threads) + 1
    last = next((kind for kind in ("L3Cache", "L2Cache") if any(n.type == kind for n in objects)),
                None)
    for level in (1, 2, 3):  # likwid wants three; the last is the one its C domains follow
        kind = last if level == 3 else f"L{level}Cache"
        first = next((n for n in objects if n.type == kind), None)
        sharing = len(pus_below(first)) if first else smt if level < 3 else len(pus_below(packages[0]))
        lines += [f"cpuid_topology cacheLevels {level} type = "
                  f"{'DATACACHE' if level == 1 else 'UNIFIEDCACHE'}",
                  f"cpuid_topology cacheLevels {level} associativity = 8",
                  f"cpuid_topology cacheLevels {level} sets = 64",
                  f"cpuid_topology cacheLevels {level} lineSize = 64",
                  f"cpuid_topology cacheLevels {level} size = {32768 << (2 * level)}",
                  f"cpuid_topology cacheLevels {level} threads = {sharing}",
                  f"cpuid_topology cacheLevels {level} inclusive = 0"]
    lines += [f"cpuid_topology numHWThreads = {len(threads)}",
              f"cpuid_topology numSockets = {len(packages)}",
              f"cpuid_topology numCoresPerSocket = {len(threads) // len(packages) // smt}",
              f"cpuid_topology numThreadsPerCore = {smt}",
              f"cpuid_topology numDies = {len(dies)}",
              "cpuid_topology numCacheLevels = 3"]
    numa = [n for n in objects if n.numa] or [topo.whole]
    lines.append(f"numa_info numberOfNodes = {len(numa)}")
    for node_id, node in enumerate(numa):
        pus, key = sorted(pus_below(node)), f"numa_info nodes {node_id + 1}"
        lines += [f"{key} id = {node_id}", f"{key} numberOfProcessors = {len(pus)}",
                  f"{key} totalMemory = 1000000", f"{key} freeMemory = 1000000",
                  f"{key} numberOfDistances = {len(numa)}"]
        lines += [f"{key} distances {other} = {10 if other == node_id else 20}"
                  for other in range(len(numa))]
        lines += [f"{key} processors {i + 1} = {pu}" for i, pu in enumerate(pus)]
    return "\n".join(lines) + "\n"


class FakedLikwid:
    """``likwid-pin`` on a faked machine (see the module's docstring)."""

    def __init__(self, topo: Topology, work: Path, shim: Path):
        self.topo = topo
        self.etc = work / "etc"
        if not self.etc.exists():
            shutil.copytree("/etc", self.etc, symlinks=True,
                            ignore=shutil.ignore_patterns("shadow*", "gshadow*", "ssl"))
        (self.etc / "likwid_topo.cfg").write_text(topology_file(topo))
        self.shim = shim

    def domains(self) -> dict[str, list[int]]:
        """``likwid-pin -p``'s affinity domains, each as its listed PUs."""
        done = self._run(["-p"])
        if done.returncode != 0:
            raise RuntimeError(f"likwid-pin -p: {done.stderr.strip()}")
        found, name = {}, None
        for line in done.stdout.splitlines():
            if line.startswith("Domain "):
                name = line.split()[1].rstrip(":")
            elif name is not None and line.strip():
                found[name] = [int(pu) for pu in line.strip().split(",")]
                name = None
        return found

    def pus(self, expr: str) -> list[int]:
        """The OS ids ``likwid-pin -c EXPR -p`` selects; ValueError when likwid refuses the
        expression or warns that it made up a placement (threads sharing a hardware thread)."""
        done = self._run(["-c", expr, "-p"])
        said = done.stdout + done.stderr
        if done.returncode != 0 or any(word in said for word in ("ERROR", "WARN", "Failed")):
            raise ValueError(f"likwid-pin -c {expr}: {said.strip()}")
        return [int(pu) for pu in done.stdout.strip().splitlines()[-1].split(",")]

    def _run(self, args: list[str]) -> subprocess.CompletedProcess:
        cpus = ",".join(str(pu) for pu in sorted(self.topo.placeable))
        script = ('mount --bind "$1" /etc && shift && '
                  'exec env LD_PRELOAD="$SHIM" likwid-pin "$@"')
        done = subprocess.run(["unshare", "--mount", "sh", "-c", script, "sh", str(self.etc),
                               *args], capture_output=True, text=True, timeout=60,
                              env={"PATH": "/usr/bin:/bin", "SHIM": str(self.shim),
                                   "PINBENCH_FAKE_CPUS": cpus,
                                   "PINBENCH_FAKE_NPROCS": str(max(self.topo.pus) + 1)})
        return done

