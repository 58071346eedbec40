"""Where a campaign's wall time goes, and its ratio to the runs' recorded time plus builds and
tracing (target: at most 1.05x).

Runs ``.venv/bin/snakemake --cores all`` on a campaign (the default one unless
``--configfile``) from scratch (``results/<campaign>`` removed first), then once more with
nothing to do, ``--repeat`` times, timing each call from outside (spawn to exit). The
breakdown comes from the call's own files: the jobs' timing files (Snakemake's
``benchmark:``) and each measuring process's account (:meth:`Layout.account`), as the end of
a campaign prints it, but with the wall time taken from outside, so Snakemake's start-up and
exit count too:

    measuring (the runs' recorded wall time), waiting for quiet, waiting for the machine lock,
    launcher (start-up; per run), builds, tracing, placement, analysis, report, Snakemake
    (the call's wall time less the time some job ran).

On a shared machine others' work makes the quiet policy wait (up to ``quiet.max_wait_s``
after each run they disturb) and their measurements hold the machine lock: both are printed
apart, and the ratio is printed with them and without them. ``--no-quiet-wait`` runs the
campaign with ``quiet.max_wait_s: 0`` (runs still record the share others used) and
``--private-lock`` with a lock of its own, to see the campaign's own costs on a busy machine.

Measured (issue 16, target 4; default campaign with explained runs, ``--private-lock
--no-quiet-wait``, shared 2-core machine at load 2.1-2.7), alternating a170f57 and the
report figures drawn once with fixed geometry (pinbench/report/figures.py), one call each in turn:

    before: 1.062x, 1.101x, 1.002x, 1.042x, 1.054x; report 2.7, 4.9, 3.1, 3.1, 3.2 s
    after:  1.039x, 1.005x, 1.038x, 1.050x, 1.041x; report 2.4, 2.1, 2.0, 1.8, 2.2 s

(e.g. after: 55.4 s for measuring 45.5 s, builds 2.5 s, tracing 4.7 s, launcher 1.4 s,
placement 0.5 s, analysis 0.3 s, report 1.8 s, Snakemake 2.3 s; 1.9-2.2 s with nothing to
do.) The ratio moves with how long builds and tracing take (they overlap on two cores and
count as useful), so single calls vary by ±0.04 either way; the report job itself (its
30 figures, in the same process as before) went from 2.7-4.9 s to 1.8-2.4 s, and building
the report alone from the same results (imports aside) from 4.1-5.1 s to 2.1-2.4 s.

Usage: ``.venv/bin/python perf/campaign_overhead.py [--repeat 1] [--configfile FILE]
[--no-quiet-wait] [--private-lock]``
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from pinbench.results.layout import Layout
from pinbench.workflow import accounting

ROOT = Path(__file__).resolve().parent.parent
TARGET = 1.05


def call(args: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(wall seconds, time stamp at the start, output) of one Snakemake call."""
    started, start = time.time(), time.monotonic()
    proc = subprocess.run([str(ROOT / ".venv" / "bin" / "snakemake"), "--cores", "all", *args],
                          cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    wall = time.monotonic() - start
    if proc.returncode != 0:
        sys.exit(f"campaign_overhead: snakemake failed ({proc.returncode}):\n"
                 + proc.stdout[-3000:])
    return wall, started, proc.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--configfile", help="the campaign (default: config/config.yaml)")
    parser.add_argument("--no-quiet-wait", action="store_true",
                        help="quiet.max_wait_s: 0 (a busy shared machine is never quiet)")
    parser.add_argument("--private-lock", action="store_true",
                        help="a machine lock of its own (others' measurements do not hold it)")
    args = parser.parse_args()
    config_path = Path(args.configfile or ROOT / "config" / "config.yaml")
    config = yaml.safe_load(config_path.read_text())
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        if args.no_quiet_wait:
            config["quiet"] = {**config.get("quiet", {}), "max_wait_s": 0}
            config_path = Path(tmp) / "campaign.yaml"
            config_path.write_text(yaml.safe_dump(config, sort_keys=False))
        if args.private_lock:
            env["PINBENCH_LOCK"] = str(Path(tmp) / "machine.lock")
        layout = Layout.of(config["campaign"])
        extra = ["--configfile", str(config_path)] if args.configfile or args.no_quiet_wait \
            else []
        print(f"# {config['campaign']}: {config_path}; quiet wait "
              f"{'off' if args.no_quiet_wait else 'as configured'}; lock "
              f"{'private' if args.private_lock else 'shared'}; load average "
              f"{os.getloadavg()[0]:.2f}", flush=True)
        ratios = []
        for attempt in range(args.repeat):
            shutil.rmtree(ROOT / layout.root, ignore_errors=True)
            wall, started, _ = call(extra, env)
            os.chdir(ROOT)
            jobs = accounting.job_timings(layout, started)
            line = accounting.where_time_went(jobs, started, wall)
            again, _, _ = call(extra, env)
            print(f"{attempt + 1}. from scratch, {line}; load {os.getloadavg()[0]:.2f}",
                  flush=True)
            print(f"{attempt + 1}. again, nothing to do: {again:.1f} s", flush=True)
            ratios.append(_ratios(line))
        if ratios and all(ratios):
            low = min(r[0] for r in ratios), max(r[0] for r in ratios)
            bare = min(r[1] for r in ratios), max(r[1] for r in ratios)
            print(f"# ratio {low[0]:.3f}-{low[1]:.3f}x ({bare[0]:.3f}-{bare[1]:.3f}x without "
                  f"the waits) over {len(ratios)} call(s); target {TARGET}x")
    return 0


def _ratios(line: str) -> tuple[float, float] | None:
    """The two ratios :func:`pinbench.workflow.accounting.where_time_went` printed."""
    marker = "the call took "
    if marker not in line:
        return None
    rest = line.split(marker, 1)[1]
    first = float(rest.split("x", 1)[0])
    second = float(rest.split("(", 1)[1].split("x", 1)[0])
    return first, second


if __name__ == "__main__":
    sys.exit(main())
