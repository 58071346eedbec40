"""Editing a finished campaign through the real `pinbench run`: each change re-does exactly what
depends on it (rebuild, re-trace, re-measure with the old journal set aside and named), never
nothing, never everything (pinbench/workflow/rule_settings.py)."""
import copy
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA

from pinbench.measure.job import Job
from pinbench.measure.journal import described, what_changed
from pinbench.results.placements import Placement, read_placement, shared_levels
from pinbench.topology import parse_xml
from pinbench.workflow import campaign as campaigns, jobsettings, optional

CAMPAIGN = {
    "campaign": "changes",
    "repetitions": 3,
    "threads": [2],
    "oversubscribe": True,  # 2 threads on a machine of one PU too
    "strategies": ["os", "compact"],
    "tracing": {"when": "always"},
    "explain": {"repetitions": 6},
    "machines": {"here": {"topology": "auto"}},
    "benchmarks": {
        "spin": {"description": "spins", "source": "src/spin.c", "params": {"ms": 20},
                 "input": "{ms}", "timeout_s": 20},
        "spin2": {"source": "src/spin.c", "input": "10", "timeout_s": 20},
    },
}
#: What a benchmark's jobs are called in a dry run's messages (rules/*.smk: ``message``).
MESSAGES = re.compile(r"Job \d+: (build|trace|measure) ([^\s:]+)( for tracing)?")


def pinbench(work: Path, *args: str) -> subprocess.CompletedProcess:
    """``pinbench run campaign.yaml -v ARGS`` in the project ``work``, with a machine lock of
    its own (``-v``: Snakemake's listing of the jobs, which the tests read)."""
    env = os.environ | {"PINBENCH_LOCK": str(work / "machine.lock")}
    return subprocess.run([sys.executable, "-m", "pinbench", "run", "campaign.yaml", "-v", *args],
                          cwd=work, env=env, capture_output=True, text=True, timeout=600)


def write_campaign(work: Path, **changes) -> None:
    """The campaign with ``changes`` (dotted path -> value: ``benchmarks.spin.validate``)."""
    config = copy.deepcopy(CAMPAIGN)
    for path, value in changes.items():
        *parents, key = path.split(".")
        entry = config
        for name in parents:
            entry = entry.setdefault(name, {})
        entry[key] = value
    (work / "campaign.yaml").write_text(json.dumps(config))


def planned(work: Path) -> set[tuple[str, str]]:
    """The jobs of one benchmark that ``pinbench run -n`` plans: (rule, benchmark) each."""
    dry = pinbench(work, "-n")
    assert dry.returncode == 0, dry.stderr[-3000:]
    text = dry.stdout + dry.stderr
    if "Nothing to be done" in text:
        return set()
    jobs = set()
    for block in re.split(r"^\[\w{3} \w{3} .*\]$", text, flags=re.M)[1:]:
        head = block.strip().splitlines()[0]
        named = MESSAGES.match(head)
        if named:
            rule = "build_traced" if named.group(3) else named.group(1)
            jobs.add((rule, named.group(2)))
            continue
        bench = re.search(r"^    wildcards: .*\bbench=([^,\s]+)", block, re.M)
        if bench:
            jobs.add((re.match(r"rule (\w+):", head).group(1), bench.group(1)))
    return jobs


def set_aside(results: Path) -> dict[str, str]:
    """Every journal set aside, by its path below the machine, with what its note says changed."""
    return {str(path.relative_to(results / "here")).split(".stale-")[0]:
            json.loads(Path(f"{path}.why").read_text())["changed"]
            for path in results.glob("here/*/*/t*.stale-*[0-9]")}


def explained() -> bool:
    """Whether this machine makes the campaign's explained runs: without the OMPT tool (no
    clang and libomp here), the campaign leaves them out (pinbench/workflow/optional.py)."""
    return optional.helper_missing("ompt") is None


def with_explained(aside: dict[str, str]) -> dict[str, str]:
    """The journals set aside: the timing journal's ``aside``, and the explained runs'
    journal beside it, set aside alike, where they are made."""
    return aside | ({"explained/spin/t2.journal.jsonl": next(iter(aside.values()))}
                    if explained() else {})


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> tuple[Path, Path]:
    """A finished tiny campaign (two benchmarks, traced, with explained runs) and a copy of it
    as it finished."""
    base = tmp_path_factory.mktemp("changes")
    work = base / "project"
    (work / "src").mkdir(parents=True)
    shutil.copy(DATA / "spin.c", work / "src" / "spin.c")
    write_campaign(work)
    run = pinbench(work)
    assert run.returncode == 0, run.stderr[-3000:]
    shutil.copytree(work, base / "finished", symlinks=True)
    return work, base / "finished"


@pytest.fixture
def work(finished) -> Path:
    """The finished campaign, as it finished, where it ran (its sources' paths are the build
    rules' inputs: moved, it would rebuild)."""
    work, copy = finished
    shutil.rmtree(work)
    shutil.copytree(copy, work, symlinks=True)
    return work


SPIN = {"build": ("build", "spin"), "traced": ("build_traced", "spin"),
        "trace": ("trace", "spin"), "place": ("placement", "spin"),
        "measure": ("measure", "spin")}
EVERY_BUILD = {(rule, bench) for bench in ("spin", "spin2")
               for rule in ("build", "build_traced", "trace", "placement", "measure")}


@pytest.mark.slow
@pytest.mark.parametrize(("changes", "jobs"), [
    ({}, set()),
    # what defines no build, trace or measurement
    ({"benchmarks.spin.description": "spins more", "quiet.max_wait_s": 3}, set()),
    ({"benchmarks.spin2.validate": "^validation: O"}, {("measure", "spin2")}),
    # a build, and what is built from it (the trace runs the traced build)
    ({"benchmarks.spin.build": "{cc} {cflags} -DX -o {output} {source} {ldflags}"},
     {SPIN["build"], SPIN["measure"]}),
    ({"benchmarks.spin.trace_build":
      "{cc} {cflags} {trace_cflags} -DX -o {output} {source} {ldflags} {trace_ldflags}"},
     {SPIN["traced"], SPIN["trace"], SPIN["place"], SPIN["measure"]}),
    ({"compiler.cflags": "-O1 -fopenmp"}, EVERY_BUILD),
    # a run: traced and measured alike
    ({"benchmarks.spin.params.ms": 21}, {SPIN["trace"], SPIN["place"], SPIN["measure"]}),
    ({"benchmarks.spin.input": "{ms} x"}, {SPIN["trace"], SPIN["place"], SPIN["measure"]}),
    ({"benchmarks.spin.run": "{binary} {input} x"},
     {SPIN["trace"], SPIN["place"], SPIN["measure"]}),
    ({"benchmarks.spin.env": {"X": "1"}}, {SPIN["trace"], SPIN["place"], SPIN["measure"]}),
    ({"benchmarks.spin.exit_status": [0, 3]}, {SPIN["trace"], SPIN["place"], SPIN["measure"]}),
    ({"benchmarks.spin.trace_input": "5"}, {SPIN["trace"], SPIN["place"], SPIN["measure"]}),
    # how a run is judged: measured only
    ({"benchmarks.spin.validate": "^validation: O"}, {SPIN["measure"]}),
    ({"benchmarks.spin.time_regex": r"kernel_time_s: (\S+)"}, {SPIN["measure"]}),
    ({"benchmarks.spin.time": {"regex": r"kernel_time_s: (\S+)", "unit": "ms"}},
     {SPIN["measure"]}),
    ({"benchmarks.spin.metrics": {"checksum": r"checksum: (\d+)"}}, {SPIN["measure"]}),
    ({"benchmarks.spin.timeout_s": 30}, {SPIN["measure"]}),
    ({"explain.repetitions": 7}, {SPIN["measure"], ("measure", "spin2")}),
])
def test_a_dry_run_plans_what_depends_on_the_change(work, changes, jobs):
    write_campaign(work, **changes)
    explain_only = set(changes) == {"explain.repetitions"}
    assert planned(work) == (jobs if explained() or not explain_only else set())


@pytest.mark.slow
def test_edits_rebuild_and_remeasure_what_they_change(work):
    results = work / "results" / "changes"
    binary = results / "here" / "bin" / "spin"
    journal = results / "here" / "journal" / "spin" / "t2.jsonl"
    digest, runs = hashlib.sha256(binary.read_bytes()).hexdigest(), journal.read_text()

    # a build that makes the same binary: rebuilt, measured runs kept
    write_campaign(work, **{"benchmarks.spin.build":
                            "{cc} {cflags} -DUNUSED -o {output} {source} {ldflags}"})
    run = pinbench(work)
    assert run.returncode == 0, run.stderr[-3000:]
    assert hashlib.sha256(binary.read_bytes()).hexdigest() == digest
    assert journal.read_text() == runs and set_aside(results) == {}
    assert planned(work) == set()

    # a build that makes another binary: the measurement is another one
    write_campaign(work, **{"benchmarks.spin.build":
                            "{cc} -O0 -fopenmp -o {output} {source} {ldflags}"})
    run = pinbench(work)
    assert run.returncode == 0, run.stderr[-3000:]
    assert hashlib.sha256(binary.read_bytes()).hexdigest() != digest
    assert set_aside(results) == with_explained({"journal/spin/t2.jsonl": "binary changed"})
    assert "WARNING: measurements set aside: here/spin/t2: " in run.stdout

    # how a run is judged: measured again, the journals set aside say what changed
    for path in results.glob("here/*/*/t*.stale-*"):
        path.unlink()
    write_campaign(work, **{"benchmarks.spin.build":
                            "{cc} -O0 -fopenmp -o {output} {source} {ldflags}",
                            "benchmarks.spin.validate": "^validation: O"})
    assert planned(work) == {SPIN["measure"]}
    run = pinbench(work)
    assert run.returncode == 0, run.stderr[-3000:]
    assert set_aside(results) == with_explained(
        {"journal/spin/t2.jsonl": "command (validate) changed"})
    assert planned(work) == set()


@pytest.mark.slow
def test_a_campaign_finished_with_placement_files_of_format_2_has_nothing_to_do(work):
    """Placement files of format 2 (with the thread pairs' shared levels, as pinbench wrote
    them before format 3) are read through the migration, never rewritten: Snakemake re-runs
    a job whose input is newer than its output, or whose inputs or parameters changed (the
    profile's rerun triggers; none did), so the finished campaign plans nothing, and a
    report made again reads them as they are."""
    results = work / "results" / "changes"
    topo = parse_xml((results / "here" / "topology.xml").read_text())
    files = sorted(results.glob("here/placements/*/t*/*.json"))
    for path in files:
        placement, written = read_placement(path), path.stat()
        levels = {} if placement.pus is None else {
            "shared_level": shared_levels(topo, placement.pus)}
        path.write_text(json.dumps({"format": 2, **placement.to_json(), **levels}, indent=1))
        os.utime(path, ns=(written.st_atime_ns, written.st_mtime_ns))
    before = {path: path.read_text() for path in [*files, *results.glob("here/journal/*/*")]}
    assert len(files) == 4 and planned(work) == set()
    run = pinbench(work, "--forcerun", "report")
    assert run.returncode == 0, run.stderr[-3000:]
    jobs = re.findall(r"^(?:localrule|rule) (\w+):$", run.stdout + run.stderr, re.M)
    assert jobs == ["report", "all"], jobs
    assert {path: path.read_text() for path in before} == before
    assert planned(work) == set()


def _job(config: dict, binary: Path) -> Job:
    """The measurement job of benchmark spin with 2 threads that the campaign makes."""
    config, machines = campaigns.load_campaign(copy.deepcopy(config), binary.parent)
    settings = jobsettings.job_settings(config, "here", "spin", 2, str(binary),
                                        machines["here"].threads)
    return Job.of(settings, [Placement(strategy=strategy, threads=2, topology="auto",
                                       placeable=[0, 1], pus=pus, J=None)
                             for strategy, pus in (("os", None), ("compact", [0, 1]))])


@pytest.mark.parametrize(("field", "value", "changed"), [
    ("benchmarks.spin.input", "21", "command (argv) changed"),
    ("benchmarks.spin.run", "{binary} {input} x", "command (argv) changed"),
    ("env", {"X": "1"}, "command (env) changed"),
    ("benchmarks.spin.validate", "^validation: O", "command (validate) changed"),
    ("benchmarks.spin.time_regex", r"kernel_time_s: (\S+)", "command (time_regex) changed"),
    ("benchmarks.spin.time", {"regex": r"kernel_time_s: (\S+)", "stream": "both"},
     "command (time_regex, time) changed"),
    ("benchmarks.spin.exit_status", [0, 3], "command (exit_status) changed"),
    ("benchmarks.spin.metrics", {"sum": r"checksum: (\d+)"}, "command (metrics) changed"),
    ("benchmarks.spin.timeout_s", 30, "command (timeout_s) changed"),
    ("benchmarks.spin.cwd", ".", "command (cwd) changed"),
    ("benchmarks.spin.verify", "openmp", "command (verify) changed"),
    ("repetitions", 12, "plan (repetitions) changed"),
    ("seed", 1, "plan (seed) changed"),
    ("order", "back-to-back", "plan (order) changed"),
    ("stopping", {"policy": "precision", "min": 6}, "plan (stopping) changed"),
])
def test_a_journal_set_aside_names_the_setting_that_changed(tmp_path, field, value, changed):
    config = copy.deepcopy(CAMPAIGN) | {"explain": None, "tracing": {"when": "never"},
                                        "repetitions": 10}
    shutil.copy(DATA / "spin.c", tmp_path / "spin.c")
    config["benchmarks"] = {"spin": CAMPAIGN["benchmarks"]["spin"] | {"source": "spin.c"}}
    before = _job(config, tmp_path / "spin.c")
    *parents, key = field.split(".")
    entry = config
    for name in parents:
        entry = entry[name]
    entry[key] = value
    after = _job(config, tmp_path / "spin.c")
    assert after.fingerprint() != before.fingerprint()
    assert what_changed(described(before.fingerprint_parts(), before.fingerprint_fields()),
                        described(after.fingerprint_parts(), after.fingerprint_fields())) == changed


def test_a_required_metric_written_either_way_keeps_the_journals_of_older_campaigns(tmp_path):
    """A metric written as its regex, as every campaign wrote it before optional metrics, or as
    ``{regex: ..., required: true}``: one command, hashed as pinbench hashed it before (the
    digest below); ``required: false`` is another way of judging a run."""
    config = copy.deepcopy(CAMPAIGN) | {"explain": None, "tracing": {"when": "never"},
                                        "repetitions": 10}
    shutil.copy(DATA / "spin.c", tmp_path / "spin.c")
    regex = r"checksum: (\d+)"

    def job(metric):
        config["benchmarks"] = {"spin": CAMPAIGN["benchmarks"]["spin"] | {
            "source": "spin.c", "metrics": {"sum": metric}}}
        return _job(config, tmp_path / "spin.c")

    written = [job(regex), job({"regex": regex}), job({"regex": regex, "required": True})]
    assert {j.fingerprint_parts()["command"] for j in written} == {
        "c4bf00834f27df85b4be5dfa41a3d2982da68809161c05e37466c3fec3e3f39b"}
    assert len({j.fingerprint() for j in written}) == 1
    optional = job({"regex": regex, "required": False})
    assert what_changed(
        described(written[0].fingerprint_parts(), written[0].fingerprint_fields()),
        described(optional.fingerprint_parts(), optional.fingerprint_fields())) == \
        "command (metrics) changed"


def test_a_time_read_as_time_regex_reads_it_keeps_the_journals_of_older_campaigns(tmp_path):
    """``time_regex``, as every campaign wrote its time before ``time``, ``time: {regex}`` and
    ``time`` with the shorthand's unit, stream and match: one command, hashed as pinbench
    hashed it before (the digest below); another unit is another way of judging a run."""
    config = copy.deepcopy(CAMPAIGN) | {"explain": None, "tracing": {"when": "never"},
                                        "repetitions": 10}
    shutil.copy(DATA / "spin.c", tmp_path / "spin.c")
    regex = r"kernel_time_s: (\S+)"

    def job(**time):
        config["benchmarks"] = {"spin": CAMPAIGN["benchmarks"]["spin"] | {"source": "spin.c"}
                                | time}
        return _job(config, tmp_path / "spin.c")

    written = [job(time_regex=regex), job(time={"regex": regex}),
               job(time={"regex": regex, "unit": "s", "stream": "stdout", "match": "first"})]
    assert {j.fingerprint_parts()["command"] for j in written} == {
        "f60546c7650f940e23688672196f6699cc0d1afc5a01444043e443ecb20edd30"}
    assert len({j.fingerprint() for j in written}) == 1
    assert {json.dumps(j.to_json(), sort_keys=True) for j in written} == {
        json.dumps(written[0].to_json(), sort_keys=True)}
    in_ms = job(time={"regex": regex, "unit": "ms"})
    assert what_changed(
        described(written[0].fingerprint_parts(), written[0].fingerprint_fields()),
        described(in_ms.fingerprint_parts(), in_ms.fingerprint_fields())) == \
        "command (time_regex, time) changed"
