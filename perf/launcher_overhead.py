"""How much time the launcher adds to one run, measured side by side with a bare run.

For each program, bare runs (``posix_spawn`` + ``waitpid``, timed around both, with the
same ``OMP_PLACES`` binding) and launcher runs (``affinity.measure.job.measure_one``: fixed
environment, ASLR off, affinity display, output to files, rusage, then verification)
alternate, so machine noise hits both alike. Prints medians of the bare time, of the
time the launcher records (``wall_s``, spawn..wait), and of the launcher's whole cost
per run (``measure_one`` from call to return), and the ratios to the bare time.
Usage: ``.venv/bin/python perf/launcher_overhead.py [--runs 200]``.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from affinity.measure.job import Job, measure_one
from affinity.results.placements import omp_places

ROOT = Path(__file__).resolve().parent.parent


def bare_run(argv: list[str], env: dict[str, str]) -> float:
    """Wall seconds of one spawn..wait of ``argv``, output discarded."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    start = time.monotonic_ns()
    pid = os.posix_spawn(argv[0], argv, env, file_actions=[
        (os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)])
    os.waitpid(pid, 0)
    elapsed = (time.monotonic_ns() - start) / 1e9
    os.close(devnull)
    return elapsed


def compare(name: str, argv: list[str], runs: int, scratch: Path) -> tuple[float, float, float]:
    """Medians of bare, recorded and whole-launcher seconds of ``argv`` over alternating runs."""
    threads = len(os.sched_getaffinity(0))
    pus = sorted(os.sched_getaffinity(0))
    job = Job(machine="perf", benchmark=name, threads=threads, argv=argv, env={},
              validate="", time_regex=None, timeout_s=60, repetitions=1, seed=0,
              order="back-to-back", placements={"compact": {"strategy": "compact", "pus": pus}})
    bare_env = {"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": str(threads),
                "OMP_PLACES": omp_places(pus), "OMP_PROC_BIND": "close"}
    bare, recorded, whole = [], [], []
    for _ in range(runs):
        bare.append(bare_run(argv, bare_env))
        start = time.monotonic_ns()
        recorded.append(measure_one(job, "compact", 0, 0, scratch).wall_s)
        whole.append((time.monotonic_ns() - start) / 1e9)
    return statistics.median(bare), statistics.median(recorded), statistics.median(whole)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="runs of each kind per program")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        kernel = scratch / "triad"
        subprocess.run(["gcc", "-O2", "-fopenmp", "-o", str(kernel),
                        str(ROOT / "benchmarks" / "triad.c"), "-lm"], check=True)
        programs = [("/bin/true", ["/bin/true"]),
                    ("triad n=200000 iters=5", [str(kernel), "n=200000", "iters=5"]),
                    ("triad quick", [str(kernel), "quick"])]
        print(f"{'program':<24} {'bare ms':>9} {'recorded ms':>12} {'ratio':>7} "
              f"{'per-run ms':>11} {'ratio':>7}")
        for label, argv in programs:
            runs = args.runs if "quick" not in label else max(10, args.runs // 10)
            bare, recorded, whole = compare(label, argv, runs, scratch)
            print(f"{label:<24} {bare * 1e3:>9.3f} {recorded * 1e3:>12.3f} {recorded / bare:>7.3f} "
                  f"{whole * 1e3:>11.3f} {whole / bare:>7.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
