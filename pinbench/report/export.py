"""The report's tables and figures as files beside it, for papers.

``report/overview.csv`` and ``overview.md`` (the first screen's matrix, one row per
(benchmark, threads, machine, strategy) in CSV, the matrix itself in Markdown),
``report/summary.csv`` and ``summary.md`` (the study's Tables 1-3), and the affinity
matrices' figures as ``report/figures/<name>.svg`` (the figures a page draws itself are
saved from the page: ``report.js``); paths from :class:`pinbench.results.layout.Layout`.
Like hyperfine's exports, each file carries the campaign's metadata: CSV files as
leading ``# key: value`` lines (``pandas.read_csv(..., comment="#")`` skips them),
Markdown as a first paragraph, SVG files as Dublin Core metadata (set by
:mod:`pinbench.report.figures`; a figure saved from a page, as its title and description).
"""
from __future__ import annotations

import csv
import io
from pathlib import Path

from pinbench.report.campaign_data import warning_notes
from pinbench.report.campaign_results import Campaign
from pinbench.report.overview import FLAT_COLUMNS, flat_rows
from pinbench.results.layout import Layout
from pinbench.stats.cells import WARNINGS
from pinbench.stats.tables import PRECISION, SUMMARY_COLUMNS, significant_share


#: What a standalone SVG file starts with (the inline figures have it cut off).
SVG_PROLOG = '<?xml version="1.0" encoding="utf-8" standalone="no"?>\n'


def metadata(campaign: Campaign, generated: str) -> dict[str, str]:
    """What every export says about where it comes from."""
    return {"campaign": campaign.name, "generated": generated,
            "confidence": f"{campaign.confidence:g}", "baseline": campaign.baseline,
            "repetitions": str(campaign.config.get("repetitions", "")), "tool": "pinbench"}


def figure_metadata(meta: dict[str, str]) -> dict[str, str]:
    """The metadata as an SVG figure carries it (Dublin Core: Description, Date)."""
    return {"Description": "; ".join(f"{k}: {v}" for k, v in meta.items()),
            "Date": meta["generated"]}


def csv_text(rows: list[dict], columns: list[str], meta: dict[str, str]) -> str:
    """A table as CSV text, the metadata first as ``# key: value`` lines."""
    out = io.StringIO()
    out.writelines(f"# {key}: {value}\n" for key, value in meta.items())
    writer = csv.DictWriter(out, columns, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def _md_cell(value) -> str:
    """A value as a Markdown table cell: pipes escaped, no line breaks."""
    if value is None or value == "":
        return "–"
    if isinstance(value, float):
        value = f"{value:.4g}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def _md_table(header: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(map(_md_cell, header)) + " |",
             "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(map(_md_cell, row)) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _md_meta(title: str, meta: dict[str, str]) -> str:
    return (f"**{title}** — " + ", ".join(f"{k}: {v}" for k, v in meta.items()) + "\n\n")


def overview_markdown(matrix: dict, meta: dict[str, str]) -> str:
    """The overview matrix as a Markdown table: median speedups, ★ faster over the whole
    report, ☆ by its cell's verdict only, **bold** the cell verdict's best, ``= s`` the
    experiment of strategy s, warning marks."""
    header = ["benchmark", "threads"] + [f"{m}: {s}" for m in matrix["machines"]
                                         for s in matrix["strategies"]]
    body = []
    for row in matrix["rows"]:
        line = [row["benchmark"], row["threads"]]
        for machine in matrix["machines"]:
            entry = row["machines"].get(machine)
            if entry is None:
                line += ["–"] * len(matrix["strategies"])
                continue
            for group in entry["groups"]:
                for k, _ in enumerate(group["strategies"]):
                    line.append(_overview_text(group, entry, k))
        body.append(line)
    legend = ("Median speedup over the baseline (> 1: faster); " + matrix["legend"]
              + " **Bold**: the cell verdict's best; `= s` the same experiment as strategy s. "
              "Marks: "
              + "; ".join(f"{mark} {text}" for mark, text in WARNINGS.values()) + ".\n")
    return _md_meta("Overview", meta) + _md_table(header, body) + "\n" + legend


def _overview_text(group: dict, entry: dict, index: int) -> str:
    if group["baseline"]:
        text = f"baseline {group['median_s']:.4g} s" if group["median_s"] else "baseline"
    elif index > 0 or group["same_as"]:
        text = f"= {group['experiment'] if group['same_as'] else group['strategies'][0]}"
    elif group["speedup"] is None:
        text = "–"
    else:
        text = f"{group['speedup']:.3f}" + (" ★" if group["faster_report"] else
                                            " ☆" if group["faster"] else "")
        text = f"**{text}**" if group["best"] else text
    marks = group["marks"] + entry["marks"]
    return text + (f" ({' '.join(marks)})" if marks and index == 0 else "")


def summary_markdown(summary: list[dict], meta: dict[str, str]) -> str:
    """The study's Tables 1-3 as one Markdown table, its warnings as numbered notes."""
    marks, notes = warning_notes(summary)
    header = ["machine", "threads", "strategy", "speedup mean (geo)", "speedup median (geo)",
              "variance range", "faster (mean) [interval]", "faster (median) [interval]",
              f"benchmarks for ±{PRECISION:g}", "notes"]
    body = []
    for row, mark in zip(summary, marks):
        def speedup(stat: str) -> str:
            value, geo = row[f"overall_speedup_{stat}"], row[f"geomean_speedup_{stat}"]
            return "–" if value is None else f"{value:.4g} ({geo:.4g})"
        variance = ("–" if row["variance_min"] is None
                    else f"[{row['variance_min']:.3g}; {row['variance_max']:.3g}]")
        body.append([row["machine"], row["threads"], row["strategy"], speedup("mean"),
                     speedup("median"), variance, significant_share(row, "mean", "–"),
                     significant_share(row, "median", "–"),
                     row["benchmarks_for_precision"], " ".join(f"[{n}]" for n in mark)])
    text = _md_meta("The study's summary tables", meta) + _md_table(header, body)
    return text + "".join(f"\n[{n}] prop.test: {note}" for n, note in enumerate(notes, 1)) + \
        ("\n" if notes else "")


def _write(files: dict[str, str]) -> list[Path]:
    written = []
    for path, text in files.items():
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text)
        written.append(Path(path))
    return written


def write_tables(layout: Layout, matrix: dict, summary: list[dict],
                 meta: dict[str, str]) -> list[Path]:
    """Write the overview's and the summary's tables beside the report; return their paths."""
    return _write({
        layout.report_table("overview", "csv"): csv_text(flat_rows(matrix), FLAT_COLUMNS, meta),
        layout.report_table("overview", "md"): overview_markdown(matrix, meta),
        layout.report_table("summary", "csv"): csv_text(summary, SUMMARY_COLUMNS, meta),
        layout.report_table("summary", "md"): summary_markdown(summary, meta),
    })


def write_figures(layout: Layout, figures: dict[str, str]) -> list[Path]:
    """Write figures (name -> inline SVG text, metadata in it) as SVG files beside the
    report; return their paths."""
    return _write({layout.report_figure(name): SVG_PROLOG + svg for name, svg in figures.items()})
