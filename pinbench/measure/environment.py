"""What the machine and toolchain were when a campaign measured: recorded for the report."""
from __future__ import annotations

import json
import os
import platform
import re
import shlex
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

from pinbench.measure.system import Snapshot, as_dicts, system_checks
from pinbench.provenance import identity
from pinbench.results import formats


def _first_line(argv: list[str]) -> str:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    lines = (proc.stdout or proc.stderr).strip().splitlines()
    return lines[0] if lines else "unknown"


def openmp_runtime(binary: str) -> str:
    """The OpenMP runtime library a binary loads (from ``ldd``), e.g. ``libgomp.so.1``."""
    proc = subprocess.run(["ldd", binary], capture_output=True, text=True, check=False)
    for line in proc.stdout.splitlines():
        name = line.strip().split(" ")[0]
        if "omp" in name:
            return line.strip().split(" (0x")[0]
    return "none found"


def governors() -> str:
    """The CPU frequency governors in use (``unreadable`` when sysfs has none)."""
    found = {p.read_text().strip()
             for p in Path("/sys/devices/system/cpu").glob("cpu[0-9]*/cpufreq/scaling_governor")}
    return ", ".join(sorted(found)) or "unreadable"


def slurm_identity() -> dict:
    """The SLURM job and the node's features, when run inside a SLURM job (else {})."""
    job = os.environ.get("SLURM_JOB_ID")
    if job is None:
        return {}
    node = os.uname().nodename
    proc = subprocess.run(["scontrol", "show", "node", node], capture_output=True, text=True,
                          check=False)
    features = re.search(r"AvailableFeatures=(\S*)", proc.stdout)
    return {"slurm_job_id": job, "slurm_node": node,
            "slurm_node_features": features.group(1) if features else "unknown"}


def describe_machine(compiler: str, binary: str, since: Snapshot | None = None) -> dict:
    """Kernel, compiler, OpenMP runtime, governor and tool versions of this machine, and the
    checks of :mod:`pinbench.measure.system` (other processes' load excludes the workflow's;
    measured from ``since``, the workflow's start, or over a pause of half a second)."""
    return {
        "pinbench": identity(),
        "hostname": platform.node(),
        "kernel": f"{platform.system()} {platform.release()} {platform.machine()}",
        "compiler": _first_line([*shlex.split(compiler), "--version"]),
        "openmp_runtime": openmp_runtime(binary),
        "governor": governors(),
        "aslr_setting": Path("/proc/sys/kernel/randomize_va_space").read_text().strip(),
        "hwloc": _first_line(["lstopo-no-graphics", "--version"]),
        "python": sys.version.split()[0],
        "snakemake": version("snakemake"),
        "system_checks": as_dicts(system_checks(since=since)),
        **slurm_identity(),
    }


def write(compiler: str, binary: str, out: Path, since: Snapshot | None = None) -> None:
    """Write :func:`describe_machine` as JSON, with its version
    (:mod:`pinbench.results.formats`)."""
    out.write_text(json.dumps(formats.stamp("environment",
                                            describe_machine(compiler, binary, since)),
                              indent=1) + "\n")
