"""The campaign's runs table and per-cell summary; the machine-wide lock."""
import csv
import fcntl
import os
import threading
import time
from pathlib import Path

from conftest import run_record

from pinbench.measure.lock import MachineLock
from pinbench.results.layout import Layout
from pinbench.results import formats
from pinbench.results.runs import TABLE_COLUMNS, read_runs, write_runs
from pinbench.workflow.rule_bodies import runs_table
from pinbench.stats.cells import describe_cells
from pinbench.workflow.outcome import campaign_line


def row(strategy, rep, time_s, ok=True, verification="ok", failure=""):
    return run_record(strategy=strategy, repetition=rep, order_index=rep, ok=ok,
                      failure=failure, time_s=time_s, verification=verification)


def test_failed_and_misplaced_runs_are_counted_but_left_out_of_the_statistics(tmp_path):
    rows = [row("compact", 0, 1.0), row("compact", 1, 3.0), row("compact", 2, 2.0),
            row("compact", 3, 100.0, ok=False, failure="exit status 3: boom"),
            row("compact", 4, 5.0, verification="mismatch"),
            row("os", 0, 4.0, verification="n/a")]
    write_runs(rows, tmp_path / "t2.csv")
    cells = describe_cells(read_runs([tmp_path / "t2.csv"]))
    compact = cells[("m", "b", 2, "compact")]
    assert (compact.n, compact.failures, compact.misplaced) == (3, 1, 1)
    assert (compact.verified, compact.pinned) == (4, 5)
    assert compact.mean_s == 2.0 and compact.median_s == 2.0 and compact.variance == 1.0
    assert compact.min_s == 1.0 and compact.times == [1.0, 3.0, 2.0]
    assert cells[("m", "b", 2, "os")].pinned == 0 and cells[("m", "b", 2, "os")].variance is None


def test_a_run_that_failed_at_its_start_is_failed_not_misplaced(tmp_path):
    """A program that exits at once (a usage error) reports no thread, bound or not: its
    runs count once, as failed, in the cells and in the campaign's closing line."""
    rows = [row(strategy, rep, 0.01, ok=False, failure="exit status 2: usage",
                verification=verification)
            for rep, (strategy, verification) in enumerate(
                [("os", "missing"), ("os", "missing"), ("compact", "missing"),
                 ("compact", "mismatch")])]
    write_runs(rows, tmp_path / "t2.csv")
    cells = describe_cells(read_runs([tmp_path / "t2.csv"]))
    assert [(c.failures, c.misplaced) for c in cells.values()] == [(2, 0), (2, 0)]
    layout = Layout(str(tmp_path))
    write_runs(rows, Path(layout.all_runs))
    assert campaign_line(layout, 0.05).startswith(
        "4 runs in 1 measurement job(s), 4 failed, 0 misplaced")


def test_collect_concatenates_tables_and_lists_failures(tmp_path):
    write_runs([row("os", 0, 1.0, verification="n/a")], tmp_path / "a.csv")
    write_runs([row("os", 0, 2.0, ok=False, failure="timeout after 5 s", verification="n/a"),
                row("compact", 0, 2.0, verification="missing")], tmp_path / "b.csv")
    text = runs_table([tmp_path / "a.csv", tmp_path / "b.csv"], tmp_path / "runs.csv",
                      tmp_path / "summary.txt")
    with (tmp_path / "runs.csv").open() as handle:
        table = list(csv.DictReader(handle))
    assert len(table) == 3 and list(table[0]) == TABLE_COLUMNS
    assert table[0]["format"] == str(formats.CURRENT["runs"])
    assert "3 runs; 1 failed; 1 pinned runs failed placement verification" in text
    assert "FAILED 1 x m/b/t2: timeout after 5 s" in text
    assert (tmp_path / "summary.txt").read_text() == text


def test_machine_lock_waits_for_its_holder(tmp_path):
    path = str(tmp_path / "machine.lock")
    holder = os.open(path, os.O_RDWR | os.O_CREAT)
    fcntl.flock(holder, fcntl.LOCK_EX)
    said = []
    threading.Timer(0.3, os.close, [holder]).start()
    start = time.monotonic()
    with MachineLock(path, said.append):
        waited = time.monotonic() - start
    assert waited >= 0.25 and said and said[0].startswith("waiting for the machine lock")


def test_records_survive_the_csv_unchanged(tmp_path):
    """Typed records written and read back are equal, and a second write is byte-identical."""
    records = [row("compact", 0, 1.25), row("os", 1, None, ok=False, failure="exit status 3"),
               run_record(strategy="random", repetition=2, order_index=2, time_s=0.1 + 0.2,
                          load_1m=2.37, user_s=1e-06, timed_out=True, pus="1 0")]
    write_runs(records, tmp_path / "a.csv")
    back = read_runs([tmp_path / "a.csv"])
    assert back == records and back[1].time_s is None and back[2].time_s == 0.1 + 0.2
    write_runs(back, tmp_path / "b.csv")
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    assert [r.counts for r in back] == [True, False, True]
