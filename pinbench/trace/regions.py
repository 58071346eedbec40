"""Tracing per parallel region: the tracer's list of regions made into a regions file.

With ``PINBENCH_TRACE_REGIONS=<listing>`` the tsan runtime (pintools/tsan_rt.c, "Per
region") writes, at exit, each region's matrix and sidecar beside ``<listing>``
(``<listing>.<k>.csv``, ``.json``) and the listing itself: per region the module and file
address of its fork call's return address, its instances, its time and its counted
accesses. :func:`regions_of` turns that into a :class:`~pinbench.results.regions.Regions`
(:mod:`pinbench.results.regions`, the file), resolving each call site with ``addr2line``.
The Valgrind tool writes the same listing (``--regions``); the Pin tool none (docs/tracing.md,
"Per parallel region").
"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from pinbench.graph.matrix import MatrixError, read_matrix
from pinbench.results.regions import Region, Regions, region_key
from pinbench.trace.build import TraceError


def where(module: str, address: int) -> str | None:
    """``file:line (function)`` of the call that returns to file address ``address`` of
    ``module`` (``addr2line -f -C`` of the address before it, the call instruction), or None
    where the module has no debug information for it (or addr2line is missing)."""
    tool = shutil.which("addr2line")
    if tool is None or address < 1:
        return None
    try:
        said = subprocess.run([tool, "-f", "-C", "-e", module, f"0x{address - 1:x}"],
                              capture_output=True, text=True, timeout=30).stdout.split("\n")
    except (OSError, subprocess.TimeoutExpired):
        return None
    if len(said) < 2 or said[1].startswith("??"):
        return None
    line = said[1].split(" (discriminator")[0]
    function = said[0] if said[0] != "??" else "?"
    return f"{Path(line.rsplit(':', 1)[0]).name}:{line.rsplit(':', 1)[-1]} ({function})"


def regions_of(listing: Path, threads: int, accesses: int) -> Regions:
    """The regions of the listing the runtime wrote at ``listing``, for a trace of
    ``threads`` threads whose whole program counted ``accesses`` accesses. TraceError (one
    line) when the listing or a region's matrix is missing or unusable (a program linked
    with a runtime older than per-region tracing writes none)."""
    try:
        found = json.loads(listing.read_text())["regions"]
    except FileNotFoundError:
        raise TraceError("the program wrote no list of parallel regions: relink it with the "
                         "LDFLAGS of `pinbench trace --print-flags` (a runtime from before "
                         "per-region tracing)") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise TraceError(f"unusable list of parallel regions {listing}: {exc}") from None
    total_ns = sum(entry["time_ns"] for entry in found) or 1
    regions = []
    for entry in found:
        try:
            matrix = read_matrix(entry["matrix"])
        except (MatrixError, OSError) as exc:
            raise TraceError(f"unusable matrix of a parallel region: {exc}") from None
        if len(matrix) != threads:
            raise TraceError(f"{entry['matrix']}: {len(matrix)} rows, not {threads}")
        key = region_key(entry["module"], entry["address"])
        regions.append(Region(
            key=key, where=where(entry["module"], entry["address"]) or key,
            instances=entry["instances"],
            access_share=round(entry["accesses"] / accesses, 6) if accesses else 0.0,
            time_share=round(entry["time_ns"] / total_ns, 6),
            time_s=entry["time_ns"] / 1e9, matrix=matrix.tolist()))
    attributed = sum(region.access_share for region in regions)
    return Regions(threads, regions, round(max(0.0, 1.0 - attributed), 6))
