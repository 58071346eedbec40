"""Campaigns on a SLURM cluster: a real one-host cluster (tests/slurm_cluster.py) runs a tiny
campaign with one SLURM machine and one machine measured here through Snakemake's SLURM
executor; a measurement cancelled by `scancel` in the middle resumes on the next call without
losing or repeating a run; one report holds both machines."""
import csv
import json
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, campaign_command, report_text, run_campaign

from pinbench.results.journals import read_lines

import slurm_cluster

REPETITIONS = 8


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    reason = slurm_cluster.why_not()
    if reason:
        pytest.skip(f"no SLURM test cluster: {reason}")
    started = slurm_cluster.Cluster(tmp_path_factory.mktemp("slurm"))
    yield started
    started.stop()


def on_slurm(work: Path, *args: str) -> list[str]:
    """The command that runs the campaign in ``work`` with the SLURM profile."""
    return campaign_command(
        work, "--workflow-profile", str(ROOT / "profiles" / "slurm"), "--slurm-no-account",
        "--slurm-status-command", "squeue",  # the test cluster has no accounting (sacct)
        "--slurm-init-seconds-before-status-checks", "1", "--seconds-between-status-checks", "1",
        "--latency-wait", "5", *args)


def write_campaign(work: Path, cluster, **slurm) -> None:
    work.mkdir(parents=True, exist_ok=True)
    config = {
        "campaign": "cluster", "repetitions": REPETITIONS, "threads": ["all"],
        "strategies": ["os", "compact"],
        "machines": {
            "node": {"topology": "auto", "slurm": {"partition": cluster.partition,
                                                  "node": cluster.node, "cpus": cluster.cpus,
                                                  "time_min": 10} | slurm},
            "here": {"topology": "auto"},
        },
        "benchmarks": {"spin": {"source": "tests/data/spin.c", "input": "300"}},
    }
    (work / "campaign.yaml").write_text(yaml.safe_dump(config))


def journaled(journal: Path) -> list[tuple[str, int]]:
    if not journal.exists():
        return []
    lines = read_lines(journal)[1:]  # a job running or cancelled: its journal ends in padding
    return [(run["strategy"], run["repetition"]) for run in map(json.loads, lines)]


@pytest.mark.slow
def test_a_campaign_on_a_slurm_node_survives_scancel_and_reports_both_machines(cluster,
                                                                               tmp_path):
    write_campaign(tmp_path, cluster)
    results = tmp_path / "results" / "cluster"
    journal = results / "node" / "journal" / "spin" / f"t{cluster.cpus}.jsonl"
    first = subprocess.Popen(on_slurm(tmp_path), cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 300
    while len(journaled(journal)) < 3:  # the node's measurement is under way
        assert first.poll() is None, first.stdout.read()[-3000:]
        assert time.monotonic() < deadline, "the SLURM measurement never started"
        time.sleep(0.2)
    running = cluster.running_jobs("measure")  # the measurement, not a build just ending
    assert running, "no SLURM job runs the measurement"
    subprocess.run(["scancel", *running], check=True)
    output, _ = first.communicate(timeout=300)
    assert first.returncode != 0, output[-3000:]  # the cancelled job failed the call
    kept = journaled(journal)
    assert 3 <= len(kept) < 2 * REPETITIONS and len(set(kept)) == len(kept)

    second = subprocess.run(on_slurm(tmp_path), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, (second.stdout + second.stderr)[-3000:]
    runs = list(csv.DictReader((results / "runs.csv").open()))
    node = [(r["strategy"], int(r["repetition"])) for r in runs if r["machine"] == "node"]
    assert sorted(node) == sorted((s, k) for s in ("os", "compact") for k in range(REPETITIONS))
    assert journaled(journal)[:len(kept)] == kept  # resumed: nothing lost, nothing repeated
    assert f"resuming: {len(kept)} of {2 * REPETITIONS}" in (
        results / "node" / "logs" / "measure" / "spin" / f"t{cluster.cpus}.log").read_text()
    assert {r["host"] for r in runs if r["machine"] == "node"} == {cluster.node}
    assert {r["machine"] for r in runs} == {"node", "here"}
    environment = json.loads((results / "node" / "environment.json").read_text())
    assert environment["slurm_node"] == cluster.node and environment["slurm_job_id"].isdigit()
    html = report_text(results)
    assert "node" in html and "here" in html and environment["slurm_job_id"] in html
    assert f"{2 * REPETITIONS} runs on {cluster.node}, 0 failed; placement verification: " \
        in html  # each machine's section states its runs and verification counts


@pytest.mark.slow
def test_an_unknown_partition_leaves_that_machine_out_in_one_line(cluster, tmp_path):
    write_campaign(tmp_path, cluster, partition="nosuchpartition")
    proc = subprocess.run(on_slurm(tmp_path, "-n"), cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert ("pinbench: machine node left out: SLURM has no partition 'nosuchpartition' "
            "(nothing of it is built, measured or reported in this call)") in proc.stderr
    assert "results/cluster/here/runs" in proc.stdout and "results/cluster/node/" not in proc.stdout


@pytest.mark.slow
def test_a_slurm_machine_is_never_measured_here(cluster, tmp_path):
    """Run without the SLURM profile, the SLURM machine's jobs refuse in one line (they would
    read and measure this host); the machine measured here goes on."""
    write_campaign(tmp_path, cluster)
    proc = run_campaign(tmp_path, "--until", "topology", "topology_on_slurm_1", timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert ("machine node is measured on a SLURM node: run the campaign with "
            "--workflow-profile slurm") in out
    assert (tmp_path / "results" / "cluster" / "here" / "topology.xml").is_file()
    assert not (tmp_path / "results" / "cluster" / "node" / "topology.xml").exists()
