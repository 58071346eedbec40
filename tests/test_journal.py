"""The journal's zero padding: runs' lines overwrite zeros written ahead, every reader stops
at the padding, a killed job's journal resumes right after its last whole line, and a closed
journal is plain JSON lines."""
import json
import math
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, run_record

from pinbench.measure.journal import CHUNK, Journal
from pinbench.results.journals import finished_runs, read_lines
from pinbench.measure.progress import journaled_runs
from pinbench.results.layout import Layout
from pinbench.results.runs import RunRecord, finite


def run(rep: int, strategy: str = "os", size: int = 0) -> dict:
    return {"strategy": strategy, "repetition": rep, "time_s": 1.0 + rep, "pad": "x" * size}


def killed_after(path: Path, runs: int, size: int = 0) -> bytes:
    """Append ``runs`` runs to a journal in another process, SIGKILL it (the journal still
    open); return the file as the kill left it."""
    code = (f"import os, signal\nfrom pathlib import Path\n"
            f"from pinbench.measure.journal import Journal\n"
            f"from test_journal import run\n"
            f"journal = Journal(Path({str(path)!r}), 'fp')\n"
            f"for rep in range({runs}):\n    journal.append(run(rep, size={size}))\n"
            f"os.kill(os.getpid(), signal.SIGKILL)\n")
    env = os.environ | {"PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()[-2000:]
    return path.read_bytes()


def test_runs_overwrite_zeros_written_ahead_and_a_closed_journal_has_none(tmp_path):
    path = tmp_path / "j.jsonl"
    journal = Journal(path, "fp")
    journal.append(run(0))
    size = path.stat().st_size
    assert size == CHUNK  # the first run's line wrote the padding up to the chunk's end
    for rep in range(1, 20):
        journal.append(run(rep))
        assert path.stat().st_size == size  # in place: the size, hence the inode, unchanged
    data = path.read_bytes()
    end = data.index(b"\0")
    assert data[end:] == bytes(len(data) - end) and data[end - 1:end] == b"\n"
    lines = read_lines(path)
    assert json.loads(lines[0])["fingerprint"] == "fp"
    assert [json.loads(line) for line in lines[1:]] == [run(rep) for rep in range(20)]
    assert finished_runs(path) == journaled_runs(path) == 20
    journal.close()
    text = path.read_bytes()
    assert b"\0" not in text and text == data[:end]
    assert text.decode().splitlines() == lines  # plain JSON lines, what read_lines gave


def test_lines_longer_than_what_is_left_start_a_new_chunk(tmp_path):
    path = tmp_path / "j.jsonl"
    with Journal(path, "fp") as journal:
        sizes = []
        for rep in range(12):  # 12 x 20 KiB: four chunks, lines across their boundaries
            journal.append(run(rep, size=20 << 10))
            sizes.append(path.stat().st_size)
            assert sizes[-1] % CHUNK == 0
            assert finished_runs(path) == rep + 1
        assert sizes[-1] >= 12 * (20 << 10) and len(set(sizes)) > 2
    assert [json.loads(line) for line in path.read_text().splitlines()[1:]] == [
        run(rep, size=20 << 10) for rep in range(12)]
    assert Journal(path, "fp").runs.keys() == {("os", rep) for rep in range(12)}


def test_a_journal_killed_mid_chunk_resumes_after_its_last_line(tmp_path):
    path = tmp_path / "j.jsonl"
    left = killed_after(path, 5)
    assert left.endswith(b"\0") and len(left) == CHUNK  # the kill left the padding
    assert finished_runs(path) == journaled_runs(path) == 5
    resumed = Journal(path, "fp")
    assert set(resumed.runs) == {("os", rep) for rep in range(5)}
    assert b"\0" not in path.read_bytes()  # opening cut the padding off
    resumed.append(run(5))
    resumed.append(run(6))
    resumed.close()
    lines = path.read_text().splitlines()
    assert [json.loads(line) for line in lines[1:]] == [run(rep) for rep in range(7)]


def test_a_journal_killed_after_several_chunks_resumes_whole(tmp_path):
    path = tmp_path / "j.jsonl"
    killed_after(path, 9, size=20 << 10)
    assert finished_runs(path) == 9
    with Journal(path, "fp") as journal:
        assert len(journal.runs) == 9
        journal.append(run(9, size=20 << 10))
    assert [json.loads(line)["repetition"] for line in path.read_text().splitlines()[1:]] == \
        list(range(10))


def test_a_torn_line_and_anything_after_the_padding_are_dropped(tmp_path):
    path = tmp_path / "j.jsonl"
    journal = Journal(path, "fp")
    journal.append(run(0))
    journal.close()
    whole = path.read_bytes()
    # a write torn by a crash: the start of a line, zeros, and the end of a line after them
    torn = json.dumps(run(1)).encode()
    path.write_bytes(whole + torn[:10] + bytes(100) + b'"repetition": 7}\n' + bytes(500))
    assert read_lines(path) == whole.decode().splitlines() and finished_runs(path) == 1
    resumed = Journal(path, "fp")
    assert list(resumed.runs) == [("os", 0)] and path.read_bytes() == whole
    resumed.append(run(1, size=5))  # shorter than what the crash left: none of it comes back
    resumed.close()
    assert [json.loads(line) for line in path.read_text().splitlines()[1:]] == [
        run(0), run(1, size=5)]


def test_a_padded_journal_set_aside_holds_its_runs_only(tmp_path):
    layout = Layout(str(tmp_path / "results"))
    path = Path(layout.journal("m", "bench", 2))
    path.parent.mkdir(parents=True)
    killed_after(path, 3)
    other = Journal(path, "another measurement")
    assert other.set_aside_runs == 3 and b"\0" not in other.set_aside.read_bytes()
    other.close()
    Path(f"{other.set_aside}.why").unlink()  # the count then comes from the journal itself
    notes = layout.set_aside_journals("m")
    assert [note["runs"] for note in notes] == [3]


def test_the_journal_refuses_what_is_not_standard_json_and_takes_every_record_a_run_makes(
        tmp_path):
    """The journal stays strict (a NaN is no JSON); a run's record is made finite where it is
    made (:func:`pinbench.results.runs.finite`): its numbers that are not finite taken out,
    the run failed naming them, the journal never refusing it."""
    journal = Journal(tmp_path / "j.jsonl", "fp")
    with pytest.raises(ValueError, match="Out of range float values"):
        journal.append(run(0) | {"time_s": math.nan})
    made = finite(run_record(time_s=math.inf, time_resolution_s=math.inf, other_cpu=math.nan,
                             failure="exit status 3", ok=False))
    journal.append(made.as_row())
    journal.close()
    [line] = read_lines(tmp_path / "j.jsonl")[1:]
    assert RunRecord(**json.loads(line)) == made
    assert (made.time_s, made.time_resolution_s, made.other_cpu) == (None, None, None)
    assert made.failure == "exit status 3; time_s, other_cpu, time_resolution_s not a finite " \
        "number"
    assert finite(run_record()) == run_record()  # a finite record is left as it is
