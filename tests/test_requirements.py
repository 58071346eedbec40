"""The set-up's two parts on a machine without the optional tools, as a user without root has
it: ``scripts/requirements.sh`` names each missing tool with its packages on Debian, Fedora,
Spack and conda-forge and lets the set-up go on, and ``scripts/setup.sh`` stops in one line,
before any virtual environment, only without what a campaign cannot do without."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from optional_tools import missing, stripped_path

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "scripts"

pytestmark = pytest.mark.skipif(bool(missing("lstopo-no-graphics", "gcc", "python3")),
                                reason="needs hwloc, gcc and python3, which a campaign needs")


@pytest.fixture(scope="module")
def bare(tmp_path_factory) -> str:
    """A PATH without clang, Valgrind, likwid, Chromium, SLURM, cmake, g++ or gfortran."""
    return stripped_path(tmp_path_factory.mktemp("bare") / "bin")


def call(script: Path, *args: str, path: str) -> subprocess.CompletedProcess:
    """``script`` run with ``path`` as PATH, as a user who may not install (not root)."""
    env = os.environ | {"PATH": path, "PINBENCH_SETUP_NO_INSTALL": "1"}
    return subprocess.run([str(script), *args], env=env, capture_output=True, text=True,
                          timeout=60, check=False)


def test_the_run_part_names_each_missing_optional_tool_and_goes_on(bare):
    said = call(SCRIPTS / "requirements.sh", path=bare)
    assert said.returncode == 0, said.stderr
    lines = said.stderr.splitlines()
    assert ("pinbench setup: not installed (optional): clang with libomp, for the OMPT "
            "explanations of why a placement wins, and builds with clang") in lines
    assert ("pinbench setup: not installed (optional): valgrind, for the Valgrind tracer "
            "(tracer: valgrind)") in lines
    assert "  Debian/Ubuntu: sudo apt-get install clang libomp-dev valgrind" in lines
    assert ("  Fedora/RHEL:   sudo dnf install clang libomp-devel valgrind "
            "valgrind-tools-devel") in lines
    assert "  Spack:         spack install llvm valgrind" in lines
    assert "  conda-forge:   conda install -c conda-forge clang llvm-openmp valgrind" in lines
    assert not any(tool in said.stderr for tool in ("g++", "gfortran", "cmake", "SLURM"))


def test_the_test_part_adds_the_test_suites_tools(bare):
    said = call(SCRIPTS / "requirements.sh", "test", path=bare)
    assert said.returncode == 0, said.stderr
    for tool in ("clang with libomp", "valgrind", "g++", "gfortran", "cmake", "likwid-pin",
                 "chromium", "SLURM and munge"):
        assert f"pinbench setup: not installed (optional): {tool}, for " in said.stderr
    fedora = next(line for line in said.stderr.splitlines() if "dnf install" in line).split()
    assert {"gcc-c++", "gcc-gfortran", "cmake", "likwid", "chromium", "slurm-slurmctld",
            "munge"} <= set(fedora)
    apt = call(SCRIPTS / "requirements.sh", "--apt", "test", path=bare)
    assert apt.stdout.split() == ["clang", "libomp-dev", "valgrind", "g++", "gfortran", "cmake",
                                  "likwid", "chromium", "slurm-wlm", "munge"]


@pytest.mark.parametrize("tool, replacement, named, debian", [
    ("lstopo-no-graphics", None, "hwloc (lstopo-no-graphics)", "hwloc-nox"),
    ("gcc", "#!/bin/sh\nexit 1\n", "gcc with OpenMP (gcc -fopenmp)", "gcc"),
    ("python3", "#!/bin/sh\nexit 1\n", "Python >= 3.11 with venv (python3)",
     "python3 python3-venv"),
], ids=["hwloc", "gcc-openmp", "python-venv"])
def test_without_what_a_campaign_needs_the_set_up_stops_in_one_line(
        bare, tmp_path, tool, replacement, named, debian):
    """``scripts/setup.sh`` (a copy, whose folder gets no virtual environment) exits 1 with
    one line naming the tool that is missing (or a gcc that links no OpenMP program, a
    python3 without venv), and the packages to install."""
    path = stripped_path(tmp_path / "bin", path=bare)
    (tmp_path / "bin" / tool).unlink()
    if replacement:
        (tmp_path / "bin" / tool).write_text(replacement)
        (tmp_path / "bin" / tool).chmod(0o755)
    project = tmp_path / "project"
    shutil.copytree(SCRIPTS, project / "scripts")
    said = call(project / "scripts" / "setup.sh", path=path)
    assert said.returncode == 1, said.stdout + said.stderr
    stops = [line for line in said.stderr.splitlines() if "cannot run" in line]
    assert stops == [f"pinbench setup: a campaign cannot run without {named}: install it, "
                     "then run the set-up again"]
    assert f"  Debian/Ubuntu: sudo apt-get install {debian} clang libomp-dev valgrind" \
        in said.stderr.splitlines()
    assert sorted(path.name for path in project.iterdir()) == ["scripts"]
