"""How much slower each tracer makes the bundled benchmarks, measured side by side.

For every bundled benchmark, the native build (``cc -O2 -fopenmp``), the tsan-traced
build (the flags of ``python -m affinity.trace --print-flags``) and the native build under
the Valgrind tool (and under Pin when PIN_ROOT is set) run in turn, ``--runs`` times,
alternating, so that machine noise hits them alike. Each run is timed from spawn to
exit (wall) and by the benchmark's own ``kernel_time_s``; the table gives the medians
and the ratios to the native run. Then, as the anchor, the same on a small input with
``valgrind --tool=lackey --trace-mem=yes --trace-sched=yes`` (log to /dev/null).

Usage: ``.venv/bin/python perf/tracer_slowdown.py [--runs 5] [--threads 2] [--size quick]
[--cc gcc] [--only pairs,triad] [--no-valgrind]``
"""
from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from affinity.trace.build import build_tracer, traced_build_flags

ROOT = Path(__file__).resolve().parent.parent

BENCHMARKS = ("pairs", "quads", "stencil", "triad", "falseshare", "array")
LACKEY_INPUT = ("pairs", ["kib=64", "jobs=2", "rounds=200"])


def build(cc: str, out: Path) -> dict[tuple[str, str], Path]:
    """(kind, benchmark) -> binary, kind "native" or "tsan"."""
    cflags, ldflags = (shlex.split(f) for f in traced_build_flags())
    made = {}
    for bench in BENCHMARKS:
        src = ROOT / "benchmarks" / f"{bench}.c"
        native, traced = out / f"{bench}-native", out / f"{bench}-tsan"
        for cmd in ([cc, "-O2", "-fopenmp", str(src), "-o", str(native), "-lm"],
                    [cc, "-O2", *cflags, "-c", str(src), "-o", f"{traced}.o"],
                    [cc, f"{traced}.o", *ldflags, "-lm", "-o", str(traced)]):
            subprocess.run(cmd, check=True)
        made["native", bench], made["tsan", bench] = native, traced
    return made


def commands(bins, bench: str, args: list[str], scratch: Path, valgrind: bool, lackey: bool):
    """(label, argv, extra environment) of every way to run one benchmark."""
    out = str(scratch / "m.csv")
    native = [str(bins["native", bench]), *args]
    runs = [("native", native, {}),
            ("tsan", [str(bins["tsan", bench]), *args], {"PINBENCH_TRACE_OUT": out})]
    if valgrind:
        libdir = build_tracer("valgrind")
        runs.append(("valgrind", ["valgrind", "-q", "--tool=pinbench", f"--out={out}", *native],
                     {"VALGRIND_LIB": str(libdir), "OMP_WAIT_POLICY": "passive"}))
    if os.environ.get("PIN_ROOT"):
        tool = build_tracer("pin")
        runs.append(("pin", [str(Path(os.environ["PIN_ROOT"]) / "pin"), "-t", str(tool), "-o", out,
                             "--", *native], {}))
    if lackey:
        runs.append(("lackey", ["valgrind", "--tool=lackey", "--trace-mem=yes", "--trace-sched=yes",
                                "--log-file=/dev/null", *native], {"OMP_WAIT_POLICY": "passive"}))
    return runs


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float | None]:
    """(wall seconds spawn..exit, the benchmark's kernel_time_s)."""
    start = time.monotonic()
    proc = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          text=True)
    wall = time.monotonic() - start
    if proc.returncode != 0:
        raise SystemExit(f"tracer_slowdown: {' '.join(argv[:3])} ... failed ({proc.returncode})")
    m = re.search(r"^kernel_time_s: (\S+)$", proc.stdout, re.M)
    return wall, float(m.group(1)) if m else None


def compare(bins, bench, args, runs, threads, scratch, valgrind, lackey) -> dict[str, tuple]:
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    ways = commands(bins, bench, args, scratch, valgrind, lackey)
    times: dict[str, list[tuple[float, float | None]]] = {label: [] for label, _, _ in ways}
    for _ in range(runs):  # alternate: native, tsan, valgrind, ... then again
        for label, argv, extra in ways:
            times[label].append(run_once(argv, {**env, **extra}))
    med = {}
    for label, samples in times.items():
        walls = [w for w, _ in samples]
        kernels = [k for _, k in samples if k is not None]
        med[label] = (statistics.median(walls), statistics.median(kernels) if kernels else None)
    return med


def report(name: str, med: dict[str, tuple]) -> None:
    base_wall, base_kernel = med["native"]
    cells = [f"{name:<11} native {base_wall:7.3f} s"]
    for label, (wall, kernel) in med.items():
        if label == "native":
            continue
        ratio_k = f"{kernel / base_kernel:6.1f}x" if kernel and base_kernel else "   -  "
        cells.append(f"{label} {wall:7.2f} s {wall / base_wall:6.1f}x (kernel {ratio_k})")
    print(" | ".join(cells), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--size", default="quick", help="quick or ref")
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--only", default=",".join(BENCHMARKS))
    parser.add_argument("--no-valgrind", action="store_true")
    args = parser.parse_args()
    valgrind = not args.no_valgrind and shutil.which("valgrind") is not None
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        bins = build(args.cc, scratch)
        print(f"# {args.cc}, {args.threads} threads, size {args.size}, median of {args.runs} "
              f"alternating runs; wall = spawn..exit, kernel = the benchmark's kernel_time_s; "
              f"load average {os.getloadavg()[0]:.2f}")
        for bench in args.only.split(","):
            report(bench, compare(bins, bench, [args.size], args.runs, args.threads, scratch,
                                  valgrind, lackey=False))
        bench, small = LACKEY_INPUT
        print(f"# anchor: {bench} {' '.join(small)} (lackey logs to /dev/null)")
        report(bench, compare(bins, bench, small, args.runs, args.threads, scratch,
                              valgrind, lackey=valgrind))
        print(f"# load average at the end {os.getloadavg()[0]:.2f} (other work on the machine "
              f"slows the native runs' barriers most, so it lowers the ratios)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
