"""Where a machine's node-bound jobs run: here, or on its node of a SLURM cluster.

Reading a machine's topology, building, tracing, describing its environment and measuring
must happen on the measured machine. For a machine with ``slurm`` settings that is a node
of the cluster: those rules get one variant per such machine (``measure_on_slurm_1``...),
submitted by Snakemake's SLURM executor (``snakemake-executor-plugin-slurm``) with the
resources below; every other machine's variant is a local rule, run where Snakemake runs.
A measurement asks for the whole node (``--exclusive``, every CPU), so nothing else of
the campaign runs there while it measures.
"""
from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass

from pinbench.errors import PinbenchError


@dataclass(frozen=True)
class Place:
    """One variant of the node-bound rules: its name suffix, the machines it runs (a wildcard
    constraint), whether it is a local rule, and the SLURM settings of its machine."""

    suffix: str
    machines: str
    local: bool
    slurm: dict | None = None

    def resources(self, exclusive: bool = False) -> dict:
        """The SLURM executor's resources of a job here (none for a local place).

        >>> Place("_on_slurm_1", "n1", False, {"partition": "p", "cpus": 8, "time_min": 60,
        ...       "node": "n1"}).resources(exclusive=True)["slurm_extra"]
        '--exclusive --nodelist=n1'
        """
        if self.slurm is None:
            return {}
        slurm = self.slurm
        found = {"slurm_partition": slurm["partition"], "cpus_per_task": slurm["cpus"],
                 "runtime": slurm["time_min"], "tasks": 1}
        extra = ["--exclusive"] if exclusive else []
        extra += [f"--nodelist={slurm['node']}"] if "node" in slurm else []
        if extra:
            found["slurm_extra"] = " ".join(extra)
        if "constraint" in slurm:
            found["constraint"] = slurm["constraint"]
        if "account" in slurm:
            found["slurm_account"] = slurm["account"]
        return found

    def threads(self) -> int:
        """The threads a measurement job declares: every CPU of the node, or every CPU here
        (Snakemake lowers it to the cores it was given, so the job still takes them all)."""
        return self.slurm["cpus"] if self.slurm else len(os.sched_getaffinity(0))


def places(machines: Iterable) -> list[Place]:
    """The variants: one local place for the machines measured or planned here (when any),
    then one per SLURM machine (:class:`pinbench.workflow.campaign.Machine`)."""
    machines = list(machines)
    here = [m.name for m in machines if m.slurm is None]
    found = [Place("", "|".join(map(re.escape, here)), True)] if here else []
    away = [m for m in machines if m.slurm is not None]
    return found + [Place(f"_on_slurm_{k}", re.escape(m.name), False, m.slurm)
                    for k, m in enumerate(away, 1)]


class NotOnNode(PinbenchError, RuntimeError):
    """A SLURM machine's job ran outside a SLURM allocation (the campaign ran locally)."""


def check_on_node(machine) -> None:
    """Refuse to do a SLURM machine's work here: outside an allocation it would read, build
    and measure the machine running Snakemake instead."""
    if machine.slurm is not None and "SLURM_JOB_ID" not in os.environ:
        raise NotOnNode(f"machine {machine.name} is measured on a SLURM node: run the campaign "
                        "with --workflow-profile slurm (here it would measure this host)")


def unreachable(machines: Iterable, timeout_s: float = 20) -> dict[str, str]:
    """machine name -> why its SLURM partition or node cannot be used now (``sinfo``), for
    each SLURM machine; nothing is asked inside a SLURM job (the node checks nothing)."""
    if "SLURM_JOB_ID" in os.environ:
        return {}
    problems = {}
    for machine in machines:
        if machine.slurm is None:
            continue
        slurm = machine.slurm
        argv = ["sinfo", "--noheader", "--partition", slurm["partition"], "--format", "%N"]
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s)
        except (OSError, subprocess.TimeoutExpired) as exc:
            problems[machine.name] = f"the SLURM cluster cannot be asked ({exc})"
            continue
        said = (proc.stderr.strip().splitlines() or [""])[-1]
        if proc.returncode != 0:
            problems[machine.name] = f"the SLURM cluster is not reachable ({said})"
        elif not proc.stdout.strip():
            problems[machine.name] = f"SLURM has no partition {slurm['partition']!r}"
        elif "node" in slurm and not _holds(proc.stdout, slurm["node"]):
            problems[machine.name] = (f"SLURM partition {slurm['partition']!r} has no node "
                                      f"{slurm['node']!r}")
    return problems


def _holds(nodelists: str, node: str) -> bool:
    """Whether ``sinfo``'s node lists (``n[1-3],m1``) hold ``node`` (expanded by scontrol)."""
    proc = subprocess.run(["scontrol", "show", "hostnames", ",".join(nodelists.split())],
                          capture_output=True, text=True, check=False)
    return node in proc.stdout.split()
