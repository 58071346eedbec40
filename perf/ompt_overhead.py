"""What the OMPT tool costs: instrumented and uninstrumented runs of the bundled benchmarks,
side by side.

For every bundled benchmark (built with ``--cc``, default gcc) three variants run in turn,
``--runs`` times, alternating, so that machine noise hits them alike:

- ``native``: the program on the runtime it was linked with (libgomp for gcc);
- ``libomp``: the same binary on LLVM's libomp, without the tool (for gcc, libgomp.so.1
  redirected to libomp, as explained runs do);
- ``tool``: on libomp with the OMPT tool loaded and writing its record.

Each run is timed from spawn to exit (wall) and by the benchmark's own ``kernel_time_s``;
the table gives the medians and the ratios tool/libomp (the tool's own cost, the target is
within 2%) and libomp/native (what changing the runtime costs or saves).

``--constructs``: the tool's cost per construct instead. ``perf/ompt_constructs.c`` (built with
clang, so on libomp itself) runs micro-loops of one construct each, barrier, parallel region,
lock and reduction, with and without the tool, alternating, ``--runs`` times; per construct the
medians of the loop's own time, their ratio tool/libomp, the extra time per construct instance
(wall) and per event the tool counts (thread-s: P x the extra wall time over the record's
count of regions, barriers or lock acquisitions, :func:`pinbench.stats.explain.decompose`):
the figures :data:`pinbench.stats.explain.TOOL_COST` holds.

Usage: ``.venv/bin/python perf/ompt_overhead.py [--runs 10] [--threads 2] [--size quick]
[--cc gcc] [--only pairs,triad] [--constructs [--iterations 200000]]``
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pinbench.measure.explain import explain_environment, read_record
from pinbench.stats.explain import decompose
from pinbench.trace.build import ompt_tool

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ("pairs", "quads", "stencil", "triad", "falseshare", "array")
VARIANTS = ("native", "libomp", "tool")
#: micro-loop kind of perf/ompt_constructs.c -> the count of decompose() its construct adds to
CONSTRUCTS = {"barrier": "barriers", "parallel": "parallel_regions",
              "lock": "lock_acquisitions", "reduction": "barriers"}


def constructs(args: argparse.Namespace, tool: dict[str, str]) -> int:
    """The ``--constructs`` table (the module's text)."""
    print(f"{'construct':<10} {'libomp':>9} {'tool':>9} {'tool/libomp':>11} "
          f"{'extra/instance':>14} {'counted':>9} {'thread-us/count':>15}")
    with tempfile.TemporaryDirectory() as tmp:
        binary = Path(tmp) / "ompt_constructs"
        subprocess.run(["clang", "-O2", "-fopenmp", "-o", str(binary),
                        str(ROOT / "perf" / "ompt_constructs.c")], check=True)
        base = {"PATH": os.environ["PATH"], "OMP_NUM_THREADS": str(args.threads),
                "OMP_PROC_BIND": "close", "OMP_PLACES": "cores"}
        record = str(Path(tmp) / "record.json")
        envs = {"libomp": base, "tool": explain_environment(base, tool, record)}
        for kind, counted in CONSTRUCTS.items():
            times, counts = {v: [] for v in envs}, []
            for _ in range(args.runs):
                for variant, env in envs.items():
                    proc = subprocess.run([str(binary), kind, str(args.iterations)], env=env,
                                          capture_output=True, text=True)
                    if proc.returncode != 0 or "validation: OK" not in proc.stdout:
                        print(f"{kind} {variant} failed: {proc.stderr.strip()[:200]}")
                        return 1
                    times[variant].append(float(re.search(r"^loop_time_s: (\S+)$", proc.stdout,
                                                          re.MULTILINE)[1]))
                    if variant == "tool":
                        counts.append(decompose(read_record(record), 1.0, args.threads)[counted])
            med = {v: statistics.median(t) for v, t in times.items()}
            extra = med["tool"] - med["libomp"]
            count = statistics.median(counts)
            print(f"{kind:<10} {med['libomp'] * 1e3:7.1f}ms {med['tool'] * 1e3:7.1f}ms "
                  f"{med['tool'] / med['libomp']:11.3f} {extra / args.iterations * 1e6:11.3f} us "
                  f"{count:9.0f} {args.threads * extra / count * 1e6:15.3f}", flush=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--size", default="quick")
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--only", default="")
    parser.add_argument("--constructs", action="store_true")
    parser.add_argument("--iterations", type=int, default=200000)
    args = parser.parse_args()
    tool = ompt_tool()
    if args.constructs:
        print(f"load average {os.getloadavg()[0]:.2f}; {args.runs} runs per variant, "
              f"{args.threads} threads, {args.iterations} iterations", flush=True)
        return constructs(args, tool)
    benches = [b for b in BENCHMARKS if not args.only or b in args.only.split(",")]
    print(f"load average {os.getloadavg()[0]:.2f}; {args.runs} runs per variant, "
          f"{args.threads} threads, size {args.size}, built with {args.cc}", flush=True)
    header = (f"{'benchmark':<11} {'native':>9} {'libomp':>9} {'tool':>9} "
              f"{'tool/libomp':>11} {'kernel t/l':>10} {'libomp/native':>13}")
    print(header)
    with tempfile.TemporaryDirectory() as tmp:
        for bench in benches:
            binary = Path(tmp) / bench
            subprocess.run([args.cc, "-O2", "-fopenmp", "-o", str(binary),
                            str(ROOT / "benchmarks" / f"{bench}.c"), "-lm"], check=True)
            base = {"PATH": os.environ["PATH"], "OMP_NUM_THREADS": str(args.threads),
                    "OMP_PROC_BIND": "close", "OMP_PLACES": "cores"}
            record = str(Path(tmp) / "record.json")
            envs = {"native": base,
                    "libomp": base | {"LD_LIBRARY_PATH": tool["gomp_dir"]},
                    "tool": explain_environment(base, tool, record)}
            wall = {v: [] for v in VARIANTS}
            kernel = {v: [] for v in VARIANTS}
            for _ in range(args.runs):
                for variant in VARIANTS:
                    start = time.perf_counter()
                    proc = subprocess.run([str(binary), args.size], env=envs[variant],
                                          capture_output=True, text=True)
                    wall[variant].append(time.perf_counter() - start)
                    if proc.returncode != 0 or "validation: OK" not in proc.stdout:
                        print(f"{bench} {variant} failed: {proc.stderr.strip()[:200]}")
                        return 1
                    found = re.search(r"^kernel_time_s: (\S+)$", proc.stdout, re.MULTILINE)
                    kernel[variant].append(float(found.group(1)) if found else float("nan"))
                    if variant == "tool" and read_record(record) is None:
                        print(f"{bench}: the tool wrote no record")
                        return 1
            med = {v: statistics.median(wall[v]) for v in VARIANTS}
            kmed = {v: statistics.median(kernel[v]) for v in VARIANTS}
            print(f"{bench:<11} {med['native'] * 1e3:7.1f}ms {med['libomp'] * 1e3:7.1f}ms "
                  f"{med['tool'] * 1e3:7.1f}ms {med['tool'] / med['libomp']:11.3f} "
                  f"{kmed['tool'] / kmed['libomp']:10.3f} "
                  f"{med['libomp'] / med['native']:13.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
