"""Shared fixtures: pinbench's C helpers, a private machine lock, the one way tests run a
campaign, compiled test programs, topology strings."""
from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import slurm_cluster
import yaml
from optional_tools import need

from pinbench import native
from pinbench.results.runs import RunRecord
from pinbench.trace import build

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session", autouse=True)
def native_helpers() -> None:
    """pinbench's C helpers, built as ``pinbench setup`` builds them (nothing when they are
    up to date): the tests use the launcher, the placement's libraries and the tracers."""
    said = []
    assert native.setup(said.append) == 0, "\n".join(said)


@pytest.fixture(scope="session", autouse=True)
def no_leftover_test_cluster() -> None:
    """No test cluster's configuration left in /etc/slurm by a killed session
    (:func:`slurm_cluster.clear_leftover`)."""
    if os.geteuid() == 0:
        slurm_cluster.clear_leftover()


@pytest.fixture(scope="session", autouse=True)
def private_machine_lock(tmp_path_factory) -> None:
    """The tests' measurements take a machine lock of their own (``PINBENCH_LOCK``, unless
    one is set), so a test session never queues behind a campaign measuring on this host,
    nor holds one up; a session's tests still measure one at a time."""
    if "PINBENCH_LOCK" not in os.environ:
        os.environ["PINBENCH_LOCK"] = str(tmp_path_factory.mktemp("lock") / "machine.lock")


@pytest.fixture(scope="session", autouse=True)
def private_array_cache(tmp_path_factory) -> None:
    """The tests keep computed arrays (:mod:`pinbench.stats.disk_cache`) in a folder of the
    session's (``PINBENCH_CACHE``, unless one is set): a user's cache neither hides nor
    receives what a test computes."""
    if "PINBENCH_CACHE" not in os.environ:
        os.environ["PINBENCH_CACHE"] = str(tmp_path_factory.mktemp("cache"))


def campaign_command(work: Path, *args: str, campaign: Path | None = None,
                     plain: bool = False, verbosity: str = "-v") -> list[str]:
    """The command that runs the campaign ``campaign`` (default ``work/campaign.yaml``) with
    its results in ``work``, as a user does: ``pinbench run`` (``plain``: the repository's
    Snakefile through plain ``snakemake``), started in the repository, so relative paths of
    a campaign are read from there; ``args``: Snakemake options and targets. ``verbosity``:
    ``-v`` (every job's lines, which the tests read, and Snakemake's listing), "" (the
    default terminal: tests/test_terminal.py) or ``-q``."""
    campaign = campaign or work / "campaign.yaml"
    if plain:
        return [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(work),
                "--configfile", str(campaign), *args]
    return [sys.executable, "-m", "pinbench", "run", str(campaign), "--directory", str(work),
            *([verbosity] if verbosity else []), *args]


def run_campaign(work: Path, *args: str, campaign: Path | None = None, plain: bool = False,
                 timeout: float = 900, verbosity: str = "-v",
                 **kwargs) -> subprocess.CompletedProcess:
    """:func:`campaign_command` run to its end, its output captured as text."""
    return subprocess.run(campaign_command(work, *args, campaign=campaign, plain=plain,
                                           verbosity=verbosity),
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
    """Build an OpenMP C program with ``cc``; fail the test with the compiler's message (skip
    it when ``cc`` is not installed)."""
    need(cc)
    proc = subprocess.run([cc, "-O2", "-fopenmp", "-o", str(out), str(source), "-lm"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return out


class OnFirstUse(dict):
    """A mapping whose value for a key is made by ``make(key)`` when a test first asks for it:
    a build that needs a compiler that is not installed skips only the tests that ask for it."""

    def __init__(self, make: Callable[[Any], Any]):
        super().__init__()
        self.make = make

    def __missing__(self, key):
        self[key] = value = self.make(key)
        return value


def builds(source: Path, folder: Path) -> OnFirstUse:
    """compiler -> ``source`` built by :func:`compile_c` with it, on first use."""
    return OnFirstUse(lambda cc: compile_c(source, folder / f"{source.stem}-{cc}", cc))


def helper(name: str) -> Path:
    """pinbench's C helper ``name`` (:func:`pinbench.native.built`); the test is skipped, with
    the manifest's reason, when this machine could not build it (a tool it needs is missing:
    the set-up of :func:`native_helpers` succeeded, so no build failed)."""
    try:
        return native.built(name)
    except native.NotBuilt as exc:
        if "not_built" in native.read_manifest(native.native_dir()).get(name, {}):
            pytest.skip(str(exc))
        raise


def ompt_tool() -> dict[str, str]:
    """:func:`pinbench.trace.build.ompt_tool`, what an explained run needs; the test is
    skipped where the OMPT tool could not be built (:func:`helper`)."""
    helper("ompt")
    return build.ompt_tool()


@pytest.fixture
def valgrind_tool() -> Path:
    """The Valgrind tracer's folder (:func:`helper`)."""
    return helper("valgrind")


#: A test that traces with Valgrind: skipped where the tracer's tool is not built.
needs_valgrind = pytest.mark.usefixtures("valgrind_tool")
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
def spin_binaries(tmp_path_factory) -> OnFirstUse:
    """tests/data/spin.c built with gcc (libgomp) or clang (libomp)."""
    return builds(DATA / "spin.c", tmp_path_factory.mktemp("spin"))
