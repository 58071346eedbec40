"""A program's own clock read right, or refused in one line: its unit, its stream, the last of
many (issue 35), with small programs of our own (tests/data/clock_*.c)."""
import json

import pytest
from conftest import DATA, compile_c, run_campaign
from test_launcher import job, placement
from test_workflow import write_campaign

from pinbench.measure.job import measure_one

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


def measured(binary: str, args: list[str], time):
    """One unbound run of ``binary args`` whose time is read as ``time`` says."""
    return measure_one(job(binary, {"os": placement("os", None)}, argv=[binary, *args],
                           time=time), "os", 0, 0)


def test_a_time_printed_in_milliseconds_is_recorded_in_seconds(clocks):
    record = measured(clocks["ms"], ["40"], {"regex": r"^Time consumed\(ms\): (\S+)$",
                                             "unit": "ms", "stream": "stdout",
                                             "match": "first"})
    assert record.ok and record.time_source == "regex", record.failure
    assert 0.04 <= record.time_s <= record.wall_s
    assert record.time_resolution_s == pytest.approx(1e-5)  # printed to 0.01 ms


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
