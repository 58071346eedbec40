"""The report's parallel regions of a benchmark: where each is, its shares, how it differs.

Beside each affinity matrix a per-region trace may have written its regions file
(:mod:`pinbench.results.regions`); a benchmark's page lists, per machine and thread count,
each region's source location and key, its instances, its shares of the accesses and of the
time, and how far its matrix is from the whole program's
(:func:`pinbench.results.regions.distance`: 0, the same pairs of threads share in the same
proportions; 1, no pair in common). Regions that differ much are what the ``per-region``
strategy places on their own (:mod:`pinbench.place.per_region`).
"""
from __future__ import annotations

from pinbench.report.campaign_results import MachineResults
from pinbench.results.regions import distance


def regions_section(machine: str, benchmark: str, regions: list[dict],
                    whole: list[list[float]]) -> dict:
    """The section of one trace: ``regions`` as its file lists them (``key``, ``where``,
    ``instances``, ``access_share``, ``time_share``, ``matrix``), ``whole`` the whole
    program's matrix.

    >>> regions_section("m", "b", [{"key": "b+0x1", "where": "b.c:3 (main)", "instances": 2,
    ...     "access_share": 0.5, "time_share": 0.25, "matrix": [[0, 1], [1, 0]]}],
    ...     [[0, 4], [4, 0]])["rows"][0]["distance"]
    0.0
    """
    return {"machine": machine, "benchmark": benchmark, "threads": len(whole),
            "rows": [{"where": r["where"], "key": r["key"], "instances": r["instances"],
                      "access_share": r["access_share"], "time_share": r["time_share"],
                      "distance": distance(r["matrix"], whole)} for r in regions]}


def regions_sections(machine: MachineResults) -> list[dict]:
    """The sections of every per-region trace of a machine, in path order
    (:attr:`MachineResults.regions`)."""
    return [regions_section(machine.name, bench, [vars(r) for r in regions.regions],
                            whole.tolist()) for bench, regions, whole in machine.regions]
