"""A measurement job: identical placements measured once (and old journals resumed as they
were), and the quiet policy (a run beside a CPU burner is waited for or marked)."""
import gzip
import json
import os
import subprocess
import sys
import time

import pytest
from test_launcher import TWO_PUS, job, placement

import pinbench.measure.job as measuring
from pinbench.measure import legacy, outputs
from pinbench.measure.job import run_job
from pinbench.measure.journal import Journal
from pinbench.measure.launcher import TIMER
from pinbench.results.runs import read_runs
from pinbench.stats.analyse import verdict_tables

PLACEMENTS = {"os": placement("os", None), "compact": placement("compact", TWO_PUS),
              "scatter": placement("scatter", TWO_PUS)}
QUIET = {"threshold": 0.1, "max_wait_s": 0.0}


def silent(line: str) -> None:
    pass


def test_identical_placements_are_measured_once_and_named(spin_binaries, tmp_path):
    said = []
    spec = job(spin_binaries["gcc"], PLACEMENTS, repetitions=3, same_as={"scatter": "compact"},
               quiet=QUIET)
    records = run_job(spec, tmp_path / "j.jsonl", tmp_path / "t.csv", str(tmp_path / "lock"),
                      said.append)
    assert sorted({r.strategy for r in records}) == ["compact", "os"] and len(records) == 6
    assert {r.stands_for for r in records if r.strategy == "compact"} == {"scatter"}
    assert any("compact, scatter place the threads identically" in line for line in said)
    assert read_runs([tmp_path / "t.csv"]) == records
    assert all(r.quiet_wait_s == 0 for r in records)  # max_wait_s 0: no waiting
    header = json.loads((tmp_path / "j.jsonl").read_text().splitlines()[0])
    assert header["timer"] == TIMER  # how these runs were timed


def test_each_run_output_is_kept_in_one_file_per_job_whose_torn_tail_is_cut(spin_binaries,
                                                                            tmp_path):
    """One gzip member per run (``zcat`` shows them all); a kill leaves a member cut short,
    or a whole one whose run was never journaled: the reader ignores the first, and the job
    resumed cuts both off."""
    spec = job(spin_binaries["gcc"], PLACEMENTS, repetitions=2, quiet=QUIET)
    records = run_job(spec, tmp_path / "j.jsonl", tmp_path / "t.csv", str(tmp_path / "lock"),
                      silent, outputs=tmp_path / "out")
    journal = Journal(tmp_path / "j.jsonl", spec.fingerprint())
    journal.close()
    kept = outputs.folder(tmp_path / "out", journal.fingerprint)
    runs = kept / outputs.RUNS_FILE
    texts = outputs.read(kept)
    assert set(texts) == {(r.strategy, r.repetition) for r in records} == set(journal.runs)
    assert all(text.startswith("== exit status 0\n== stdout\n") and "validation: OK" in text
               for text in texts.values())
    assert gzip.decompress(runs.read_bytes()).decode().count("== run ") == 6
    size = runs.stat().st_size
    with outputs.Outputs(kept, journal.runs) as more:  # killed after this, before the journal
        more.keep("os", 2, 0, "late\n", "")
    runs.write_bytes(runs.read_bytes() + gzip.compress(b"== run os r3\n== exit status 0")[:25])
    assert outputs.read(kept) == texts | {("os", 2): "== exit status 0\n== stdout\nlate\n"
                                                     "== stderr\n"}
    outputs.Outputs(kept, journal.runs).close()
    assert runs.stat().st_size == size and outputs.read(kept) == texts


def test_a_journal_from_before_the_merge_goes_on_measuring_every_strategy(spin_binaries, tmp_path):
    spec = job(spin_binaries["gcc"], PLACEMENTS, repetitions=2, same_as={"scatter": "compact"},
               quiet=QUIET)
    first = run_job(job(spin_binaries["gcc"], PLACEMENTS, repetitions=2, quiet=QUIET),
                    tmp_path / "other.jsonl", tmp_path / "o.csv", str(tmp_path / "lock"), silent)
    # a version 1 journal (no format), as written before the merge: a header, one run
    header = {"fingerprint": legacy.legacy_fingerprint(spec, merged=False), "created": 1.0}
    run = next(r for r in first if r.strategy == "scatter").as_row()
    (tmp_path / "j.jsonl").write_text(json.dumps(header) + "\n" + json.dumps(run) + "\n")
    said = []
    records = run_job(spec, tmp_path / "j.jsonl", tmp_path / "t.csv", str(tmp_path / "lock"),
                      said.append)
    assert sorted((r.strategy, r.repetition) for r in records) == sorted(
        (s, k) for s in PLACEMENTS for k in range(2))  # nothing set aside, nothing merged
    assert any("resuming: 1 of 6" in line for line in said)
    assert not any("set aside" in line or "changed" in line for line in said)
    assert any("timed by an older launcher" in line for line in said)  # its header has no timer


@pytest.mark.slow
def test_a_run_beside_a_cpu_burner_is_waited_for_or_marked(spin_binaries, tmp_path):
    """Burners that are not the launcher's children keep every CPU partly busy (the share of
    the machine's CPU time others use is what is checked: two burners on a machine of 32
    CPUs would use less than the threshold)."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"],
                                start_new_session=True)
               for _ in range(len(os.sched_getaffinity(0)))]
    try:
        time.sleep(0.3)
        spec = job(spin_binaries["gcc"], PLACEMENTS, argv=[str(spin_binaries["gcc"]), "300"],
                   repetitions=2, quiet={"threshold": 0.1, "max_wait_s": 0.5, "busy_s": 0.1})
        said = []
        records = run_job(spec, tmp_path / "j.jsonl", tmp_path / "t.csv",
                          str(tmp_path / "lock"), said.append)
    finally:
        for burner in burners:
            burner.kill()
    assert any(r.quiet_wait_s >= 0.5 for r in records)  # busy for longer than busy_s: a wait
    [total] = [line for line in said if "waited" in line]  # once per job, at its end
    assert "runs measured while other processes used more than 10% of the CPUs" in total
    assert max(r.other_cpu for r in records if r.other_cpu is not None) > 0.1
    [verdict], _ = verdict_tables(records, "os", 0.05, quiet_threshold=0.1)
    assert verdict["noisy_runs"] >= 1
    journaled = [json.loads(line) for line in (tmp_path / "j.jsonl").read_text().splitlines()[1:]]
    assert {"other_cpu", "quiet_wait_s", "stands_for"} <= set(journaled[0])


def test_a_busy_machine_is_waited_for_only_after_busy_s_and_said_once(monkeypatch, tmp_path):
    """Runs of about 1 s, each with others using half the CPUs: measured under that load, a
    wait (at most max_wait_s) only once 2.5 s of them went by in a row, said once at the end."""
    from test_sequential import planted

    monkeypatch.setattr(measuring, "measure_one", planted({}, other_cpu=0.5))
    monkeypatch.setattr(measuring, "wait_until_quiet", lambda threshold, most, check: (0.25, True))
    spec = job("/bin/true", PLACEMENTS, repetitions=4,
               quiet={"threshold": 0.1, "max_wait_s": 1.0, "busy_s": 2.5})
    said = []
    records = run_job(spec, tmp_path / "j.jsonl", tmp_path / "t.csv", str(tmp_path / "lock"),
                      said.append)
    # every third run: 3 runs of about 1 s make 2.5 s busy (none before the first run)
    assert [r.quiet_wait_s for r in records] == [0.25 * (k in (3, 6, 9)) for k in range(12)]
    [line] = [line for line in said if "waited" in line]
    assert line.startswith("[local spin t2] 12 runs measured while other processes used more "
                           "than 10% of the CPUs (marked L); waited")
    assert "(3 waits, each after 2.5 s busy" in line


def test_a_job_with_the_stopping_rule_stops_once_every_median_is_known(spin_binaries, tmp_path):
    """spin reports its own time (the same each run): every median is exact once its interval
    exists, after 6 rounds (the distribution-free interval at 95% needs 6 runs)."""
    stopping = {"policy": "precision", "min": 6, "precision": 0.02, "confidence": 0.95}
    spec = job(spin_binaries["gcc"], PLACEMENTS, repetitions=10, quiet=QUIET,
               same_as={"scatter": "compact"}, stopping=stopping,
               time=r"^kernel_time_s: (\S+)$")
    said = []
    records = run_job(spec, tmp_path / "j.jsonl", tmp_path / "t.csv", str(tmp_path / "lock"),
                      said.append)
    assert sorted((r.strategy, r.repetition) for r in records) == sorted(
        (s, k) for s in ("os", "compact") for k in range(6))
    assert any("after 6 rounds: stopping (8 runs of 20 saved)" in line for line in said)
    rounds = [sorted(r.strategy for r in records if r.order_index // 2 == k) for k in range(6)]
    assert rounds == [["compact", "os"]] * 6  # each round runs every strategy once
    again = run_job(spec, tmp_path / "j.jsonl", tmp_path / "t2.csv", str(tmp_path / "lock"),
                    silent)  # resumed: the rule replayed on the journal, nothing measured
    assert again == records


@pytest.mark.slow
def test_the_stopping_rule_keeps_the_family_wise_rate():
    """504 simulated cells of 8 strategies, times spread 2%, stopping at 2% from round 10
    (docs/statistics-error-rates.md: python -m pinbench.stats.simulate)."""
    from pinbench.stats.simulate import Condition, measure, standard_error
    stopping = {"min": 10, "precision": 0.02, "confidence": 0.95}
    found = measure(Condition("stopping", n=35, spread=0.02, stopping=stopping), 28, 0.05, 11)
    assert found["cell_false"] <= 0.05 + 3 * standard_error(0.05, found["cells"])
    assert 10 <= found["runs"] < 25  # runs saved against the 35 of a fixed design


def test_progress_lines_say_rate_and_time_left(tmp_path):
    """One line every 10 s of the clock and at the end, with runs done, the strategy next,
    the rate, and the time left of the cell and of the campaign (from the other jobs'
    journals)."""
    from pathlib import Path

    from pinbench.measure.progress import Campaign, Progress
    from pinbench.results.layout import Layout

    root = str(tmp_path / "c")
    layout = Layout(root)
    Path(layout.runs("m", "done", 2)).parent.mkdir(parents=True)
    Path(layout.runs("m", "done", 2)).write_text("")  # finished
    other = Path(layout.journal("m", "half", 2))
    other.parent.mkdir(parents=True)
    other.write_text("{}\n" + "{}\n" * 5)  # header + 5 of 10 runs
    now = [0.0]
    lines = []
    progress = Progress("[m b t2]", 10, 0, lines.append,
                        Campaign(root, [("m", "b", 2), ("m", "done", 2), ("m", "half", 2)]),
                        ("m", "b", 2), clock=lambda: now[0])
    for done in range(1, 11):
        now[0] += 3.0  # one run every 3 s
        progress.update(done, "compact", measured=True, final=done == 10)
    assert len(lines) == 3  # at 12 s, 24 s and the end
    assert lines[0] == ("[m b t2] 4/10 runs (40%), now compact; 0.333 runs/s; this cell: 18 s "
                        "left; campaign: job 2 of 3, about 33 s left")
    assert lines[-1].startswith("[m b t2] 10/10 runs (100%); 0.333 runs/s; this cell done in 30 s"
                                "; campaign: job 2 of 3, about 15 s left")


def test_outputs_of_any_size_are_kept_whole_with_a_window_fitted_to_them(tmp_path):
    """Each member's window is as small as its text allows (cheap for a few lines); every
    size reads back, ``zcat`` included, and compresses as well as the default window."""
    texts = {("os", n): "x" * n + "".join(f"{k}\n" for k in range(n // 8)) for n in
             (0, 1, 100, 511, 600, 5000, 40000, 200000)}
    with outputs.Outputs(tmp_path, texts) as kept:
        for (strategy, rep), text in texts.items():
            kept.keep(strategy, rep, 0, text, "err\n")
    found = outputs.read(tmp_path)
    assert found == {run: f"== exit status 0\n== stdout\n{outputs._tail(text)}"
                          f"{chr(10) if text and not text.endswith(chr(10)) else ''}"
                          "== stderr\nerr\n" for run, text in texts.items()}
    assert gzip.decompress((tmp_path / outputs.RUNS_FILE).read_bytes()).count(b"== run ") == 8
    big = "".join(f"line {k}\n" for k in range(9000)).encode()
    assert len(outputs._gzip(big)) <= len(gzip.compress(big, 6, mtime=0)) * 1.01
    assert gzip.decompress(outputs._gzip(b"")) == b""


def test_a_runs_environment_and_request_are_made_once_per_placement(tmp_path):
    from pinbench.measure import spawn
    from pinbench.measure.job import prepared_run, run_environment

    spec = job(tmp_path / "prog", PLACEMENTS)
    env, request = prepared_run(spec, TWO_PUS)
    assert prepared_run(spec, list(TWO_PUS)) == (env, request)
    assert prepared_run(spec, list(TWO_PUS))[1] is request  # made once
    assert env == run_environment(spec, TWO_PUS)
    assert request == spawn.prepare(spec.argv, env, spec.timeout_s)
    unbound = prepared_run(spec, None)
    assert "OMP_PLACES" not in unbound[0] and unbound[1] != request
    other = job(tmp_path / "prog", PLACEMENTS, env={"A": "1"})
    assert prepared_run(other, TWO_PUS)[0]["A"] == "1"  # another job: its own
