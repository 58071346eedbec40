"""Misbehaviours in combination (issue 40): a program of the tests' own
(``tests/data/misbehave.c``) misbehaves several ways at once, as ``tests/misbehaviours.py``
draws them (hypothesis, derandomised: the same combinations on every call), and each
measuring job, run in this process on the real launcher, completes: every run ok or failed in
one printable line naming its reasons, no process left, the journal and the runs table alike,
the next job measured."""
from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import tempfile
from pathlib import Path

import pytest
from conftest import compile_c
from hypothesis import HealthCheck, given, seed, settings, strategies as st
from misbehaviours import METRIC_REGEX, SOURCE, Misbehaviour, drawn
from test_launcher import TWO_PUS, _alive, job, placement

import pinbench.measure.job as measuring
from pinbench.errors import escaped
from pinbench.measure.interrupt import descendants
from pinbench.measure.launcher import Launcher
from pinbench.results.journals import read_lines
from pinbench.results.runs import RunRecord, read_runs

PLACEMENTS = {"os": placement("os", None), "compact": placement("compact", TWO_PUS)}
#: A run's timeout, never reached by a program that neither sleeps nor stops (a loaded
#: machine may slow it), and that of one that does: short, each such run costs it.
TIMEOUT_S, WAITING_TIMEOUT_S = 10.0, 0.1
#: How long past the timeout a stopped launcher is waited for, here.
GRACE_S = 0.1
QUIET = {"threshold": 1.0, "max_wait_s": 0}
#: The fast suite's combinations, and the slow test's (about 21 s on the 2-core VM).
FAST_EXAMPLES, SLOW_EXAMPLES = 6, 250


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    return compile_c(SOURCE, tmp_path_factory.mktemp("misbehave") / "misbehave")


@contextlib.contextmanager
def short_grace():
    """Jobs whose launcher waits :data:`GRACE_S` past a run's timeout for a stopped one."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(measuring, "Launcher", functools.partial(Launcher, grace_s=GRACE_S))
        yield


def measured(program: Path, behaviour: Misbehaviour, folder: Path, lock: Path,
             repetitions: int = 1) -> tuple[list[RunRecord], list[str]]:
    """A job of the program misbehaving so, run in this process (the lines it said), checked
    as the module's text says."""
    timeout = WAITING_TIMEOUT_S if behaviour.waits else TIMEOUT_S
    pids = folder / "pids"
    # a program that waits for its timeout: one strategy's run (each costs the timeout)
    placements = {"os": PLACEMENTS["os"]} if behaviour.waits else PLACEMENTS
    spec = job(program, placements, argv=[str(program), f"log={pids}",
                                          *behaviour.words(timeout)],
               time=behaviour.time_setting, metrics={"rate": METRIC_REGEX},
               timeout_s=timeout, repetitions=repetitions, quiet=QUIET)
    said: list[str] = []
    others = set(descendants(os.getpid()))  # other tests' (a session's services)
    records = measuring.run_job(spec, folder / "j.jsonl", folder / "t.csv", str(lock),
                                said.append)
    failure, may_succeed = behaviour.failures()
    for record in records:
        assert record.ok == (not record.failure) and (record.ok or failure), (behaviour, record)
        assert not record.ok or may_succeed, (behaviour, record.failure)
        assert record.failure == escaped(record.failure), record.failure  # printable
        assert len(record.failure.splitlines()) == (0 if record.ok else 1), record.failure
        assert record.ok or re.fullmatch(failure, record.failure), (behaviour, record.failure)
        if record.ok and behaviour.rebind and record.strategy == "compact" \
                and len(os.sched_getaffinity(0)) > 1:
            assert record.verification == "mismatch", record
    assert all(line == escaped(line) and "Traceback" not in line for line in said), said
    left = [int(pid) for path in (pids, pids.with_name("pids.children")) if path.exists()
            for pid in path.read_text().split()]
    assert not [pid for pid in left if _alive(pid)], behaviour
    assert not [pid for pid in set(descendants(os.getpid())) - others if _alive(pid)], \
        behaviour  # the launcher's
    journaled = [RunRecord(**json.loads(line)) for line in read_lines(folder / "j.jsonl")[1:]]
    assert read_runs([folder / "t.csv"]) == sorted(journaled, key=lambda r: r.order_index) \
        == records
    return records, said


@st.composite
def misbehaviours(draw) -> Misbehaviour:
    return drawn(lambda options: draw(st.sampled_from(options)))


def fuzz(program: Path, examples: int, lock: Path) -> None:
    """``examples`` jobs of drawn misbehaviours, then one of a program that behaves, all under
    the machine lock ``lock`` (one left held would stop the next job). A longer
    exploration: ``PINBENCH_FUZZ_EXAMPLES=3000 PINBENCH_FUZZ_SEED=1 pytest -m slow -k many
    tests/test_fuzz_measure.py`` (other combinations than the suite's for another seed)."""
    examples = int(os.environ.get("PINBENCH_FUZZ_EXAMPLES", examples))
    chosen = os.environ.get("PINBENCH_FUZZ_SEED")

    @settings(max_examples=examples, derandomize=chosen is None, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @seed(int(chosen or 0))
    @given(misbehaviours())
    def one_job(behaviour: Misbehaviour) -> None:
        with tempfile.TemporaryDirectory(prefix="fuzz-") as folder:
            measured(program, behaviour, Path(folder), lock)

    with short_grace():
        one_job()
        with tempfile.TemporaryDirectory(prefix="fuzz-") as folder:
            records, _ = measured(program, Misbehaviour(), Path(folder), lock)
    assert [r.ok for r in records] == [True, True]


def test_a_few_drawn_combinations_of_misbehaviours(program, tmp_path):
    fuzz(program, FAST_EXAMPLES, tmp_path / "lock")


@pytest.mark.slow
def test_many_drawn_combinations_of_misbehaviours(program, tmp_path):
    fuzz(program, SLOW_EXAMPLES, tmp_path / "lock")


@pytest.mark.parametrize("printed", [b"nan", b"0e999"])
def test_a_program_that_leaves_a_child_and_prints_no_time_fails_each_run_in_one_line(
        program, printed, tmp_path):
    """The issue's program: OpenMP, a child that outlives it, ``elapsed: nan`` read with
    ``elapsed: (\\S+)``, 4 repetitions of os and compact. ``0e999`` (zero, its last digit
    worth 1e999) made a record with an infinite resolution, which the journal refused: the
    measuring process died with a traceback."""
    behaviour = Misbehaviour(time=printed, child=1)
    records, said = measured(program, behaviour, tmp_path, tmp_path / "lock", repetitions=4)
    assert len(records) == 3  # the first 3 runs failed alike: the job stopped there
    assert all(r.time_s is None and r.time_resolution_s is None for r in records)
    assert {r.failure for r in records} == {
        "left 1 process running after it exited (killed); printed time "
        f"{printed.decode()!r} is not a finite number of seconds up to 1e+15"}
    assert any("3 runs, 3 failed" in line for line in said), said
