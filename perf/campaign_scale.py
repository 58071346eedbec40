"""What a campaign of N cells costs to plan, schedule, analyse and report, and how that grows.

For each N of ``--sizes`` (default 100 and 1,000; ``--big`` adds 10,000), generates in a
fresh folder a planned campaign of N cells: one machine on a synthetic topology
(:data:`TOPOLOGY`, 32 PUs, planned: nothing is built, traced or measured), N / 4 copies of
one benchmark and 4 thread counts, the strategies os, compact and scatter. Then, each step
timed from outside (spawn to exit) with its peak memory:

- planning: ``pinbench run -n`` (Snakemake's DAG of every job, nothing run);
- scheduling: ``pinbench run`` (every placement job, the plan, the planned report), its
  wall time split into the placement jobs' time, the report's and Snakemake's (the call's
  wall time less the time some job ran: start-up, the DAG, scheduling;
  :func:`pinbench.workflow.accounting.where_time_went`), and the cells placed per minute;
- again: ``pinbench run`` once more, with nothing to do;
- analysis: the runs of every cell as if the machine had been measured (synthetic runs in
  the real format: :func:`pinbench.stats.simulate.job_runs`, ``--repetitions`` per strategy,
  written where the measuring process writes them), concatenated and analysed as the
  runs_table and analyse rules do (:mod:`pinbench.workflow.rule_bodies`);
- report: the report of the measured campaign (:func:`pinbench.report.html_report.build_report`),
  its first page's bytes per cell against its budget (``INDEX_BUDGET``) and a benchmark's page;
- opening: the first page, a benchmark's page and the machine's page opened in headless
  Chromium, the seconds from the request to the first frame after the load event of each,

with the size of what each writes (the placements, the analysis, the report: bytes and
files). Last, for each step, the exponent e of cost ~ N^e fitted by least squares over the
sizes (log cost on log N).

Measured: see docs/performance.md (campaign scale).

Usage: ``.venv/bin/python perf/campaign_scale.py [--sizes 100 1000] [--big] [--repetitions 10]
[--workflow-only] [--keep DIR]``
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
PY = str(ROOT / ".venv" / "bin" / "python")
#: The machine of every generated campaign: 2 packages of 8 cores of 2 PUs.
TOPOLOGY = "Package:2 Core:8 PU:2"
THREADS = [4, 8, 16, 32]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
STRATEGIES = ["os", "compact", "scatter"]
MACHINE = "big"


def campaign(cells: int, repetitions: int) -> dict:
    """A planned campaign of ``cells`` cells (a multiple of the thread counts)."""
    source = str(ROOT / "tests" / "data" / "spin.c")
    benchmarks = {f"b{k:05d}": {"source": source, "input": str(k)}
                  for k in range(cells // len(THREADS))}
    return {"campaign": f"scale{cells}", "repetitions": repetitions, "strategies": STRATEGIES,
            "tracing": {"when": "never"}, "explain": None,
            "machines": {MACHINE: {"topology": TOPOLOGY, "threads": THREADS, "measure": False}},
            "benchmarks": benchmarks}


def write_campaign(cells: int, repetitions: int, work: Path) -> dict:
    """The campaign of ``cells`` cells (:func:`campaign`) as ``work/campaign.json``; returns it."""
    work.mkdir(parents=True)
    config = campaign(cells, repetitions)
    (work / "campaign.json").write_text(json.dumps(config))
    return config


def measured(args: list[str], cwd: Path) -> tuple[float, float, str]:
    """(wall seconds, peak memory in MB, output) of ``python ARGS`` run to its end in
    ``cwd``, under this script's ``--peak`` (which prints the largest process's peak)."""
    start = time.monotonic()
    proc = subprocess.run([PY, __file__, "--peak", *args], cwd=cwd, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True,
                          env=os.environ | {"PINBENCH_LOCK": str(cwd / "lock")})
    wall = time.monotonic() - start
    if proc.returncode != 0:
        sys.exit(f"campaign_scale: {' '.join(args[:4])}... failed ({proc.returncode}):\n"
                 + proc.stdout[-3000:])
    peak = re.search(r"^peak_mb (\S+)$", proc.stdout, re.M)
    return wall, float(peak.group(1)) if peak else math.nan, proc.stdout


def size(paths: list[Path]) -> tuple[int, int]:
    """(bytes, files) below ``paths``."""
    files = [f for path in paths if path.exists()
             for f in ([path] if path.is_file() else path.rglob("*")) if f.is_file()]
    return sum(f.stat().st_size for f in files), len(files)


def synthetic_runs(work: Path, config: dict) -> None:
    """Every cell's runs table, as if measured: :func:`pinbench.stats.simulate.job_runs`
    records with the campaign's machine, cell, strategies and their placements' PUs."""
    from pinbench.results.layout import Layout
    from pinbench.results.placements import read_placement
    from pinbench.results.runs import write_runs
    from pinbench.stats.simulate import BASELINE, Condition, job_runs

    layout = Layout(str(work / Layout.of(config["campaign"]).root))
    condition = Condition("scale", strategies=len(STRATEGIES) - 1, n=config["repetitions"],
                          planted={"s1": 0.97})
    names = {BASELINE: BASELINE} | dict(zip(condition.names, STRATEGIES[1:], strict=True))
    rng = np.random.default_rng(1)
    for bench in config["benchmarks"]:
        for threads in THREADS:
            pus = {strategy: read_placement(layout.placement(MACHINE, bench, threads,
                                                             strategy)).pus
                   for strategy in STRATEGIES}
            records = [dataclasses.replace(
                run, machine=MACHINE, threads=threads, strategy=names[run.strategy],
                pus=" ".join(map(str, pus[names[run.strategy]] or [])))
                for run in job_runs(condition, rng, bench)]
            path = Path(layout.runs(MACHINE, bench, threads))
            path.parent.mkdir(parents=True, exist_ok=True)
            write_runs(records, path)


def analyse(work: Path) -> None:
    """The runs_table and analyse rules' work on the campaign of ``work``."""
    from types import SimpleNamespace

    from pinbench.results.layout import STATS_FILES, Layout
    from pinbench.workflow import campaign as campaigns, rule_bodies

    config, _ = campaigns.load_campaign(json.loads((work / "campaign.json").read_text()), work)
    layout = Layout(str(work / Layout.of(config["campaign"]).root))
    tables = [layout.runs(MACHINE, bench, n) for bench in config["benchmarks"] for n in THREADS]
    rule_bodies.runs_table(tables, layout.all_runs, layout.cells_summary)
    rule_bodies.analyse(SimpleNamespace(runs=layout.all_runs,
                                        topologies=[layout.topology(MACHINE)]),
                        {kind: layout.stats(kind) for kind in STATS_FILES},
                        rule_bodies.analyse_options(config), [MACHINE])


def report(work: Path) -> None:
    """The report rule's work on the campaign of ``work``, its machine measured."""
    from pinbench.report.html_report import build_report
    from pinbench.results.layout import Layout
    from pinbench.workflow import campaign as campaigns

    config, _ = campaigns.load_campaign(json.loads((work / "campaign.json").read_text()), work)
    build_report(Layout(str(work / Layout.of(config["campaign"]).root)), config, [MACHINE])


#: The report's pages :func:`open_pages` opens, relative to its folder.
OPENED = ("index.html", "benchmarks/b00000.html", f"machines/{MACHINE}.html")


def open_pages(work: Path) -> None:
    """Open the first page of the report of ``work``, a benchmark's page and the machine's in
    headless Chromium, one after the other; print each one's seconds from the request to
    its first frame drawn after its load event, and what the page logged as an error."""
    from playwright.sync_api import sync_playwright

    from pinbench.results.layout import Layout

    config = json.loads((work / "campaign.json").read_text())
    folder = work / Layout.of(config["campaign"]).report
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for name in OPENED:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            errors: list[str] = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda error: errors.append(str(error)))
            start = time.monotonic()
            page.goto((folder / name).as_uri(), wait_until="load", timeout=600_000)
            page.evaluate("() => new Promise(done => requestAnimationFrame(() => "
                          "setTimeout(done, 0)))")
            print(f"opened {name} {time.monotonic() - start:.2f} s, errors {len(errors)}"
                  + "".join(f"\n  {error}" for error in errors[:3]))
            page.close()
        browser.close()


def one_size(cells: int, repetitions: int, work: Path, measured_too: bool = True
             ) -> dict[str, float]:
    """Generate the campaign of ``cells`` cells in ``work``, run each step (without analysis
    and report of the measured campaign unless ``measured_too``), print its line; return
    each step's seconds."""
    from pinbench.report.html_report import INDEX_BUDGET
    from pinbench.results.layout import Layout
    from pinbench.workflow import accounting

    config = write_campaign(cells, repetitions, work)
    results = work / Layout.of(config["campaign"]).root
    run = ["-m", "pinbench", "run", "campaign.json"]
    found: dict[str, float] = {}

    wall, peak, _ = measured(run + ["-n"], work)
    found["planning"] = wall
    print(f"N={cells}: planning (run -n) {wall:.1f} s, {peak:.0f} MB", flush=True)

    since = time.time()
    wall, peak, _ = measured(run, work)
    found["scheduling"] = wall
    line = accounting.where_time_went(accounting.job_timings(Layout(str(results)), since),
                                      since, wall)
    snakemake = re.search(r"Snakemake (\d+(?:\.\d+)?)(ms|s|min)", line)
    found["Snakemake"] = float(snakemake.group(1)) * {"ms": 1e-3, "s": 1, "min": 60}[
        snakemake.group(2)] if snakemake else math.nan
    placed, files = size(list(results.glob("*/placements")))
    report_bytes, report_files = size([results / "report"])
    print(f"N={cells}: scheduling (run) {wall:.1f} s, {cells / wall * 60:.0f} cells/min, "
          f"{peak:.0f} MB; {line}; placements {placed / 1e6:.1f} MB in {files} files; "
          f"planned report {report_bytes / 1e6:.1f} MB in {report_files} files", flush=True)

    wall, peak, _ = measured(run, work)
    found["again"] = wall
    print(f"N={cells}: again, nothing to do {wall:.1f} s, {peak:.0f} MB", flush=True)
    if not measured_too:
        return found

    synthetic_runs(work, config)
    wall, peak, _ = measured([__file__, "--step", "analyse", str(work)], work)
    found["analysis"] = wall
    runs_bytes, _ = size([results / "runs.csv"])
    stats_bytes, stats_files = size([results / "stats"])
    print(f"N={cells}: analysis {wall:.1f} s, {peak:.0f} MB; runs.csv "
          f"{runs_bytes / 1e6:.1f} MB ({cells * len(STRATEGIES) * repetitions} runs), stats "
          f"{stats_bytes / 1e6:.1f} MB in {stats_files} files", flush=True)

    shutil.rmtree(results / "report")
    wall, peak, _ = measured([__file__, "--step", "report", str(work)], work)
    found["report"] = wall
    report_bytes, report_files = size([results / "report"])
    index_bytes, _ = size([results / "report" / "index.html"])
    page_bytes, _ = size([results / "report" / "benchmarks" / "b00000.html",
                          results / "report" / "benchmarks" / "b00000.js"])
    fixed, per_cell = INDEX_BUDGET
    budget = (fixed + per_cell * cells) / 1e6
    print(f"N={cells}: report {wall:.1f} s, {peak:.0f} MB; {report_bytes / 1e6:.1f} MB in "
          f"{report_files} files; index.html {index_bytes / 1e6:.2f} MB "
          f"({index_bytes / cells:.0f} bytes per cell; budget {budget:.2f} MB), "
          f"a benchmark's page and data {page_bytes / 1e3:.1f} KB "
          f"({page_bytes / len(THREADS) / 1e3:.1f} KB per cell)", flush=True)

    wall, _, out = measured([__file__, "--step", "open", str(work)], work)
    found["opening"] = float(re.search(r"^opened index.html (\S+) s", out, re.M).group(1))
    print(f"N={cells}: in headless Chromium (started: {wall:.1f} s in all): "
          + "; ".join(line.removeprefix("opened ") for line in out.splitlines()
                      if line.startswith(("opened ", "  "))), flush=True)
    return found


def exponents(costs: dict[int, dict[str, float]]) -> str:
    """Per step, the exponent of cost ~ N^e fitted over the sizes (log-log least squares),
    and between the two largest sizes (where fixed costs such as imports weigh least)."""
    sizes = sorted(costs)
    fits = []
    for step in costs[sizes[0]]:
        values = [costs[n][step] for n in sizes]
        if len(sizes) > 1 and all(v > 0 for v in values):
            fit = np.polyfit(np.log(sizes), np.log(values), 1)[0]
            last = math.log(values[-1] / values[-2]) / math.log(sizes[-1] / sizes[-2])
            fits.append(f"{step} {fit:.2f} ({last:.2f})")
    return ("fitted exponents (cost ~ N^e; in brackets: between the two largest N): "
            + ", ".join(fits))


def peak(args: list[str]) -> int:
    """Run ``python ARGS`` to its end, then print the peak memory of the largest process."""
    proc = subprocess.run([PY, *args], check=False)
    print(f"peak_mb {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f}")
    return proc.returncode


def main() -> int:
    if sys.argv[1:2] == ["--peak"]:
        return peak(sys.argv[2:])
    if sys.argv[1:2] == ["--step"]:
        {"analyse": analyse, "report": report, "open": open_pages}[sys.argv[2]](Path(sys.argv[3]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--big", action="store_true", help="add N = 10,000")
    parser.add_argument("--repetitions", type=int, default=10)
    parser.add_argument("--keep", help="generate the campaigns in DIR/N and keep them")
    parser.add_argument("--workflow-only", action="store_true",
                        help="planning and scheduling only (no analysis, no measured report)")
    args = parser.parse_args()
    sizes = sorted({*args.sizes, *([10000] if args.big else [])})
    if any(n % len(THREADS) for n in sizes):
        parser.error(f"each size must be a multiple of {len(THREADS)} (the thread counts)")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    print(f"# campaign_scale: commit {commit}, {os.cpu_count()} CPUs, load "
          f"{os.getloadavg()[0]:.2f}; {TOPOLOGY}, threads {THREADS}, strategies {STRATEGIES}, "
          f"{args.repetitions} repetitions", flush=True)
    costs = {}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(args.keep) if args.keep else Path(tmp)
        for cells in sizes:
            costs[cells] = one_size(cells, args.repetitions, base / str(cells),
                                    not args.workflow_only)
    print(exponents(costs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
