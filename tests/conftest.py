"""Shared fixtures: the repository root, compiled test programs, topology strings."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = Path(__file__).resolve().parent / "data"


def preset(name: str) -> str:
    """The synthetic topology string of a machine preset."""
    return yaml.safe_load((ROOT / "config" / "machines" / f"{name}.yaml").read_text())["topology"]


def compile_c(source: Path, out: Path, cc: str = "gcc") -> Path:
    """Build an OpenMP C program with ``cc``; fail the test with the compiler's message."""
    if shutil.which(cc) is None:
        pytest.fail(f"{cc} is not installed (run scripts/setup.sh)")
    proc = subprocess.run([cc, "-O2", "-fopenmp", "-o", str(out), str(source), "-lm"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture(scope="session")
def spin_binaries(tmp_path_factory) -> dict[str, Path]:
    """tests/data/spin.c built with gcc (libgomp) and clang (libomp)."""
    out = tmp_path_factory.mktemp("spin")
    return {cc: compile_c(DATA / "spin.c", out / f"spin-{cc}", cc) for cc in ("gcc", "clang")}
