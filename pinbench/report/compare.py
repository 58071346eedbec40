"""``pinbench compare A B``: the same cells of two campaigns compared, a page, a table and an
exit status for a regression gate.

    pinbench compare A B [--threshold PERCENT] [--confidence 0.95] [--out DIR]
                         [--store FILE] [--allow-other-machines]

A and B are each a campaign's results folder (``results/<campaign>``), its campaign file
(the results then are ``results/<campaign>`` of the directory pinbench is started in), or
the id of a campaign in the results store (``pinbench store add``,
:mod:`pinbench.results.store`). A is the reference: every (machine, benchmark, threads,
strategy) both measured gets the ratio of B's median time to A's, its interval and a verdict
(``slower``, ``faster``, ``no measurable difference`` with the ratio that could have been
found, or ``not tested``), by :mod:`pinbench.stats.regression`, report-wide over the cells.
Cells only one campaign measured are listed. A machine whose topology differs between the
two is refused in one line (``--allow-other-machines``: a warning instead); other
differences of a machine (host, kernel, compiler, OpenMP runtime, pinbench version) are one
warning line each.

Prints one line per cell, writes ``index.html`` and ``comparison.csv`` into ``--out``
(default ``results/compare/<A>-vs-<B>``), and exits with **0** when no cell is slower, **1**
when some cell is slower (beyond ``--threshold`` percent), **2** on a usage or input error
(no cell in common included).
"""
from __future__ import annotations

import argparse
import datetime
import re
import sys
from pathlib import Path

from pinbench.results.layout import COMPARISONS, Layout
from pinbench.results.store import DEFAULT_STORE, Campaign, Store, from_results
from pinbench.topology import TopologyError, parse_xml

#: What a machine's environment.json says that a comparison should know differs.
ENVIRONMENT_KEYS = ("hostname", "kernel", "compiler", "openmp_runtime")


class InputError(ValueError):
    """A campaign that cannot be read or compared (one line)."""


def resolve(spec: str, store: Path) -> tuple[Campaign, str]:
    """The campaign ``spec`` names (results folder, campaign file or stored id) and a short
    label of it for file names."""
    path = Path(spec)
    if path.is_dir():
        return from_results(path), path.resolve().name
    if path.is_file():
        from pinbench.workflow.project import CampaignError, read_campaign

        try:
            config, _, _ = read_campaign(path, Path.cwd())
        except CampaignError as exc:
            raise InputError(f"{spec}: {exc}") from None
        return from_results(Path(Layout.of(config["campaign"]).root)), config["campaign"]
    if re.fullmatch(r"\d+", spec):
        campaign = Store(store).get(int(spec))
        return campaign, f"{campaign.name}-{spec}"
    raise InputError(f"{spec}: no such results folder, campaign file or stored campaign id")


def _shape(xml: str) -> str:
    """What a topology's comparison looks at: its levels and placeable PUs."""
    try:
        tree = parse_xml(xml)
    except TopologyError:
        return xml
    return f"{tree.summary()} ({' '.join(map(str, tree.placeable))})"


def machine_differences(a: Campaign, b: Campaign, machines: list[str]
                        ) -> tuple[list[str], list[str]]:
    """(topologies that differ, other differences): one line each, per machine of
    ``machines`` both campaigns recorded."""
    topologies, others = [], []
    for name in machines:
        ma, mb = a.machines.get(name), b.machines.get(name)
        if ma is None or mb is None:
            continue
        if ma.topology and mb.topology and _shape(ma.topology) != _shape(mb.topology):
            topologies.append(f"machine {name!r}: the topologies differ (A: "
                              f"{_shape(ma.topology)}; B: {_shape(mb.topology)})")
        env_a, env_b = ma.environment or {}, mb.environment or {}
        changed = [f"{key} {env_a.get(key)!r} -> {env_b.get(key)!r}" for key in ENVIRONMENT_KEYS
                   if env_a and env_b and env_a.get(key) != env_b.get(key)]
        version_a, version_b = (env.get("pinbench", {}).get("version") for env in (env_a, env_b))
        if env_a and env_b and version_a != version_b:
            changed.append(f"pinbench {version_a} -> {version_b}")
        if changed:
            others.append(f"machine {name!r}: " + "; ".join(changed))
    return topologies, others


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def cell_line(row: dict) -> str:
    """One compared cell, as the command prints it."""
    name = f"{row['machine']}/{row['benchmark']}/t{row['threads']} {row['strategy']}"
    interval = (f" [{_ratio(row['ratio_low'])}, {_ratio(row['ratio_high'])}]"
                if row["ratio_low"] is not None else "")
    text = f"{name}: B/A {_ratio(row['ratio'])}{interval} {row['verdict']}"
    if row["same_as"]:
        return f"{name}: as {row['same_as']} (the same runs)"
    if row["verdict"] in ("slower", "faster"):
        return text + f" (p {row['p_report']:.2g}, report-wide)"
    if row["verdict"] == "not tested":
        return text + f" ({row['runs_a']} and {row['runs_b']} runs)"
    found = row["detectable_ratio"]
    return text + (f" (a ratio beyond {found:.4g} or 1/{found:.4g} would have been found)"
                   if found else " (no difference could have been found with these runs)")


def write_outputs(out: Path, context: dict) -> None:
    """``index.html`` and ``comparison.csv`` of a comparison into ``out``."""
    from pinbench.report.export import csv_text
    from pinbench.report.html_report import page_environment
    from pinbench.stats.regression import COLUMNS

    out.mkdir(parents=True, exist_ok=True)
    (out / "comparison.csv").write_text(csv_text(context["rows"], COLUMNS, context["meta"]))
    page = page_environment().get_template("compare.html.j2").render(context)
    (out / "index.html").write_text(page)


def _side(campaign: Campaign, label: str) -> dict:
    who = campaign.provenance
    return {"name": campaign.name, "label": label, "source": campaign.source,
            "version": who.get("version"), "commit": who.get("commit"),
            "machines": sorted(campaign.machines)}


def main(argv: list[str] | None = None) -> int:
    """Compare the cells of two campaigns: B against A, a regression gate."""
    parser = argparse.ArgumentParser(
        prog="pinbench compare", description=main.__doc__,
        epilog="exit status: 0 no cell slower, 1 some cell slower (report-wide), 2 an error")
    parser.add_argument("a", help="the reference: results folder, campaign file or stored id")
    parser.add_argument("b", help="the campaign compared with it (same forms)")
    parser.add_argument("--threshold", type=float, default=0.0, metavar="PERCENT",
                        help="only a difference beyond this many percent counts (default 0)")
    parser.add_argument("--confidence", type=float, default=0.95,
                        help="1 - the report-wide error rate (default 0.95)")
    parser.add_argument("--out", type=Path, help="the folder of the page and the table "
                        "(default results/compare/A-vs-B)")
    parser.add_argument("--store", type=Path, default=DEFAULT_STORE,
                        help=f"the results store, for ids (default {DEFAULT_STORE})")
    parser.add_argument("--allow-other-machines", action="store_true",
                        help="compare machines whose topologies differ (a warning)")
    args = parser.parse_args(argv)
    if not 0 < args.confidence < 1:
        parser.error(f"--confidence must be strictly between 0 and 1, not {args.confidence}")
    if args.threshold < 0:
        parser.error(f"--threshold must be at least 0, not {args.threshold}")
    try:
        (a, label_a), (b, label_b) = resolve(args.a, args.store), resolve(args.b, args.store)
        runs_a, runs_b = a.records(), b.records()
    except (OSError, ValueError) as exc:
        print(f"pinbench compare: error: {exc}", file=sys.stderr)
        return 2
    from pinbench.stats.cells import describe_cells
    from pinbench.stats.regression import compare, gate

    times_a = {key: cell.times for key, cell in describe_cells(runs_a).items()}
    times_b = {key: cell.times for key, cell in describe_cells(runs_b).items()}
    machines = sorted({key[0] for key in times_a if key in times_b})
    if not machines:
        print(f"pinbench compare: error: {a.source} and {b.source} have no cell (machine, "
              f"benchmark, threads, strategy) in common: nothing to compare", file=sys.stderr)
        return 2
    topologies, others = machine_differences(a, b, machines)
    if topologies and not args.allow_other_machines:
        print(f"pinbench compare: error: {topologies[0]}: not the same machine "
              "(--allow-other-machines compares anyway)", file=sys.stderr)
        return 2
    warnings = topologies + others
    for line in warnings:
        print(f"pinbench compare: WARNING: {line}", file=sys.stderr)
    alpha = 1 - args.confidence
    rows, only_a, only_b = compare(times_a, times_b, args.threshold / 100, alpha)
    failed = gate(rows)
    tests = [row for row in rows if not row["same_as"]]
    slower = sum(row["verdict"] == "slower" for row in tests)
    faster = sum(row["verdict"] == "faster" for row in tests)
    summary = (f"{len(rows)} cells compared ({len(tests)} tests): {slower} slower, "
               f"{faster} faster "
               f"(report-wide, error rate {alpha:g}, threshold {args.threshold:g}%)")
    for row in rows:
        print(cell_line(row))
    for side, keys in (("A", only_a), ("B", only_b)):
        for machine, bench, threads, strategy in keys:
            print(f"{machine}/{bench}/t{threads} {strategy}: only in {side}")
    gate_line = f"gate: {'FAIL' if failed else 'pass'}: {summary}"
    print(gate_line)
    out = args.out or Path(COMPARISONS) / f"{label_a}-vs-{label_b}"
    generated = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    meta = {"a": a.source, "b": b.source, "threshold_percent": f"{args.threshold:g}",
            "confidence": f"{args.confidence:g}", "generated": generated, "tool": "pinbench"}
    context = {"a": _side(a, label_a), "b": _side(b, label_b), "rows": rows, "meta": meta,
               "only_a": only_a, "only_b": only_b, "warnings": warnings, "failed": failed,
               "summary": summary, "threshold": args.threshold, "alpha": alpha,
               "generated": generated}
    try:
        write_outputs(out, context)
    except OSError as exc:
        print(f"pinbench compare: error: {exc}", file=sys.stderr)
        return 2
    print(f"report: {out / 'index.html'}")
    return 1 if failed else 0
