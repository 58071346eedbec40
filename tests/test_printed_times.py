"""A program's own clock read right, or refused in one line: its unit, its stream, the last of
many (issue 35), with small programs of our own (tests/data/clock_*.c); and a job whose
printed times cannot be its runs' gets no verdict until the campaign says they are meant."""
import json
import re

import pytest
from conftest import DATA, compile_c, run_campaign, run_record
from test_launcher import job, placement
from test_workflow import read_csv, write_campaign

from pinbench.measure.job import measure_one
from pinbench.results.printed_share import printed_share
from pinbench.results.runs import write_runs
from pinbench.cli import main as pinbench
from pinbench.stats.analyse import read_verdicts, verdict_tables

STEP_LINE, CLOCK_LINE = r"^step \d+: (\S+) ms$", r"^Wall clock (\S+)$"
#: 300 ms in 50 steps: the first step is 6 ms, and the team's start.
STEPS = ["300", "50"]


@pytest.fixture(scope="module")
def clocks(tmp_path_factory) -> dict[str, str]:
    """The test programs, built: ``ms`` (its clock in milliseconds), ``stderr`` (in seconds,
    on stderr), ``steps`` (a step's time in ms and a running clock after every step)."""
    folder = tmp_path_factory.mktemp("clocks")
    return {name: str(compile_c(DATA / f"clock_{name}.c", folder / name))
            for name in ("ms", "stderr", "steps")}


def measured(binary: str, args: list[str], time, repetition: int = 0):
    """One unbound run of ``binary args`` whose time is read as ``time`` says."""
    return measure_one(job(binary, {"os": placement("os", None)}, argv=[binary, *args],
                           time=time), "os", repetition, repetition)


def test_a_time_printed_in_milliseconds_is_recorded_in_seconds(clocks):
    record = measured(clocks["ms"], ["40"], {"regex": r"^Time consumed\(ms\): (\S+)$",
                                             "unit": "ms", "stream": "stdout",
                                             "match": "first"})
    assert record.ok and record.time_source == "regex", record.failure
    assert 0.04 <= record.time_s <= record.wall_s
    assert record.time_resolution_s == pytest.approx(1e-5)  # printed to 0.01 ms
    assert printed_share([record]).text() == ""


def test_milliseconds_read_as_seconds_lie_above_the_wall_time(clocks):
    """What ``time_regex`` made of the program before ``unit``: 40 s in a run of 0.04 s."""
    record = measured(clocks["ms"], ["40"], r"^Time consumed\(ms\): (\S+)$")
    assert record.ok and record.time_s >= 40
    share = printed_share([record])
    assert share.implausible and 500 < share.median <= 1000  # the run is a little longer
    assert share.text() == ("printed time above the run's wall time in 1 of 1 runs (median "
                            f"{share.median:.3g} times it: is time.unit the program's?): "
                            "no verdict")


def test_a_clock_on_stderr_is_refused_on_stdout_in_one_line_and_read_there(clocks):
    refused = measured(clocks["stderr"], ["30"], CLOCK_LINE)
    assert not refused.ok and refused.time_s is None
    assert refused.failure == (r"time regex '^Wall clock (\\S+)$' found no number in stdout (it "
                               "finds one in stderr: time: {stream: stderr}): First step "
                               "overhead 0.0")
    for stream in ("stderr", "both"):
        record = measured(clocks["stderr"], ["30"], {"regex": CLOCK_LINE, "unit": "s",
                                                     "stream": stream, "match": "first"})
        assert record.ok and 0.03 <= record.time_s <= record.wall_s, record.failure


@pytest.mark.parametrize("regex, match, low, high", [
    (CLOCK_LINE, "first", 0.005, 0.1),  # the first step alone
    (CLOCK_LINE, "last", 0.3, 1.0),  # the running clock's total
    (STEP_LINE, "sum", 0.3, 1.0),  # every step's time (in ms)
])
def test_a_running_clock_is_read_at_the_match_asked(clocks, regex, match, low, high):
    unit = "ms" if regex == STEP_LINE else "s"
    record = measured(clocks["steps"], STEPS, {"regex": regex, "unit": unit,
                                               "stream": "stdout", "match": match})
    assert record.ok, record.failure
    assert low * record.wall_s <= record.time_s <= high * record.wall_s


def test_a_sum_of_a_running_clock_lies_above_the_wall_time(clocks):
    record = measured(clocks["steps"], STEPS, {"regex": CLOCK_LINE, "unit": "s",
                                               "stream": "stdout", "match": "sum"})
    assert record.ok and printed_share([record]).above == 1


def test_a_first_step_in_every_run_is_said_and_confirmed_by_the_expected_share(clocks):
    records = [measured(clocks["steps"], STEPS, CLOCK_LINE, rep) for rep in range(3)]
    share = printed_share(records)
    assert share.implausible and share.below == 3 and share.above == 0
    assert "of the run's wall time (median), below the 10% expected in every run: a step " \
           "rather than the run? (time.match: last or sum): no verdict (time_share_expected: " \
        in share.text()
    confirmed = printed_share(records, expected=0.01)
    assert not confirmed.implausible and confirmed.text() == ""


def printed(time_s: float, wall_s: float = 1.0, **fields):
    """A successful run that printed ``time_s`` in a run of ``wall_s``."""
    return run_record(time_s=time_s, wall_s=wall_s, time_source="regex", **fields)


def test_what_is_said_of_printed_times_against_their_wall_times():
    assert printed_share([printed(0.9), printed(1.04)]).text() == ""  # within the tolerance
    # 1.2 s printed to 0.2 s may be 1.0 s: within the run
    assert printed_share([printed(1.2, time_resolution_s=0.2)]).above == 0
    some = printed_share([printed(0.9), printed(3.0)])
    assert some.above == 1 and not some.implausible and some.text().endswith("program's?)")
    assert printed_share([printed(0.05), printed(0.5)]).text() == ""  # below in one run only
    assert printed_share([printed(0.05), printed(0.05, ok=False, failure="x"),
                          run_record(time_s=1.0, wall_s=1.0)]).implausible
    mixed = printed_share([printed(0.05), printed(5.0)])
    assert mixed.implausible and mixed.text().endswith(": no verdict")
    assert printed_share([]).text() == "" and not printed_share([]).implausible


def test_a_cell_whose_printed_times_are_none_of_its_runs_gets_no_verdict():
    """Compact 20% faster than os, in printed times of 5% of each run: no test, no winner,
    nothing in the report-wide family, unless the benchmark expects such a share (or the
    verdicts are on a counter: nothing checked)."""
    runs = [printed(time, 20 * time, strategy=strategy, repetition=rep, order_index=k,
                    pus="" if strategy == "os" else "0 1",
                    verification="n/a" if strategy == "os" else "ok")
            for k, (strategy, rep, time) in enumerate(
                (s, r, (1.0 if s == "os" else 0.8) + r / 100)
                for s in ("os", "compact") for r in range(10))]
    [verdict], comparisons = verdict_tables(runs, "os", 0.05, time_shares={})
    assert verdict["printed_implausible"] and verdict["tests"] == 0 and not verdict["best"]
    assert verdict["tests_report"] == 0 and "below the 10% expected" in verdict["printed_time"]
    assert all(c["p_raw"] is None for c in comparisons)
    for shares in ({"b": 0.04}, None):
        [verdict], _ = verdict_tables(runs, "os", 0.05, time_shares=shares)
        assert verdict["best"] == "compact" and verdict["printed_time"] == ""
        assert not verdict["printed_implausible"]


def test_pinbench_analyse_takes_a_benchmark_s_expected_share(tmp_path, capsys):
    runs = tmp_path / "runs.csv"
    write_runs([printed(0.05 + rep / 100, strategy=strategy, repetition=rep, order_index=rep)
                for strategy in ("os", "compact") for rep in range(3)], runs)
    for option, implausible in (([], True), (["--time-share-expected", "b=0.04"], False)):
        assert pinbench(["analyse", str(runs), str(tmp_path / "out"), *option]) == 0
        [verdict] = read_verdicts(tmp_path / "out" / "verdicts.csv")
        assert verdict.printed_implausible is implausible
    assert pinbench(["analyse", str(runs), str(tmp_path / "out"), "--time-share-expected",
                     "b=2"]) == 2
    assert "expected BENCH=SHARE, a share in (0, 1], got 'b=2'" in capsys.readouterr().err


@pytest.mark.slow
def test_a_campaign_that_reads_a_step_time_gives_no_verdict_until_confirmed(tmp_path):
    """The running clock's first line read as the run's time: the job's line, the closing
    line and the report say so, and the cell gets no verdict; ``time_share_expected`` then
    gives it one, from the same runs (the key is no part of the measurement)."""
    bench = {"source": "tests/data/clock_steps.c", "input": " ".join(STEPS),
             "time_regex": CLOCK_LINE}
    work = write_campaign(tmp_path / "work", threads=[1], strategies=["os", "compact"],
                          machines={"here": {"topology": "auto"}},
                          benchmarks={"steps": bench})
    run = run_campaign(work)
    assert run.returncode == 0, run.stderr[-3000:]
    said = run.stdout + run.stderr
    assert "[here steps t1] 6 runs, 0 failed" in said and "below the 10% expected in " \
        "every run: a step rather than the run? (time.match: last or sum): no verdict" in said
    assert "no verdict in 1: their printed times are not their runs' (steps t1" in said
    results = work / "results" / "tiny"
    [verdict] = read_verdicts(results / "stats" / "verdicts.csv")
    assert verdict.printed_implausible and verdict.tests == 0 and not verdict.best
    page = (results / "report" / "benchmarks" / "steps.html").read_text()
    suggested = re.search(r'<span class="warn">printed time .* no verdict \(time_share_expected: '
                          r'([\d.e-]+) says so small a share is meant\)</span>', page)
    assert suggested, page  # the share itself depends on the machine's load: its value is read
    assert "no verdict in 1" in said and "Printed times that may not be the runs" in \
        (results / "report" / "index.html").read_text()

    journal = (results / "here" / "journal" / "steps" / "t1.jsonl").read_text()
    write_campaign(work, threads=[1], strategies=["os", "compact"],
                   machines={"here": {"topology": "auto"}},
                   benchmarks={"steps": bench | {"time_share_expected": float(suggested[1])}})
    run = run_campaign(work)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "measure steps" not in run.stdout + run.stderr
    assert (results / "here" / "journal" / "steps" / "t1.jsonl").read_text() == journal
    [verdict] = read_verdicts(results / "stats" / "verdicts.csv")
    assert not verdict.printed_implausible and verdict.tests == 1
    assert verdict.printed_time == ""
    assert {row["time_source"] for row in read_csv(results / "runs.csv")} == {"regex"}


@pytest.mark.slow
def test_the_shorthand_and_time_written_out_are_one_measurement(tmp_path):
    """A campaign measured with ``time_regex`` resumes with nothing to do when the time is
    written ``time: {regex: ...}`` (same measure rule's settings, same journal)."""
    work = write_campaign(tmp_path / "work", threads=[1], strategies=["os", "compact"],
                          machines={"here": {"topology": "auto"}},
                          benchmarks={"ms": {"source": "tests/data/clock_ms.c", "input": "20",
                                             "time_regex": r"^Time consumed\(ms\): (\S+)$"}})
    assert run_campaign(work).returncode == 0
    journal = work / "results" / "tiny" / "here" / "journal" / "ms" / "t1.jsonl"
    before = journal.read_text()
    header = json.loads(before.splitlines()[0])
    write_campaign(work, threads=[1], strategies=["os", "compact"],
                   machines={"here": {"topology": "auto"}},
                   benchmarks={"ms": {"source": "tests/data/clock_ms.c", "input": "20",
                                      "time": {"regex": r"^Time consumed\(ms\): (\S+)$"}}})
    again = run_campaign(work)
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr
    assert journal.read_text() == before and "time_regex" in header["fields"]["command"]
