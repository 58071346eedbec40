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

Usage: ``.venv/bin/python perf/ompt_overhead.py [--runs 10] [--threads 2] [--size quick]
[--cc gcc] [--only pairs,triad]``
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
from pinbench.trace.build import ompt_tool

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ("pairs", "quads", "stencil", "triad", "falseshare", "array")
VARIANTS = ("native", "libomp", "tool")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--size", default="quick")
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    tool = ompt_tool()
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
