"""The default campaign measured with the fixed design and with the sequential one, side by
side in one call: runs, wall time, and whether the verdicts agree.

Runs ``.venv/bin/snakemake --cores all`` on the campaign (config/config.yaml unless
``--configfile``) twice from scratch, as campaigns ``<name>-fixed`` and
``<name>-sequential`` (``design:`` set; their ``results/`` folders removed first, and left
for a look), timing each call from outside (spawn to exit): the fixed one at the campaign's
``repetitions``, the sequential one at the maximum with the power of as many fixed runs
(:func:`sequential_maximum`, its tests counted from the fixed campaign's cells). Then, per
design: the runs measured (the runs table's rows), the call's wall time and the measuring
processes' own time (their accounts: :meth:`Layout.account`), the quiet waits; and per cell
(machine, benchmark, threads) whether both designs name the same strategy faster,
report-wide (★) and by the cell's own verdict (☆), or both none, and the same outcome (faster,
slower or none). Two campaigns measure different runs, under whatever load each met; so the
sequential rule (at most ``repetitions`` rounds) is also replayed on the fixed campaign's own
runs (each strategy's in their order standing for its rounds), and its report-wide verdicts
compared with the fixed design's on the same runs, as analysed today (one-sided) and with the
sequential design's test at one look (two-sided with a sign).

``--pairs K`` measures K campaigns of each design, alternating which goes first (fixed,
sequential, sequential, fixed, ...: a load that rises or falls through the call weighs on
both), and compares the verdicts of every fixed campaign with its sequential partner's and, for
what the machine alone changes, two campaigns of the same design with each other. The last
line sums the runs, the wall time and the measuring time of each design over its campaigns,
with the wall time the simulation's factor predicts: the fixed campaigns' wall time less what
their runs' share of it would save (building, tracing, placing, the explained runs, the
analysis and the report do not depend on the design).

``--private-lock`` measures under a lock of its own, so that another campaign on a shared
machine does not hold this one's jobs (their runs then overlap: say so beside the times).
The simulation predicts the runs saved (``python -m pinbench.stats.simulate_sequential``):
after the fixed campaign, the noise of its runs (:func:`~pinbench.stats.simulate_sequential.
spread_of`), its shape (cells, experiments tested per cell) and the median speedup it measured
for each experiment make a simulated campaign, whose factor (fixed runs over sequential ones),
error and power are printed as the prediction (``--campaigns``: how many simulated);
docs/performance.md records a call's figures.

Usage: ``.venv/bin/python perf/sequential_design.py [--configfile FILE] [--private-lock]
[--campaigns N] [--pairs K]``
"""
from __future__ import annotations

import argparse
import copy
import csv
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import yaml

from pinbench.results.layout import Layout
from pinbench.workflow import campaign

if TYPE_CHECKING:
    from pinbench.stats.simulate_sequential import Condition

ROOT = Path(__file__).resolve().parent.parent
DESIGNS = ("fixed", "sequential")


def measure(config: dict, folder: Path, env: dict[str, str]) -> dict:
    """One design's campaign from scratch: runs, wall time, accounts, verdicts by cell."""
    layout = Layout.of(config["campaign"])
    shutil.rmtree(ROOT / layout.root, ignore_errors=True)
    path = folder / f"{config['campaign']}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    start = time.monotonic()
    proc = subprocess.run([str(ROOT / ".venv" / "bin" / "snakemake"), "--cores", "all",
                           "--configfile", str(path)], cwd=ROOT, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    wall = time.monotonic() - start
    if proc.returncode != 0:
        sys.exit(f"sequential_design: snakemake failed ({proc.returncode}):\n{proc.stdout[-3000:]}")
    with open(ROOT / layout.all_runs, newline="") as handle:
        runs = sum(1 for _ in csv.DictReader(handle))
    with open(ROOT / layout.stats("verdicts"), newline="") as handle:
        verdicts = {(row["machine"], row["benchmark"], row["threads"]): row
                    for row in csv.DictReader(handle)}
    accounts = [json.loads((ROOT / layout.account(*cell)).read_text()) for cell in verdicts
                if (ROOT / layout.account(*cell)).exists()]
    return {"runs": runs, "wall_s": wall, "verdicts": verdicts,
            "measuring_s": sum(a.get("measuring_s", 0.0) for a in accounts),
            "quiet_wait_s": sum(a.get("quiet_wait_s", 0.0) for a in accounts),
            "decided": proc.stdout.count("every comparison decided after"),
            "dropped": proc.stdout.count(" dropped: ")}


def fixed_runs(config: dict) -> tuple[list, dict]:
    """The fixed campaign's runs and, by cell, its experiments (identical placements, up to
    the machines' symmetries, one experiment: :func:`pinbench.stats.verdicts.experiments`)."""
    from pinbench.place.symmetry import experiment_key
    from pinbench.results.runs import read_runs
    from pinbench.stats.verdicts import experiments
    from pinbench.topology import parse_xml

    layout = Layout.of(f"{config['campaign']}-fixed")
    records = read_runs([ROOT / layout.all_runs])
    trees = {m: parse_xml((ROOT / layout.topology(m)).read_text(), m)
             for m in {r.machine for r in records}}
    cells: dict[tuple, list] = {}
    for r in records:
        cells.setdefault((r.machine, r.benchmark, r.threads), []).append(r)
    return records, {cell: experiments(runs, lambda m, pus: experiment_key(trees[m], pus),
                                       config.get("strategies", ()))
                     for cell, runs in cells.items()}


def replay(config: dict, records: list, cells: dict) -> tuple[dict, dict, int]:
    """The sequential design's job rule and analysis on the fixed campaign's runs: each
    experiment's successful runs in their order stand for its rounds (the verdicts by cell,
    the fixed design's two-sided ones, and the runs the rule keeps)."""
    from pinbench.stats.analyse import report_tests, verdict_tables
    from pinbench.stats.sequential import stopping_rounds
    from pinbench.workflow.jobsettings import sequential_design

    alpha = 1 - config.get("confidence", 0.95)
    design = sequential_design(campaign_config(config), maximum=True)
    design["alpha"] = alpha / report_tests(cells.values(), design["baseline"])
    kept = []
    for cell, groups in sorted(cells.items()):
        runs = sorted((r for r in records if (r.machine, r.benchmark, r.threads) == cell
                       and r.counts), key=lambda r: r.order_index)
        mine = {s: [r for r in runs if r.strategy == s] for s in dict.fromkeys(
            r.strategy for r in runs)}
        if design["baseline"] not in mine or min(map(len, mine.values())) < design["maximum"]:
            kept += runs  # failed runs: not replayed
            continue
        rounds = stopping_rounds(design["baseline"], {s: [r.time_s for r in rs]
                                                      for s, rs in mine.items()},
                                 design["maximum"], design["alpha"], design["power"])
        kept += [dataclasses.replace(r, repetition=k) for s, rs in mine.items()
                 for k, r in enumerate(rs[:rounds[s]])]
    verdicts, _ = verdict_tables(kept, design["baseline"], alpha,
                                 order=config.get("strategies", ()), sequential=design)
    # the same test at one look on every run: the fixed design, two-sided with a sign
    two_sided, _ = verdict_tables(records, design["baseline"], alpha,
                                  order=config.get("strategies", ()),
                                  sequential=design | {"looks": 1})
    return ({(v["machine"], v["benchmark"], str(v["threads"])): v for v in verdicts},
            {(v["machine"], v["benchmark"], str(v["threads"])): v for v in two_sided},
            len(kept))


def sequential_maximum(loaded: dict, cells: dict) -> int:
    """The sequential design's maximum with the power of the fixed campaign's repetitions
    (:func:`pinbench.stats.sequential.maximum_for`), its tests counted as its jobs count
    them."""
    from pinbench.stats.analyse import report_tests
    from pinbench.stats.sequential import maximum_for

    alpha = (1 - loaded["confidence"]) / report_tests(cells.values(), loaded["baseline"])
    return maximum_for(loaded["repetitions"], alpha / 2, loaded["power"])


def campaign_config(config: dict) -> dict:
    """The campaign as loaded (its defaults filled in), design sequential."""
    loaded, _ = campaign.load_campaign(copy.deepcopy(config) | {"design": "sequential"}, ROOT)
    return loaded


def predicted(records: list, cells: dict, baseline: str, runs: int, campaigns: int,
              alpha: float) -> tuple[dict, Condition]:
    """The simulation's rates (:func:`pinbench.stats.simulate_sequential.measure`) for a
    campaign of the fixed one's shape (cells, experiments tested per cell) whose runs are
    drawn, with replacement, from each experiment's own runs in the fixed campaign (a
    bootstrap: their shape, tails, noise and effects as measured, where the lognormal model
    has one spread for all, :func:`pinbench.stats.simulate_sequential.spread_of`; both
    predicted 1.40-1.47x on the same campaign, below the 1.77-1.94x measured: the measured
    differences are taken as real effects, and most did not come back in the next campaign);
    an experiment whose median speedup is above 1 counts as faster (for power)."""
    from pinbench.stats.simulate import BASELINE
    from pinbench.stats.simulate_sequential import Condition, measure, spread_of

    shape = {cell: [g for g in groups if baseline not in g.strategies]
             for cell, groups in sorted(cells.items())
             if any(baseline in g.strategies for g in groups)}
    base = {cell: next(g for g in cells[cell] if baseline in g.strategies) for cell in shape}
    strategies = max(len(tested) for tested in shape.values())
    by_cell = tuple({f"s{k + 1}": float(np.median(g.times) / np.median(base[cell].times))
                     for k, g in enumerate(tested)} for cell, tested in shape.items())
    samples = tuple({BASELINE: tuple(base[cell].times)}
                    | {f"s{k + 1}": tuple(g.times) for k, g in enumerate(tested)}
                    for cell, tested in shape.items())
    condition = Condition("the fixed campaign's runs, drawn again", cells=len(shape),
                          strategies=strategies, n=runs, spread=spread_of(records),
                          by_cell=by_cell, samples=samples)
    return measure(condition, campaigns, alpha, seed=38, processes=2), condition


def campaign_order(pairs: int) -> list[str]:
    """The designs' campaigns in the order measured: pairs alternate which design goes first
    (fixed, sequential, sequential, fixed, ...), so that a load rising or falling through the
    call weighs on both alike.

    >>> campaign_order(2)
    ['fixed', 'sequential', 'sequential', 'fixed']
    """
    return [d for k in range(pairs) for d in (DESIGNS if k % 2 == 0 else DESIGNS[::-1])]


def agreement(first: dict, second: dict, names: tuple[str, str]) -> list[str]:
    """Lines on the cells where two campaigns' verdicts agree (report-wide, the cell's own,
    the outcome), naming the cells where they do not."""
    cells, lines = sorted(set(first) | set(second)), []
    for column, mark in (("best_report", "report-wide"), ("best", "the cell's own"),
                         ("outcome", "outcomes (faster, slower, none)")):
        same = [c for c in cells if c in first and c in second
                and first[c][column] == second[c][column]]
        lines.append(f"  {mark}: the same in {len(same)} of {len(cells)} cells" + "".join(
            f"; {'/'.join(c)}: {names[0]} {first.get(c, {}).get(column) or 'none'}, "
            f"{names[1]} {second.get(c, {}).get(column) or 'none'}"
            for c in cells if c not in same))
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configfile", help="the campaign (default: config/config.yaml)")
    parser.add_argument("--private-lock", action="store_true",
                        help="a machine lock of its own (others' measurements do not hold it)")
    parser.add_argument("--campaigns", type=int, default=40,
                        help="simulated campaigns for the prediction (default %(default)s)")
    parser.add_argument("--pairs", type=int, default=2,
                        help="campaigns of each design, alternating (default %(default)s)")
    args = parser.parse_args()
    config = yaml.safe_load(Path(args.configfile or ROOT / "config" / "config.yaml").read_text())
    env = dict(os.environ)
    found: dict[str, list[dict]] = {design: [] for design in DESIGNS}
    repetitions = {"fixed": config.get("repetitions", 35)}
    with tempfile.TemporaryDirectory() as tmp:
        if args.private_lock:
            env["PINBENCH_LOCK"] = str(Path(tmp) / "machine.lock")
        print(f"# {config['campaign']}, repetitions {repetitions['fixed']}; {args.pairs} "
              f"campaigns of each design ({', '.join(campaign_order(args.pairs))}); lock "
              f"{'private' if args.private_lock else 'shared'}; load average "
              f"{os.getloadavg()[0]:.2f} before", flush=True)
        for design in campaign_order(args.pairs):
            r = measure(config | {"campaign": f"{config['campaign']}-{design}",
                                  "design": design, "repetitions": repetitions[design]},
                        Path(tmp), env)
            found[design].append(r)
            print(f"{design:>10}: {r['runs']} runs, {r['wall_s']:.1f} s wall (measuring "
                  f"{r['measuring_s']:.1f} s, quiet waits {r['quiet_wait_s']:.1f} s); cells "
                  f"decided early {r['decided']}, strategies dropped or futile {r['dropped']}; "
                  f"load average {os.getloadavg()[0]:.2f} after", flush=True)
            if design == "fixed" and len(found["fixed"]) == 1:
                records, experiments = fixed_runs(config)
                loaded = campaign_config(config)
                rates, condition = predicted(records, experiments, loaded["baseline"],
                                             loaded["repetitions"], args.campaigns,
                                             1 - loaded["confidence"])
                fixed, sequential = rates["fixed, two-sided"], rates["sequential"]
                factor = fixed["runs"] / sequential["runs"]
                power = {name: "-" if r["power"] is None else f"{r['power']:.0%}"
                         for name, r in (("fixed", fixed), ("sequential", sequential))}
                print(f"# predicted (simulation, {args.campaigns} campaigns of {condition.cells} "
                      f"cells x {condition.strategies} experiments tested, each drawn from its "
                      f"runs in the fixed campaign, median spread {condition.spread:.2%}): fixed "
                      f"/ sequential runs {factor:.2f}x; false "
                      f"claims report-wide {sequential['false']:.1%} (fixed "
                      f"{fixed['false']:.1%}); faster ones found {power['sequential']} (fixed "
                      f"{power['fixed']})", flush=True)
                repetitions.setdefault("sequential", sequential_maximum(loaded, experiments))
                print(f"# the sequential campaign: at most {repetitions['sequential']} rounds, "
                      f"the power of {loaded['repetitions']} fixed runs", flush=True)
    for k, (fixed, sequential) in enumerate(zip(found["fixed"], found["sequential"])):
        print(f"verdicts, fixed {k + 1} and sequential {k + 1}:")
        print("\n".join(agreement(fixed["verdicts"], sequential["verdicts"],
                                  ("fixed", "sequential"))))
    for design in DESIGNS:
        if len(found[design]) > 1:  # two campaigns of one design: what the machine varies
            print(f"verdicts, {design} 1 and {design} 2 (the same design twice):")
            print("\n".join(agreement(found[design][0]["verdicts"],
                                      found[design][1]["verdicts"], (design, design))))
    replayed, two_sided, runs = replay(config, records, experiments)
    print(f"the sequential rule (at most {loaded['repetitions']} rounds) replayed on the first "
          f"fixed campaign's runs (each strategy's in their order): {runs} of "
          f"{found['fixed'][0]['runs']} runs")
    cells = sorted(replayed)
    for name, other in (("fixed", found["fixed"][0]["verdicts"]),
                        ("fixed, two-sided", two_sided)):
        same = [c for c in cells if c in other and other[c]["best_report"] ==
                replayed[c]["best_report"]]
        print(f"  report-wide verdicts as the {name} design's on the same runs in {len(same)} "
              f"of {len(cells)} cells"
              + "".join(f"; {'/'.join(c)}: {name} {other.get(c, {}).get('best_report') or 'none'}"
                        f", sequential {replayed[c]['best_report'] or 'none'}"
                        for c in cells if c not in same))
    print(totals(found, factor))
    return 0


def totals(found: dict[str, list[dict]], factor: float) -> str:
    """The last line: runs, wall time and the measuring jobs' time, fixed over sequential
    summed over the campaigns, and the wall time the simulation's ``factor`` predicts: the
    fixed campaigns' wall time less what their runs would save (their measuring time less
    its share 1 / factor); building, tracing, placing, the explained runs, the analysis and
    the report do not depend on the design."""
    total = {d: {key: sum(r[key] for r in found[d]) for key in ("runs", "wall_s", "measuring_s")}
             for d in DESIGNS}
    fixed, sequential = total["fixed"], total["sequential"]
    predicted_wall = fixed["wall_s"] - fixed["measuring_s"] * (1 - 1 / factor)
    walls = ", ".join(f"{f['wall_s'] / s['wall_s']:.2f}x"
                      for f, s in zip(found["fixed"], found["sequential"]))
    return (f"# fixed / sequential over {len(found['fixed'])} campaigns each: runs "
            f"{fixed['runs'] / sequential['runs']:.2f}x (predicted {factor:.2f}x), measuring "
            f"{fixed['measuring_s'] / sequential['measuring_s']:.2f}x, wall time "
            f"{fixed['wall_s'] / sequential['wall_s']:.2f}x (predicted "
            f"{fixed['wall_s'] / predicted_wall:.2f}x; by pair {walls})")


if __name__ == "__main__":
    sys.exit(main())
