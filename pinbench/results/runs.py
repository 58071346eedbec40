"""The runs table: one row per run, written by the measuring process, read by stats and report.

Each measurement job writes ``runs/<bench>/t<N>.csv``; the campaign's
``runs.csv`` is their concatenation. :class:`RunRecord` is the one typed row,
:func:`read_runs` the one reader and :attr:`RunRecord.counts` the one rule
that says whether a run's time enters the statistics. A table's last column,
``format``, is its version (:mod:`pinbench.results.formats`).
"""
from __future__ import annotations

import csv
import dataclasses
import json
import math
import os
import typing
from pathlib import Path

from pinbench.results import formats
from pinbench.results.rows import columns, record, required

#: The values of ``verification``: every thread ran where planned, some thread ran elsewhere,
#: some thread reported no binding, the run was not bound (``os``), the runtime ran another
#: number of threads than asked (the program set its own count, bound or not).
VERIFIED, MISMATCH, MISSING, NOT_BOUND, THREADS = "ok", "mismatch", "missing", "n/a", "threads"
#: Verification results that mean the run did not run as planned.
MISPLACED = (MISMATCH, MISSING, THREADS)


@dataclasses.dataclass
class RunRecord:
    """One finished run of one strategy's repetition in a measurement job."""

    machine: str
    benchmark: str
    threads: int
    strategy: str
    repetition: int
    order_index: int  #: position in the job's run order
    ok: bool  #: exit status 0, validated, timed
    failure: str  #: why not ok ("" when ok)
    time_s: float | None  #: the run's time: wall time, or the benchmark's own (time_source)
    time_source: str  #: "wall" or "regex"
    wall_s: float  #: monotonic clock around spawn..wait
    user_s: float
    sys_s: float
    exit_status: int  #: exit code, or -signal
    timed_out: bool
    validated: bool
    verification: str  #: "ok", "mismatch", "missing", "threads", or "n/a" (not bound)
    pus: str  #: the planned PU of each thread, space-separated ("" when not bound)
    observed: str  #: the binding the runtime reported, "thread:cpus ..."
    load_1m: float  #: load average before the run
    governor: str
    started_at: str  #: ISO 8601, UTC
    # Columns added later: tables and journals written before them read as these defaults.
    #: the strategies whose placement is this run's (one experiment, measured once)
    stands_for: str = ""
    #: the share of all CPUs' time that other processes used during the run
    other_cpu: float | None = None
    #: seconds the launcher waited for the machine to be quiet before the run
    quiet_wait_s: float | None = None
    #: one unit of the last digit of the time the program printed (None: wall time)
    time_resolution_s: float | None = None
    #: the benchmark's other metrics (``metrics`` in the campaign), as JSON: {"name": value}
    metrics: str = ""
    #: the host the run ran on (nodes of a pooled SLURM machine differ)
    host: str = ""
    #: the bytes the program wrote to stdout and stderr (the last MiB of each is read, the
    #: last 64 KiB kept); None: counted since
    output_bytes: int | None = None
    #: the program's counters, as JSON: {"name": count} (perf_event_open in the launcher:
    #: task_clock_ns, context_switches, cpu_migrations, page_faults, and cycles, instructions,
    #: llc_misses, energy_uj where the machine has them; null: never scheduled); "": none, or
    #: written before them
    counters: str = ""
    #: a per-region placement's regions, "key:cpu,cpu ..." (thread i's CPU in each; ``pus``
    #: is then the rest of the program's placement); "": one placement for the whole program
    regions: str = ""
    #: the parallel regions' starts the re-binding shim handled (None: not a per-region run)
    region_instances: int | None = None
    #: the shim's sched_setaffinity calls, and the thread-seconds spent in it
    rebinds: int | None = None
    rebind_s: float | None = None
    #: the thread starts the shim sampled and checked (:mod:`pinbench.measure.rebind`)
    rebind_checked: int | None = None
    #: why the re-bindings were not verified, in one line ("" when they were)
    rebind_note: str = ""

    @property
    def rebind_per_instance_s(self) -> float | None:
        """The re-binding shim's time per region instance (thread-seconds; None: no region)."""
        return self.rebind_s / self.region_instances \
            if self.rebind_s is not None and self.region_instances else None

    @property
    def counter_values(self) -> dict[str, float | None]:
        """:attr:`counters` read: name -> count."""
        return json.loads(self.counters) if self.counters else {}

    @property
    def cell(self) -> tuple[str, str, int, str]:
        """(machine, benchmark, threads, strategy): the cell the run belongs to."""
        return self.machine, self.benchmark, self.threads, self.strategy

    @property
    def misplaced(self) -> bool:
        """The run succeeded, and its placement was checked and found wrong (mismatch, or a
        thread reported nothing). A failed run is failed only: a program that exits at its
        start reports no thread, bound or not, and is not misplaced for it (each run counts
        once, as failed or as misplaced)."""
        return self.ok and self.verification in MISPLACED

    @property
    def counts(self) -> bool:
        """Whether the run's time enters the statistics: it succeeded and was not misplaced."""
        return self.ok and not self.misplaced

    def as_row(self) -> dict:
        """The record as a plain dict, in column order (for CSV and the journal).

        Every field is a plain value, so no deep copy (``dataclasses.asdict``) is needed:
        this runs between two runs of a measurement job."""
        return {name: getattr(self, name) for name in RUN_COLUMNS}


#: The counters a run's ``counters`` may hold, in the launcher's order (launcher.c's
#: COUNTERS, then energy; tests/test_counters.py checks the two agree).
COUNTERS = ("task_clock_ns", "context_switches", "cpu_migrations", "page_faults", "cycles",
            "instructions", "llc_misses", "energy_uj")
#: What the verdicts and tables may be on (a campaign's ``metric``): the run's time, or one
#: of its counters (lower is better for each).
METRICS = ("time", *COUNTERS)


def on_metric(records: list[RunRecord], metric: str) -> list[RunRecord]:
    """The records with ``metric`` in place of the time (``time``: as they are); a run that
    did not count it does not count (failed: ``counter M not counted``)."""
    if metric == "time":
        return records
    out = []
    for record in records:
        value = record.counter_values.get(metric)
        if value is None:
            out.append(dataclasses.replace(record, ok=False, time_s=None, failure=record.failure
                                           or f"counter {metric} not counted"))
        else:
            out.append(dataclasses.replace(record, time_s=float(value)))
    return out


RUN_COLUMNS = columns(RunRecord)


def finite(record: RunRecord) -> RunRecord:
    """``record`` made where a run ends, with each number that is not finite (NaN, an
    infinity) taken out and the run failed for it: whatever a run met, its record is standard
    JSON, which the journal holds (and refuses anything else).

    >>> r = finite(RunRecord(**{**dict.fromkeys(RUN_COLUMNS, ""), "ok": True,
    ...                         "time_s": float("nan"), "other_cpu": float("inf")}))
    >>> r.ok, r.failure, r.time_s, r.other_cpu
    (False, 'time_s, other_cpu not a finite number', None, None)
    """
    bad = [name for name in RUN_COLUMNS if isinstance(value := getattr(record, name), float)
           and not math.isfinite(value)]
    if not bad:
        return record
    why = f"{', '.join(bad)} not a finite number"
    return dataclasses.replace(record, ok=False, failure="; ".join(filter(None, [
        record.failure, why])), **dict.fromkeys(bad))


#: The columns of a runs table: a run record's, then the table's version.
TABLE_COLUMNS = [*RUN_COLUMNS, formats.KEY]
#: The columns every runs table has; the others were added later and may be absent.
REQUIRED_COLUMNS = required(RunRecord)


def from_row(row: dict[str, str], source) -> RunRecord:
    """A record from one CSV row of strings, of any version (a later column absent: its
    default; FormatError: a version this pinbench does not know)."""
    row = formats.read("runs", row, source)
    return record(RunRecord, row)


def read_runs(paths: list[Path]) -> list[RunRecord]:
    """The records of one or more runs tables, in file order (ValueError: not a runs table,
    or one of a version this pinbench does not know)."""
    records = []
    for path in paths:
        with Path(path).open(newline="") as handle:
            records.extend(records_of(handle, path))
    return records


def records_of(lines: typing.Iterable[str], source) -> list[RunRecord]:
    """The records of one runs table's lines (a file, or its text kept elsewhere: the
    results store), ``source`` naming it in errors; as :func:`read_runs`."""
    reader = csv.DictReader(lines)
    missing = [name for name in REQUIRED_COLUMNS if name not in (reader.fieldnames or [])]
    if missing:
        formats.version("runs", next(reader, {}), source)  # a newer table says so
        raise ValueError(f"{source}: not a runs table (no column {missing[0]!r})")
    try:
        return [from_row(row, source) for row in reader]
    except formats.FormatError:
        raise
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{source}, line {reader.line_num}: {exc}") from None


def write_table(path: Path, columns: list[str], rows) -> None:
    """Write CSV rows (dicts) under a header, atomically: no reader sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, columns)
        writer.writeheader()
        writer.writerows(rows)
    os.replace(tmp, path)


def write_runs(records: list[RunRecord], path: Path) -> None:
    """Write a runs table, rows in the given order, its version on each (:func:`write_table`)."""
    write_table(path, TABLE_COLUMNS,
                (formats.stamp("runs", record.as_row()) for record in records))
