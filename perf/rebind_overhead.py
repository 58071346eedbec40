"""What re-binding threads per parallel region costs: a program of many short regions, with and
without the re-binding shim (pinbench/measure/rebind.c), side by side.

A C program built here (gcc, libgomp; ``--cc clang`` for libomp and the shim's OMPT path)
runs two parallel regions, A then B, ``--instances`` times each, each region a few hundred
nanoseconds of work per thread, and prints its time per region instance. Three variants run in
turn, ``--runs`` times, alternating, so that machine noise hits them alike, all bound by
``OMP_PLACES`` to the first ``--threads`` CPUs:

- ``bound``: without the shim;
- ``shim``: with the shim and a plan of the whole-program placement alone: each region's
  start goes through the shim, no thread moves (its cost when nothing is re-bound);
- ``per-region``: region A on the CPUs in order, region B on them reversed: every thread
  moves at every region's start.

The table gives the medians of the time per region instance, the differences to ``bound``
(the cost of re-binding per region instance at T threads, and per thread: per re-binding),
and the shim's own account (thread-seconds in the shim per instance, from its record); then
what ``pinbench setup`` calibrated (one ``sched_setaffinity`` that moves the thread, one
re-binding of a team), measured again here.

Usage: ``.venv/bin/python perf/rebind_overhead.py [--runs 10] [--threads 2]
[--instances 20000] [--cc gcc]``
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from pinbench.measure import rebind, rebind_cost

PROGRAM = r"""
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
static volatile double sink[1024];
static void work(int t) { double x = t; for (int i = 0; i < 200; i++) x = x * 1.000001 + 1; sink[t * 16] = x; }
int main(int argc, char **argv)
{
    int n = atoi(argv[1]);
    double t0 = omp_get_wtime();
    for (int r = 0; r < n; r++) {
#pragma omp parallel
        work(omp_get_thread_num());
#pragma omp parallel
        work(omp_get_thread_num());
    }
    printf("per-instance-s %.9f\n", (omp_get_wtime() - t0) / (2.0 * n));
    return 0;
}
"""
VARIANTS = ("bound", "shim", "per-region")


def region_keys(binary: str, env: dict[str, str], folder: Path) -> list[str]:
    """The program's two regions' keys, in the order they run (the shim's record)."""
    plan, out = str(folder / "keys.plan"), str(folder / "keys.out")
    rebind.write_plan([0], [], plan)
    subprocess.run([binary, "1"], env=rebind.environment(env, rebind.shim(), plan, out),
                   check=True, capture_output=True)
    return list(rebind.read_record(out).regions)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--instances", type=int, default=20000)
    parser.add_argument("--cc", default="gcc")
    args = parser.parse_args()
    cpus = sorted(os.sched_getaffinity(0))[:args.threads]
    if len(cpus) < args.threads:
        sys.exit(f"rebind_overhead: {args.threads} threads asked, {len(cpus)} CPUs here")
    folder = Path(tempfile.mkdtemp(prefix="rebind-overhead-"))
    binary = str(folder / "regions")
    (folder / "regions.c").write_text(PROGRAM)
    subprocess.run([args.cc, "-O2", "-fopenmp", "-o", binary, str(folder / "regions.c")],
                   check=True)
    env = {"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": str(args.threads),
           "OMP_PLACES": ",".join(f"{{{cpu}}}" for cpu in cpus), "OMP_PROC_BIND": "close"}
    a, b = region_keys(binary, env, folder)
    plans = {"shim": [], "per-region": [{"key": a, "pus": cpus}, {"key": b, "pus": cpus[::-1]}]}
    envs = {"bound": env}
    for name, regions in plans.items():
        plan = str(folder / f"{name}.plan")
        rebind.write_plan(cpus, regions, plan)
        envs[name] = rebind.environment(env, rebind.shim(), plan, str(folder / f"{name}.out"))
    times: dict[str, list[float]] = {name: [] for name in VARIANTS}
    shim_s: dict[str, list[float]] = {name: [] for name in plans}
    for _ in range(args.runs):
        for name in VARIANTS:
            out = subprocess.run([binary, str(args.instances)], env=envs[name], check=True,
                                 capture_output=True, text=True).stdout
            times[name].append(float(out.split()[-1]))
            if name in plans:
                record = rebind.read_record(envs[name][rebind.OUT_VARIABLE])
                instances = sum(count for _, count in record.regions.values())
                shim_s[name].append(record.shim_s / instances)
    base = statistics.median(times["bound"])
    print(f"{args.threads} threads, {args.instances} instances of each of 2 regions, "
          f"{args.runs} runs each, {args.cc}; load {os.getloadavg()[0]:.1f}")
    print(f"{'variant':>12} {'us/instance':>12} {'- bound':>9} {'per thread':>11} "
          f"{'in shim us':>11}")
    for name in VARIANTS:
        median = statistics.median(times[name])
        extra = median - base
        inside = f"{statistics.median(shim_s[name]) * 1e6:11.2f}" if name in shim_s else \
            f"{'':>11}"
        print(f"{name:>12} {median * 1e6:12.2f} {extra * 1e6:9.2f} "
              f"{extra / args.threads * 1e6:11.2f} {inside}")
    cost = rebind_cost.calibrate(Path(rebind.shim()), folder, lambda line: None)
    if cost:
        print(f"calibrated: {cost['per_call_s'] * 1e6:.2f} us per sched_setaffinity, "
              f"{cost['per_instance_s'] * 1e6:.2f} us per re-binding of {cost['threads']} "
              "threads")
    return 0


if __name__ == "__main__":
    sys.exit(main())
