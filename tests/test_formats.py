"""File versions (:mod:`pinbench.results.formats`): files the release before versions wrote
(real ones, from a default campaign of that release, shortened: ``tests/data/v1``) read
through the migration, a campaign moved elsewhere resumes its journals, what is written
carries its version, and a version from the future stops the reader with one line."""
import csv
import dataclasses
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA

from pinbench.measure import legacy
from pinbench.measure.job import Job
from pinbench.measure.journal import Journal
from pinbench.measure.settings import JobSettings
from pinbench.report.campaign_results import read_json
from pinbench.results import formats
from pinbench.results.explained import read_explained
from pinbench.results.layout import Layout
from pinbench.results.placements import read_placement, write_placement
from pinbench.results.runs import RUN_COLUMNS, TABLE_COLUMNS, read_runs, write_runs
from pinbench.workflow.accounting import read_account

V1 = DATA / "v1"
#: Where the release before versions wrote the example campaign's binary.
WRITTEN_AT = "/work/main/results/default/local/bin/array"


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def job_of_version_1(project: Path) -> Job:
    """The job that wrote the version 1 journals (``array`` at 2 threads, the default
    campaign), its project moved to ``project``: the settings the workflow passed it, its
    placement files of version 1, its binary."""
    binary = project / "results" / "default" / "local" / "bin" / "array"
    binary.parent.mkdir(parents=True)
    shutil.copy(V1 / "array", binary)
    settings = JobSettings.from_json(json.loads(
        (V1 / "settings.json").read_text().replace(WRITTEN_AT, str(binary))))
    return Job.of(settings, map(read_placement, sorted((V1 / "placements").glob("*.json"))))


def test_placement_files_of_versions_1_and_2_read_and_are_written_without_pair_levels(tmp_path):
    """Version 3 leaves out the thread pairs' lowest shared objects (derived from the topology
    when needed); a file of version 2 is one of version 1 with its version."""
    for path in sorted((V1 / "placements").glob("*.json")):
        old = json.loads(path.read_text())
        assert "format" not in old
        placement = read_placement(path)
        assert placement.strategy == path.stem
        kept = {name: value for name, value in old.items() if name != "shared_level"}
        assert ("shared_level" in old) == (old["pus"] is not None)
        assert list(placement.to_json().items()) == list(kept.items())  # keys in their order
        (tmp_path / "v2.json").write_text(json.dumps({"format": 2, **old}, indent=1))
        assert read_placement(tmp_path / "v2.json") == placement
        write_placement(placement, tmp_path / path.name)
        written = {"format": formats.CURRENT["placement"], **kept}
        assert (tmp_path / path.name).read_text() == json.dumps(written, indent=1) + "\n"
    random = read_placement(V1 / "placements" / "random.json")
    draws = json.loads((V1 / "placements" / "random.json").read_text())["pus_by_repetition"]
    assert random.per_repetition and random.pus_for(3) == draws[3]
    assert random.example_pus == draws[0] and random.omp_places is None
    unbound = read_placement(V1 / "placements" / "os.json")
    assert not unbound.per_repetition and unbound.pus_for(0) is None
    assert unbound.line() == "        os: not bound (the OS decides)"
    assert read_placement(V1 / "placements" / "gp.json").line() == "        gp: 0 1 (J 6.10725e+07)"


def test_a_journal_of_version_1_resumes_in_a_project_moved_elsewhere(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    job = job_of_version_1(tmp_path)
    path = tmp_path / "t2.jsonl"
    shutil.copy(V1 / "journal.jsonl", path)
    header = lines(path)[0]
    assert "format" not in header and job.fingerprint_parts() == header["parts"]
    journal = Journal(path, job.fingerprint(), {"parts": job.fingerprint_parts()},
                      lambda found: legacy.read_header(found, path, job))
    assert journal.set_aside is None and len(journal.runs) == 3
    assert journal.header == header and journal.header.get("merged", True)
    journal.close()
    assert lines(path)[0] == header  # a version 1 journal stays as it was written


def test_an_explained_journal_of_version_1_resumes_in_a_project_moved_elsewhere(tmp_path,
                                                                              monkeypatch):
    """Its plan held the binary's absolute path; version 2 names it ``{binary}``."""
    monkeypatch.chdir(tmp_path)
    tool = tmp_path / "pinbench_ompt.so"
    tool.write_bytes(b"the OMPT tool's bytes\n")
    job = job_of_version_1(tmp_path)
    job = dataclasses.replace(job, explain=dataclasses.replace(
        job.explain, tool={"tool": str(tool), "libomp": "", "gomp_dir": ""}))
    timing = lines(V1 / "journal.jsonl")[0]["fingerprint"]
    written = lines(V1 / "explained.journal.jsonl")
    old = written[0]
    assert old["fingerprint"] == formats.digest([timing, old["explain"]])  # how it was made
    assert old["explain"]["t1_argv"] == [WRITTEN_AT, "quick"]
    # the same header for this machine's tool bytes, made as that release made it
    plan = old["explain"] | {"tool": hashlib.sha256(tool.read_bytes()).hexdigest()}
    old = old | {"explain": plan, "fingerprint": formats.digest([timing, plan])}
    path = tmp_path / "t2.journal.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in [old, *written[1:]]))

    def opened(job_: Job) -> Journal:
        return Journal(path, formats.digest([timing, job_.explained_plan()]),
                       migrate=lambda found: legacy.read_header(found, path, job_, timing))

    assert job.explained_plan()["t1_argv"] == ["{binary}", "quick"]
    journal = opened(job)
    assert journal.set_aside is None and len(journal.runs) == 2
    journal.close()
    more = dataclasses.replace(job, explain=dataclasses.replace(job.explain, repetitions=7))
    assert opened(more).set_aside  # another plan: another measurement


def test_a_runs_table_of_version_1_reads_and_is_written_with_its_version(tmp_path):
    with (V1 / "runs.csv").open(newline="") as handle:
        # no output_bytes, no counters, nor any column added since
        assert csv.DictReader(handle).fieldnames == \
            RUN_COLUMNS[:RUN_COLUMNS.index("output_bytes")]
    records = read_runs([V1 / "runs.csv"])
    assert len(records) == 3 and {r.benchmark for r in records} == {"array"}
    write_runs(records, tmp_path / "t2.csv")
    with (tmp_path / "t2.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == TABLE_COLUMNS
    assert {row["format"] for row in rows} == {str(formats.CURRENT["runs"])}
    assert read_runs([tmp_path / "t2.csv"]) == records
    # a table with rows of both versions (concatenated by a user) reads row by row
    with (tmp_path / "both.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, TABLE_COLUMNS)
        writer.writeheader()
        writer.writerows([{**rows[0], "format": ""}, rows[1]])
    assert read_runs([tmp_path / "both.csv"]) == records[:2]


def test_json_files_of_version_1_read_as_they_are(tmp_path):
    explained = read_explained([V1 / "explained.jsonl"])
    assert explained == lines(V1 / "explained.jsonl") and explained[0]["kind"] == "explained"
    environment = V1 / "environment.json"
    assert read_json(environment, "environment") == json.loads(environment.read_text())
    # an analysis older than the report-wide decisions is made again, not converted
    with pytest.raises(formats.FormatError, match="older analysis"):
        read_json(V1 / "stats.json", "stats")
    assert read_account(V1 / "account.json")["process_s"] == pytest.approx(7.17433, abs=1e-5)
    sidecar = json.loads((V1 / "sidecar.json").read_text())
    assert formats.read("sidecar", sidecar, "t2.json") == sidecar
    stale = tmp_path / "c" / "m" / "journal" / "b" / "t2.jsonl.stale-20261126T235204"
    stale.parent.mkdir(parents=True)
    stale.write_text("")
    shutil.copy(V1 / "note.why", f"{stale}.why")
    [note] = Layout(str(tmp_path / "c")).set_aside_journals("m")
    assert note["runs"] == 24 and note["changed"].startswith("written by an older pinbench")


def test_what_is_written_carries_its_version(tmp_path):
    row = lines(V1 / "explained.jsonl")[0]
    (tmp_path / "e.jsonl").write_text(json.dumps(formats.stamp("explained", row)) + "\n")
    assert lines(tmp_path / "e.jsonl")[0]["format"] == 2
    assert read_explained([tmp_path / "e.jsonl"]) == [row]
    journal = Journal(tmp_path / "j.jsonl", "fp", {"timer": "t"})
    journal.close()
    assert lines(tmp_path / "j.jsonl")[0]["format"] == 2 and journal.header["timer"] == "t"
    assert Journal(tmp_path / "j.jsonl", "fp").header == journal.header  # read back


def future(data: dict, kind: str = "placement") -> dict:
    """A file's content as the next version of ``kind`` would write it."""
    return data | {"format": formats.CURRENT[kind] + 1}


def test_a_file_from_a_newer_pinbench_stops_every_reader_with_one_line(tmp_path):
    readers = []
    placement = tmp_path / "compact.json"
    placement.write_text(json.dumps(future(json.loads(
        (V1 / "placements" / "compact.json").read_text()))))
    readers.append(lambda: read_placement(placement))
    table = tmp_path / "t2.csv"
    write_runs(read_runs([V1 / "runs.csv"]), table)
    runs = formats.CURRENT["runs"]
    table.write_text(table.read_text().replace(f",{runs}\n", f",{runs + 1}\n"))
    readers.append(lambda: read_runs([table]))
    explained = tmp_path / "e.jsonl"
    explained.write_text(json.dumps(future(lines(V1 / "explained.jsonl")[0])) + "\n")
    readers.append(lambda: read_explained([explained]))
    for name, kind in (("stats.json", "stats"), ("environment.json", "environment")):
        path = tmp_path / name
        path.write_text(json.dumps(future(json.loads((V1 / name).read_text()), kind)))
        readers.append(lambda path=path, kind=kind: read_json(path, kind))
    account = tmp_path / "t2.json"
    account.write_text(json.dumps(future(json.loads((V1 / "account.json").read_text()))))
    readers.append(lambda: read_account(account))
    journal = tmp_path / "j.jsonl"
    journal.write_text(json.dumps(future(lines(V1 / "journal.jsonl")[0])) + "\n")
    readers.append(lambda: Journal(journal, "fp"))
    for read in readers:
        with pytest.raises(formats.FormatError) as error:
            read()
        message = str(error.value)
        assert "\n" not in message and "newer than this pinbench reads (up to " in message, message
    assert journal.read_text().count("\n") == 1  # neither set aside nor rewritten
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "two"}')
    with pytest.raises(formats.FormatError, match="format 'two' is no version of a placement"):
        read_placement(bad)


def test_the_measuring_process_refuses_a_newer_placement_in_one_line(tmp_path):
    placement = tmp_path / "compact.json"
    placement.write_text(json.dumps(future(json.loads(
        (V1 / "placements" / "compact.json").read_text()))))
    spec = json.loads((V1 / "settings.json").read_text()) | {"strategies": ["compact"],
                                                             "explain": None}
    proc = subprocess.run(
        [sys.executable, "-m", "pinbench.measure", "--spec", json.dumps(spec), "--placements",
         str(placement), "--journal", str(tmp_path / "j.jsonl"), "--out", str(tmp_path / "t.csv"),
         "--lock", str(tmp_path / "lock")], capture_output=True, text=True, timeout=60)
    newest = formats.CURRENT["placement"]
    assert proc.returncode == 2 and proc.stderr == (
        f"python -m pinbench.measure: error: {placement}: a placement file of format "
        f"{newest + 1}, newer than this pinbench reads (up to {newest}): read it with a newer "
        "pinbench\n")
    assert not (tmp_path / "j.jsonl").exists()
