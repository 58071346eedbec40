"""The bundled benchmarks build with gcc and clang, validate themselves, and agree across thread counts."""
import re
import subprocess

import pytest
from conftest import ROOT, compile_c
from optional_tools import COMPILERS

BENCHMARKS = sorted(p.stem for p in (ROOT / "benchmarks").glob("*.c"))


def run(binary, threads: int, *args: str) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": str(threads)}
    return subprocess.run([str(binary), *args], env=env, capture_output=True, text=True, timeout=120)


def test_at_least_the_six_promised_benchmarks():
    assert {"pairs", "quads", "stencil", "triad", "falseshare", "array"} <= set(BENCHMARKS)


@pytest.mark.parametrize("cc", COMPILERS)
@pytest.mark.parametrize("name", BENCHMARKS)
def test_quick_size_validates_with_the_same_checksum_on_1_2_and_3_threads(tmp_path, cc, name):
    binary = compile_c(ROOT / "benchmarks" / f"{name}.c", tmp_path / name, cc)
    checksums = set()
    for threads in (1, 2, 3):
        proc = run(binary, threads, "quick")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert re.search(r"^validation: OK$", proc.stdout, re.MULTILINE)
        assert re.search(r"^kernel_time_s: [0-9.eE+-]+$", proc.stdout, re.MULTILINE)
        checksums.add(re.search(r"^checksum: (\S+)$", proc.stdout, re.MULTILINE).group(1))
    assert len(checksums) == 1


@pytest.mark.parametrize("name", BENCHMARKS)
def test_bad_arguments_are_refused(tmp_path, name):
    binary = compile_c(ROOT / "benchmarks" / f"{name}.c", tmp_path / name)
    proc = run(binary, 1, "no-such-size")
    assert proc.returncode == 2 and proc.stdout == "" and proc.stderr.count("\n") == 1
