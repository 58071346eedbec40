"""How much slower each tracer makes the bundled benchmarks, measured side by side.

The kernels: the six streaming or regular ones of the default campaign, and ``spmv``, an
irregular one (a sparse matrix-vector product whose gathers land on random lines of the
vector). Each runs under each OpenMP wait policy asked (``--wait-policy``, default
``active,passive``: ``OMP_WAIT_POLICY`` set alike for the native and the traced runs;
the Valgrind tool always runs passive). For every kernel, the native build (``cc -O2 -fopenmp``), the tsan-traced
build (the flags of ``pinbench trace --print-flags``) and the native build under
the Valgrind tool (and under Pin when PIN_ROOT is set) run in turn, ``--runs`` times,
alternating, so that machine noise hits them alike. Each run is timed from spawn to
exit (wall) and by the benchmark's own ``kernel_time_s``; the table gives the medians
and the ratios of the medians to the native run, and, for tsan, also the ratio of the
fastest runs (``fastest`` = fastest tsan wall / fastest native wall). Then, as the anchor,
the same on a small input with ``valgrind --tool=lackey --trace-mem=yes --trace-sched=yes``
(log to /dev/null).

Why the fastest runs: on a shared 2-core machine the native 2-thread runs are bimodal (a
fast mode, and one about 2x longer when both threads share a core or wait for other load,
e.g. native quads 35 ms or 60-120 ms), and so are the traced ones; the ratio of two medians
then swings with the load (quads 8x to 17x). The ratio of the fastest runs compares the
two fast modes, the instrumentation's own cost, and moves much less.

The last lines give, per wait policy, the highest tsan ratio of the streaming kernels and of
the irregular one, for both ratios; the one compared with the target of 10x native is the
fastest-run ratio (``--verdict fastest``, the default) or the median ratio
(``--verdict median``), as the line says.

Measured (gcc 12, 2 threads, quick, --runs 5, a 2-vCPU AMD EPYC VM shared with other jobs,
load 1.5-4.2; two runs of the script), tsan median ratio / fastest-run ratio:
quads 5.7-9.1x / 8.5-9.3x active, 8.2-8.6x / 8.8-9.5x passive; stencil 10.1-10.6x /
11.2-11.4x active, 9.3-11.0x / 9.4-13.4x passive; spmv 6.8-8.2x / 6.6-6.9x active,
4.0-5.5x / 4.8-5.0x passive; the other kernels 1.9-9.6x / 2.0-10.6x (falseshare passive
10.6x fastest-run). So the irregular kernel meets 10x by both ratios; the streaming kernels
with 5-6 accesses per element (stencil, quads) do not, always: their cost is one call per
access (pintools/README.md, "Measured slowdowns").

Usage: ``.venv/bin/python perf/tracer_slowdown.py [--runs 5] [--threads 2] [--size quick]
[--cc gcc] [--only pairs,spmv] [--wait-policy active,passive] [--verdict fastest|median]
[--no-valgrind] [--no-anchor]``
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

from pinbench.trace.build import built_tracer, traced_build_flags

ROOT = Path(__file__).resolve().parent.parent

BENCHMARKS = ("pairs", "quads", "stencil", "triad", "falseshare", "array", "spmv")
#: the kernels whose accesses are irregular (random lines); the others stream or repeat
IRREGULAR = ("spmv",)
#: the tsan tracer's target: at most this many times the native run
TARGET = 10.0
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
        libdir = built_tracer("valgrind")
        runs.append(("valgrind", ["valgrind", "-q", "--tool=pinbench", f"--out={out}", *native],
                     {"VALGRIND_LIB": str(libdir), "OMP_WAIT_POLICY": "passive"}))
    if os.environ.get("PIN_ROOT"):
        tool = built_tracer("pin")
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


def compare(bins, bench, args, runs, threads, scratch, valgrind, lackey,
            policy: str | None = None) -> dict[str, tuple]:
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    if policy:
        env["OMP_WAIT_POLICY"] = policy
    ways = commands(bins, bench, args, scratch, valgrind, lackey)
    times: dict[str, list[tuple[float, float | None]]] = {label: [] for label, _, _ in ways}
    for _ in range(runs):  # alternate: native, tsan, valgrind, ... then again
        for label, argv, extra in ways:
            times[label].append(run_once(argv, {**env, **extra}))
    return {label: summary(samples) for label, samples in times.items()}


def summary(samples: list[tuple[float, float | None]]) -> tuple[float, float | None, float]:
    """(median wall, median kernel time or None, fastest wall) of one way's runs."""
    walls = [w for w, _ in samples]
    kernels = [k for _, k in samples if k is not None]
    return (statistics.median(walls), statistics.median(kernels) if kernels else None,
            min(walls))


def report(name: str, med: dict[str, tuple]) -> tuple[float, float]:
    """Print one kernel's line; returns the tsan wall-time ratios (of the medians, of the
    fastest runs)."""
    base_wall, base_kernel, base_fast = med["native"]
    cells = [f"{name:<18} native {base_wall:7.3f} s (fastest {base_fast:.3f})"]
    for label, (wall, kernel, fast) in med.items():
        if label == "native":
            continue
        ratio_k = f"{kernel / base_kernel:6.1f}x" if kernel and base_kernel else "   -  "
        fastest = f", fastest {fast / base_fast:.1f}x" if label == "tsan" else ""
        cells.append(f"{label} {wall:7.2f} s {wall / base_wall:6.1f}x (kernel {ratio_k}{fastest})")
    print(" | ".join(cells), flush=True)
    return med["tsan"][0] / base_wall, med["tsan"][2] / base_fast


def verdicts(worst: dict[tuple[str, bool, str], tuple[float, str]], policies: list[str],
             compared: str = "fastest") -> list[str]:
    """The closing lines: per wait policy and kind of kernel, the highest tsan ratio of the
    medians and of the fastest runs; `compared` ("fastest" or "median") is held against
    TARGET."""
    lines = []
    for policy in policies:
        for irregular in (False, True):
            if (policy, irregular, compared) not in worst:
                continue
            med, med_bench = worst[policy, irregular, "median"]
            fast, fast_bench = worst[policy, irregular, "fastest"]
            ratio = fast if compared == "fastest" else med
            lines.append(
                f"# tsan, {policy}, {'irregular' if irregular else 'streaming/regular'} kernels: "
                f"medians at most {med:.1f}x native ({med_bench}), fastest runs at most "
                f"{fast:.1f}x ({fast_bench}); target {TARGET:g}x on the "
                f"{'fastest-run' if compared == 'fastest' else 'median'} ratio: "
                f"{'met' if ratio <= TARGET else 'NOT met'}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--size", default="quick", help="quick or ref")
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--only", default=",".join(BENCHMARKS))
    parser.add_argument("--wait-policy", default="active,passive",
                        help="OMP_WAIT_POLICY values to run under, comma-separated")
    parser.add_argument("--verdict", choices=("fastest", "median"), default="fastest",
                        help="the tsan ratio compared with the target: of the fastest runs "
                             "(default) or of the medians")
    parser.add_argument("--no-valgrind", action="store_true")
    parser.add_argument("--no-anchor", action="store_true", help="leave out the lackey anchor")
    args = parser.parse_args()
    valgrind = not args.no_valgrind and shutil.which("valgrind") is not None
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        bins = build(args.cc, scratch)
        print(f"# {args.cc}, {args.threads} threads, size {args.size}, median and fastest of {args.runs} "
              f"alternating runs; wall = spawn..exit, kernel = the benchmark's kernel_time_s; "
              f"load average {os.getloadavg()[0]:.2f}")
        worst: dict[tuple[str, bool, str], tuple[float, str]] = {}
        policies = args.wait_policy.split(",")
        for bench in args.only.split(","):
            for policy in policies:
                ratios = report(f"{bench} {policy}",
                                compare(bins, bench, [args.size], args.runs, args.threads,
                                        scratch, valgrind, lackey=False, policy=policy))
                for kind, ratio in zip(("median", "fastest"), ratios):
                    key = (policy, bench in IRREGULAR, kind)
                    if ratio > worst.get(key, (0.0, ""))[0]:
                        worst[key] = (ratio, bench)
        for line in verdicts(worst, policies, args.verdict):
            print(line)
        if args.no_anchor:
            return 0
        bench, small = LACKEY_INPUT
        print(f"# anchor: {bench} {' '.join(small)} (lackey logs to /dev/null)")
        report(bench, compare(bins, bench, small, args.runs, args.threads, scratch,
                              valgrind, lackey=valgrind))
        print(f"# load average at the end {os.getloadavg()[0]:.2f} (other work on the machine "
              f"slows the native runs' barriers most, so it lowers the ratios)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
