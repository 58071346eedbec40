"""The terminal of a campaign call, piece by piece: the events its processes tell, the display
that reads them, Snakemake's log as pinbench's logger plugin hears it. A whole campaign's
terminal is checked by tests/test_workflow.py's tiny campaign (the lines of its default
output, -q, -v, and a pseudo-terminal)."""
from __future__ import annotations

import io
import logging

import pytest
from snakemake_interface_logger_plugins.common import LogEvent

from pinbench import events
from pinbench.events import Told, warning
from pinbench.measure.progress import Progress
from pinbench.stats.analyse import VERDICT_COLUMNS, Verdict
from pinbench.workflow import outcome, snakemake_logger, terminal
from pinbench.workflow.terminal import Terminal


@pytest.fixture
def heard(tmp_path, monkeypatch):
    """A default terminal printing into a string, listening to a file of events."""
    monkeypatch.delenv(events.EVENTS, raising=False)
    out = io.StringIO()
    shown = Terminal(0, out, live=False)
    shown.start(tmp_path / "state")
    yield shown, out
    shown.stop()


def test_a_line_keeps_its_kind_through_a_plain_say(tmp_path, monkeypatch):
    said = []
    said.append(warning("[m b t2]", "WARNING: x"))  # a job's say(line): list.append, print
    assert said == ["[m b t2] WARNING: x"] and said[0].kind == "warning"
    assert said[0].key == "WARNING: x"
    monkeypatch.setenv(events.EVENTS, str(tmp_path / "events.jsonl"))
    events.tell(said[0])
    events.tell("a line")
    told, offset = events.read(tmp_path / "events.jsonl")
    assert [(e["kind"], e["text"], e["key"]) for e in told] == [
        ("warning", "[m b t2] WARNING: x", "WARNING: x"), ("line", "a line", "a line")]
    assert events.read(tmp_path / "events.jsonl", offset) == ([], offset)


def test_without_a_display_lines_are_printed_as_they_were(monkeypatch, capsys):
    monkeypatch.delenv(events.EVENTS, raising=False)
    monkeypatch.delenv(events.VERBOSITY, raising=False)
    assert events.verbosity() == 1  # a process no `pinbench run` started says everything
    events.tell(warning("[m b t2]", "WARNING: x"))
    events.tell(Told("", "progress", done=1))  # a job prints its own progress lines
    assert capsys.readouterr().err == "[m b t2] WARNING: x\n"


def test_an_error_is_printed_even_with_a_display(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(events.EVENTS, str(tmp_path / "events.jsonl"))
    events.tell(Told("python -m pinbench.measure: stopped (SIGINT)", "error"))
    assert "stopped (SIGINT)" in capsys.readouterr().err
    assert not (tmp_path / "events.jsonl").exists()


def test_a_torn_last_line_waits_for_its_end(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_text('{"kind": "line", "text": "a"}\n{"kind": "li')
    told, offset = events.read(path)
    assert [e["text"] for e in told] == ["a"]
    with path.open("a") as handle:
        handle.write('ne", "text": "b"}\n')
    assert [e["text"] for e in events.read(path, offset)[0]] == ["b"]


def test_the_display_counts_alike_warnings_of_jobs_and_says_each_once(heard):
    shown, out = heard
    for label in ("[m a t2]", "[m b t2]"):
        events.tell(warning(label, "other processes kept the CPUs busy: measuring anyway"))
    events.tell(warning("[m b t2]", "the first 3 runs all failed alike"))
    shown.stop()
    assert shown.warning_lines() == [
        "[m a t2] other processes kept the CPUs busy: measuring anyway (2 jobs)",
        "[m b t2] the first 3 runs all failed alike"]
    assert out.getvalue() == ""  # said with the closing lines, not as they come


def test_plain_progress_is_one_line_per_measurement_job_with_the_time_left(heard):
    shown, out = heard
    shown.planned({"measure": 2, "report": 1, "total": 3})
    now = [0.0]
    progress = Progress("[m a t2]", 10, 0, lambda line: None, None, ("m", "a", 2),
                        clock=lambda: now[0], tell=events.tell)
    for done in range(1, 11):
        now[0] += 2.0  # a run every 2 s
        progress.update(done, "compact", measured=True, final=done == 10)
    events.tell(Told("[m a t2] 10 runs, 1 failed", "done", cell="m/a/2", runs=10, failed=1))
    shown.stop()
    assert out.getvalue().splitlines() == [
        "measured m a t2: 10 runs, 1 failed (measurement job 1 of 2); 0.5 runs/s, "
        "about 20 s left"]


def test_quiet_prints_the_closing_lines_only():
    out = io.StringIO()
    shown = Terminal(-1, out, live=False)
    shown.say("header")
    shown.detail("a job's line")
    shown.warn("WARNING: x")
    shown.closing("campaign: 1 runs")
    assert out.getvalue() == "campaign: 1 runs\n"
    verbose = Terminal(1, out := io.StringIO(), live=True)
    verbose.detail("a job's line")
    verbose.warn("WARNING: x")
    assert out.getvalue() == "a job's line\nWARNING: x\n" and not verbose.live


def test_no_live_display_off_a_terminal_or_under_ci(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.delenv("CI", raising=False)
    assert terminal.is_live(Tty()) and not terminal.is_live(io.StringIO())
    monkeypatch.setenv("CI", "true")
    assert not terminal.is_live(Tty())


def record(event: LogEvent | None, level: int = logging.INFO, message: str = "",
           **fields) -> logging.LogRecord:
    """A log record as Snakemake makes one (its ``extra`` fields as attributes)."""
    made = logging.LogRecord("snakemake", level, __file__, 1, message, None, None)
    if event is not None:
        made.event = event
    made.__dict__.update(fields)
    return made


def test_the_logger_plugin_feeds_the_display_and_prints_only_errors(monkeypatch, capsys):
    shown = Terminal(0, io.StringIO(), live=False)
    monkeypatch.setattr(terminal, "_CURRENT", [shown])
    handler = snakemake_logger.LogHandler(None, None)
    handler.setFormatter(logging.Formatter("%(message)s"))
    handler.emit(record(LogEvent.RUN_INFO, stats={"measure": 3, "measure_slurm": 1,
                                                   "report": 1, "total": 5}))
    handler.emit(record(LogEvent.JOB_INFO, rule_name="measure", jobid=2))
    handler.emit(record(LogEvent.PROGRESS, done=2, total=5))
    handler.emit(record(None, message="Building DAG of jobs..."))
    assert (shown.measure_jobs, shown.steps, shown.stage) == (4, (2, 5), "measure")
    assert capsys.readouterr().err == ""
    handler.emit(record(LogEvent.JOB_ERROR, logging.ERROR, "Error in rule measure"))
    handler.emit(record(None, logging.WARNING, "Incomplete files"))
    assert capsys.readouterr().err == "Error in rule measure\nIncomplete files\n"


def verdict(**fields) -> Verdict:
    """A row of ``verdicts.csv`` (as :func:`pinbench.stats.analyse.read_verdicts` reads it):
    no winner, no drift, unless ``fields`` say otherwise."""
    return Verdict(**dict.fromkeys(VERDICT_COLUMNS) | {
        "baseline": "os", "tests": 2, "best": "", "stands_for": "", "speedup_median": None,
        "clear_winner": False, "best_report": "", "detectable": 1.21, "drift": False,
        "printed_implausible": False} | fields)


def test_a_cells_verdict_names_the_report_wide_winner_and_its_own_apart():
    won = dict(best="compact", stands_for="scatter gp", speedup_median=1.25)
    assert outcome.verdict_words(verdict(**won, best_report="compact", clear_winner=True)) == \
        "compact (= scatter, gp) 1.25x faster than os ★ (report-wide), a clear winner"
    assert outcome.verdict_words(verdict(**won)) == \
        "compact (= scatter, gp) 1.25x faster than os ☆ (this cell's own verdict)"
    assert outcome.verdict_words(verdict(**won, best_report="random")) == (
        "random faster than os ★ (report-wide); by the cell's own verdict compact (= scatter, "
        "gp) 1.25x faster than os ☆")
    assert outcome.verdict_words(verdict(drift=True)) == \
        "no strategy faster than os (it could have found 1.21x); its runs drift"
    assert outcome.verdict_words(verdict(tests=0, detectable=None)) == \
        "no verdict: too few usable runs"
