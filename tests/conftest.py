"""Shared fixtures: pinbench's C helpers, a private machine lock, the one way tests run a
campaign, compiled test programs, topology strings."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pinbench import native
from pinbench.results.runs import RunRecord

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session", autouse=True)
def native_helpers() -> None:
    """pinbench's C helpers, built as ``pinbench setup`` builds them (nothing when they are
    up to date): the tests use the launcher, the placement's libraries and the tracers."""
    said = []
    assert native.setup(said.append) == 0, "\n".join(said)


@pytest.fixture(scope="session", autouse=True)
def private_machine_lock(tmp_path_factory) -> None:
    """The tests' measurements take a machine lock of their own (``PINBENCH_LOCK``, unless
    one is set), so a test session never queues behind a campaign measuring on this host,
    nor holds one up; a session's tests still measure one at a time."""
    if "PINBENCH_LOCK" not in os.environ:
        os.environ["PINBENCH_LOCK"] = str(tmp_path_factory.mktemp("lock") / "machine.lock")


def campaign_command(work: Path, *args: str, campaign: Path | None = None,
                     plain: bool = False) -> list[str]:
    """The command that runs the campaign ``campaign`` (default ``work/campaign.yaml``) with
    its results in ``work``, as a user does: ``pinbench run`` (``plain``: the repository's
    Snakefile through plain ``snakemake``), started in the repository, so relative paths of
    a campaign are read from there; ``args``: Snakemake options and targets."""
    campaign = campaign or work / "campaign.yaml"
    if plain:
        return [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(work),
                "--configfile", str(campaign), *args]
    return [sys.executable, "-m", "pinbench", "run", str(campaign), "--directory", str(work),
            *args]


def run_campaign(work: Path, *args: str, campaign: Path | None = None, plain: bool = False,
                 timeout: float = 900, **kwargs) -> subprocess.CompletedProcess:
    """:func:`campaign_command` run to its end, its output captured as text."""
    return subprocess.run(campaign_command(work, *args, campaign=campaign, plain=plain),
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT, **kwargs)


def report_text(results: Path) -> str:
    """Every page of a campaign's report (``results``: ``results/<campaign>``), one text: the
    first page, then each benchmark's and each machine's page."""
    report = results / "report"
    return "\n".join(page.read_text() for page in [report / "index.html",
                                                    *sorted(report.glob("*/*.html"))])


def preset(name: str) -> str:
    """The synthetic topology string of a machine preset."""
    return yaml.safe_load((ROOT / "pinbench" / "workflow" / "presets" / f"{name}.yaml").read_text())["topology"]


def run_record(**fields) -> RunRecord:
    """A run of strategy ``os`` that succeeded in 1 s, with ``fields`` changed."""
    values = dict(machine="m", benchmark="b", threads=2, strategy="os", repetition=0,
                  order_index=0, ok=True, failure="", time_s=1.0, time_source="wall", wall_s=1.0,
                  user_s=1.0, sys_s=0.0, exit_status=0, timed_out=False, validated=True,
                  verification="n/a", pus="", observed="", load_1m=0.0, governor="unreadable",
                  started_at="2026-01-01T00:00:00.000+00:00")
    values.update(fields)
    return RunRecord(**values)


def compile_c(source: Path, out: Path, cc: str = "gcc") -> Path:
    """Build an OpenMP C program with ``cc``; fail the test with the compiler's message."""
    if shutil.which(cc) is None:
        pytest.fail(f"{cc} is not installed (run scripts/setup.sh)")
    proc = subprocess.run([cc, "-O2", "-fopenmp", "-o", str(out), str(source), "-lm"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return out


#: A test that needs two CPUs to run on (a thread bound to one of them, or moved, is told
#: apart from one that may run anywhere): skipped where this process may use one only.
needs_two_cpus = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs")


@pytest.fixture(scope="session")
def fake_mask(tmp_path_factory) -> Path:
    """tests/data/fake_mask.c built: preloaded, a program believes in a faked machine's CPUs
    (``PINBENCH_FAKE_CPUS``) and binds nothing."""
    out = tmp_path_factory.mktemp("fake") / "fake_mask.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-o", str(out), str(DATA / "fake_mask.c"),
                    "-ldl"], check=True)
    return out


@pytest.fixture(scope="session")
def spin_binaries(tmp_path_factory) -> dict[str, Path]:
    """tests/data/spin.c built with gcc (libgomp) and clang (libomp)."""
    out = tmp_path_factory.mktemp("spin")
    return {cc: compile_c(DATA / "spin.c", out / f"spin-{cc}", cc) for cc in ("gcc", "clang")}
