"""Run-time re-binding per parallel region: the shim's plan, its record, its verification, its cost.

A placement with ``regions`` (:attr:`pinbench.results.placements.Placement.regions`, the
``per-region`` strategy) is measured with the re-binding shim (``rebind.c``, built by
``pinbench setup`` as the helper ``rebind``) preloaded: at the start of each parallel region
every OpenMP thread re-binds itself to its CPU in that region's placement, or in the
whole-program one (``pus``) for a region not placed on its own (docs/rebind.md). The run's
plan is a small text file (:func:`write_plan`) named by :data:`PLAN_VARIABLE`; the shim
writes its record, at the program's exit, to the file :data:`OUT_VARIABLE` names
(:func:`read_record`): the regions it saw and how often, where each thread was at the start
of the sampled region instances (the first 8 of each call site, then every 64th), and the
time it spent. :func:`check` turns the record into the run's verification (``ok``,
``mismatch``, ``missing``, ``threads``: :mod:`pinbench.measure.verify`'s values) and the
record's fields (:func:`fields`).

The cost of a re-binding (:func:`rebind_cost_s`) is measured by ``pinbench setup`` once per
build of the shim (:func:`pinbench.measure.rebind_cost.calibrate`) and kept beside the
helpers' manifest, in :data:`~pinbench.measure.rebind_cost.COST_FILE`; without it,
:data:`~pinbench.measure.rebind_cost.DEFAULT_COST_S`.
"""
from __future__ import annotations

import atexit
import itertools
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field

from pinbench import native
from pinbench.measure import tool_files
from pinbench.measure.rebind_cost import COST_FILE, DEFAULT_COST_S
from pinbench.results.runs import MISMATCH, MISSING, THREADS, VERIFIED

#: The variables naming the run's plan and the shim's record.
PLAN_VARIABLE, OUT_VARIABLE = "PINBENCH_REBIND_PLAN", "PINBENCH_REBIND_OUT"
#: The plan's key of the whole-program placement.
DEFAULT = "default"


def shim() -> str:
    """The built shim (:class:`pinbench.native.NotBuilt`, one line, when it is not)."""
    return str(native.built("rebind"))


_folder: list[str] = []  # this process's folder of plans and records, made on first use
_numbers = itertools.count()


def run_files(name: str) -> tuple[str, str]:
    """A new plan file's path and its runs' record file's, named after ``name`` (a
    benchmark), in a folder of this process removed when it exits."""
    if not _folder:
        _folder.append(tempfile.mkdtemp(prefix="pinbench-rebind-"))
        atexit.register(shutil.rmtree, _folder[0], True)
    stem = os.path.join(_folder[0], f"{next(_numbers)}-{os.path.basename(name)}")
    return stem + ".plan", stem + ".record"


def format_regions(regions: list[dict]) -> str:
    """A run record's ``regions``: each region's key and its threads' CPUs.

    >>> format_regions([{"key": "a+0x10", "where": "a.c:3", "pus": [1, 0]}])
    'a+0x10:1,0'
    """
    return " ".join(f"{region['key']}:{','.join(map(str, region['pus']))}"
                    for region in regions)


def write_plan(pus: list[int], regions: list[dict], path: str) -> None:
    """The shim's plan: ``default`` and each region's key, each followed by thread i's CPU.

    >>> import tempfile; path = tempfile.mktemp()
    >>> write_plan([0, 1], [{"key": "a+0x10", "where": "a.c:3", "pus": [1, 0]}], path)
    >>> open(path).read()
    'default 0,1\\na+0x10 1,0\\n'
    """
    lines = [f"{DEFAULT} {','.join(map(str, pus))}"]
    lines += [f"{region['key']} {','.join(map(str, region['pus']))}" for region in regions]
    with open(path, "w") as handle:
        handle.write("\n".join(lines) + "\n")


def environment(env: dict[str, str], shim: str, plan: str, out: str) -> dict[str, str]:
    """``env`` with the shim preloaded (before any other preloaded library), its plan and
    where it writes its record.

    >>> environment({"LD_PRELOAD": "x.so"}, "/s.so", "/p", "/o")["LD_PRELOAD"]
    '/s.so:x.so'
    """
    preload = env.get("LD_PRELOAD", "")
    return env | {"LD_PRELOAD": shim + (f":{preload}" if preload else ""),
                  PLAN_VARIABLE: plan, OUT_VARIABLE: out}


@dataclass
class Sample:
    """One thread at the start of one sampled region instance (a ``sample`` line)."""

    key: str
    instance: int
    thread: int
    team: int
    planned: int  #: the CPU the shim bound it to (-1: none, a thread beyond the plan)
    cpu: int  #: where it ran (sched_getcpu)
    allowed: int  #: how many CPUs it was allowed
    first: int  #: the first of them
    error: int  #: errno of a failed sched_setaffinity, else 0


@dataclass
class Record:
    """What the shim wrote of one run."""

    regions: dict[str, tuple[str, int]]  #: call site -> (its plan's key, instances)
    samples: list[Sample] = field(default_factory=list)
    shim_s: float = 0.0  #: thread-seconds spent in the shim
    rebinds: int = 0  #: sched_setaffinity calls
    dropped: int = 0  #: samples not kept


def parse_record(text: str) -> Record | None:
    """The shim's record (None: not one, cut short, or malformed: a program that wrote over
    the file, say; the run's check then finds no record, and says so).

    >>> r = parse_record("pinbench-rebind 1\\nregion p+0x1 p+0x1 3\\n"
    ...                  "sample p+0x1 0 1 2 1 1 1 1 0\\ntotal 5000 2 0\\n")
    >>> r.regions, r.samples[0].cpu, r.shim_s, r.rebinds
    ({'p+0x1': ('p+0x1', 3)}, 1, 5e-06, 2)
    >>> [parse_record("pinbench-rebind 1\\n" + bad + "\\ntotal 5000 2 0\\n")
    ...  for bad in ("", "region p+0x1", "sample p+0x1 0 x", "sample p+0x1 0 1")]
    [None, None, None, None]
    >>> parse_record("pinbench-rebind 1\\ntotal 5000 two 0\\n") is None
    True
    """
    lines = text.splitlines()
    if not lines or lines[0] != "pinbench-rebind 1" or not lines[-1].startswith("total "):
        return None
    record = Record({})
    try:
        for line in lines[1:]:
            kind, *parts = line.split()
            if kind == "region":
                record.regions[parts[0]] = (parts[1], int(parts[2]))
            elif kind == "sample":
                record.samples.append(Sample(parts[0], *map(int, parts[1:])))
            elif kind == "total":
                ns, record.rebinds, record.dropped = map(int, parts)
                record.shim_s = ns * 1e-9
    except (ValueError, IndexError, TypeError):
        return None
    return record


def read_record(path: str) -> Record | None:
    """The shim's record of a run (None when it wrote none: the program did not exit
    normally, or did not load the shim); the file is removed once read."""
    text = tool_files.take(path)
    return parse_record(text) if text is not None else None


def check(record: Record | None, pus: list[int], regions: list[dict]) -> tuple[str, str]:
    """The run's verification and, when not ``ok``, why in one line: every sampled thread
    start ran on, and was allowed exactly, its CPU in its region's placement (``regions``,
    else ``pus``). ``missing``: no record, or no region sampled; ``threads``: a team of
    another size than planned; ``mismatch``: a thread elsewhere.

    >>> s = lambda cpu: Sample("p+0x1", 0, 1, 2, cpu, cpu, 1, cpu, 0)
    >>> check(Record({"p+0x1": ("p+0x1", 1)}, [s(0)]), [0, 1], [{"key": "p+0x1", "pus": [1, 0]}])
    ('ok', '')
    >>> check(Record({"p+0x1": ("default", 1)}, [s(0)]), [0, 1], [])[0]
    'mismatch'
    """
    if record is None:
        return MISSING, ("the re-binding shim wrote no record (the program ran no parallel "
                         "region, or did not exit normally)")
    if not record.samples:
        return MISSING, "the re-binding shim saw no parallel region"
    plans = {DEFAULT: pus} | {region["key"]: region["pus"] for region in regions}
    for sample in record.samples:
        plan = plans[record.regions.get(sample.key, (DEFAULT, 0))[0]]
        if sample.team != len(plan):
            return THREADS, (f"region {sample.key} ran {sample.team} threads, "
                             f"{len(plan)} planned")
        want = plan[sample.thread]
        if (sample.cpu, sample.allowed, sample.first) != (want, 1, want):
            why = f" (sched_setaffinity: {os.strerror(sample.error)})" if sample.error else ""
            return MISMATCH, (f"region {sample.key} instance {sample.instance}: thread "
                              f"{sample.thread} on CPU {sample.cpu}, planned {want}{why}")
    return VERIFIED, ""


def fields(record: Record | None) -> dict:
    """The run record's re-binding fields (:class:`pinbench.results.runs.RunRecord`)."""
    if record is None:
        return {}
    return {"region_instances": sum(count for _, count in record.regions.values()),
            "rebinds": record.rebinds, "rebind_s": round(record.shim_s, 9),
            "rebind_checked": len(record.samples)}


def rebind_cost_s() -> float:
    """Seconds per ``sched_setaffinity`` call, as ``pinbench setup`` measured it here
    (:func:`pinbench.measure.rebind_cost.calibrate`), else :data:`DEFAULT_COST_S`."""
    try:
        return float(json.loads((native.native_dir() / COST_FILE).read_text())["per_call_s"])
    except (OSError, ValueError, KeyError, TypeError):
        return DEFAULT_COST_S
