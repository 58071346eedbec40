"""pinbench's C helpers (pinbench.native): built by `pinbench setup` outside the package, used
from there by placements, the measuring process, the tracers and the workflow; a missing or
stale helper is one line; a non-editable install in a fresh virtual environment works."""
import json
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import threading
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, campaign_command

from pinbench import native
from pinbench.place.record import make_placement
from pinbench.results.placements import write_placement
from pinbench.topology import load

PY = sys.executable
TOPOLOGY = "Package:2 Core:2 PU:2"
#: four threads in two pairs: hierarchical and gp place them with the C libraries
PAIRS = "0,9,1,1\n9,0,1,1\n1,1,0,9\n1,1,9,0\n"
#: The line of a helper never built: a workflow rule's, a command's, the measuring process's.
NONE_BUILT = f"pinbench: {native.NONE_BUILT}\n"
MEASURE = "python -m pinbench.measure: error: "
#: every helper that needs no more than a C compiler and ar (scripts/setup.sh installs them)
CORE = ("launcher", "partition", "refinement", "tsan")

#: in the environment given: place hierarchical and gp, start the launcher, run one program;
#: print the placements, and where the C libraries and the launcher were loaded from
USE_HELPERS = """
import json, os, sys
from pinbench.graph.matrix import read_matrix
from pinbench.measure.launcher import Launcher
from pinbench.measure.spawn import base_environment
from pinbench.place.record import make_placement
from pinbench.topology import load
topo, matrix = load(sys.argv[1]), read_matrix(sys.argv[2])
pus = {s: make_placement(topo, s, 4, 0, 1, matrix).pus for s in ("hierarchical", "gp")}
maps = open("/proc/self/maps").read().split()
with Launcher() as launcher:
    exe = os.readlink(f"/proc/{launcher.pid}/exe")
    status = launcher.run("/bin/true", ["true"], base_environment(), 10, 0).wait_status
print(json.dumps({"pus": pus, "launcher": exe, "status": status, "libraries": sorted(
    {m for m in maps if m.endswith(("/libpartition.so", "/librefinement.so"))})}))
"""


def environment(folder: Path, package: Path | None = None, **more: str) -> dict[str, str]:
    """This process's environment, with the helpers in ``folder`` and pinbench from ``package``
    (a folder holding a copy of ``pinbench/``) when given."""
    env = os.environ | {native.NATIVE_DIR_VARIABLE: str(folder), "PYTHONDONTWRITEBYTECODE": "1"}
    if package is not None:
        env["PYTHONPATH"] = str(package)
    return env | more


def run(env: dict[str, str], *argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``python ARGV`` in ``env``, in ``cwd`` (default: the folder holding the native folder,
    not the repository's, whose ``pinbench/`` would come first on ``sys.path``)."""
    return subprocess.run([PY, *argv], env=env, capture_output=True, text=True, timeout=300,
                          cwd=cwd or Path(env[native.NATIVE_DIR_VARIABLE]).parent)


def files(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file and link below ``folder``: relative path -> (inode, modification time)."""
    return {str(p.relative_to(folder)): (p.lstat().st_ino, p.lstat().st_mtime_ns)
            for p in folder.rglob("*") if not p.is_dir() or p.is_symlink()}


def copy_package(tmp_path: Path) -> Path:
    """A copy of the package (its sources only) under ``tmp_path/pkg``; returns ``pkg``."""
    shutil.copytree(ROOT / "pinbench", tmp_path / "pkg" / "pinbench",
                    ignore=shutil.ignore_patterns("__pycache__", "build"))
    return tmp_path / "pkg"


def set_writable(folder: Path, writable: bool) -> None:
    """``chmod -R a-w`` (or ``u+w``) of ``folder``."""
    for path in [folder, *folder.rglob("*")]:
        if not path.is_symlink():
            mode = path.stat().st_mode
            path.chmod(mode | stat.S_IWUSR if writable
                       else mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def measure(env: dict[str, str], tmp_path: Path, binary: Path) -> subprocess.CompletedProcess:
    """A two-run job of ``binary`` at one thread through ``python -m pinbench.measure``."""
    placement = tmp_path / "os.json"
    write_placement(make_placement(load("auto"), "os", 1, seed=1), placement)
    spec = {"machine": "here", "benchmark": "spin", "threads": 1, "argv": [str(binary), "5"],
            "env": {}, "validate": "^validation: OK$", "time_regex": None, "timeout_s": 20,
            "repetitions": 2, "seed": 1, "order": "interleaved", "strategies": ["os"]}
    return run(env, "-m", "pinbench.measure", "--spec", json.dumps(spec), "--placements",
               str(placement), "--journal", str(tmp_path / "t.jsonl"), "--out",
               str(tmp_path / "t.csv"), "--lock", str(tmp_path / "lock"))


@pytest.mark.slow
def test_setup_builds_into_the_native_folder_once_and_the_helpers_are_used_from_there(tmp_path):
    folder = tmp_path / "native"
    env = environment(folder)
    first = run(env, "-m", "pinbench", "setup")
    assert first.returncode == 0, first.stdout + first.stderr
    assert f"built {', '.join(CORE)}" in first.stdout and str(folder) in first.stdout
    built = files(folder)
    manifest = (folder / native.MANIFEST).read_text()
    second = run(env, "-m", "pinbench", "setup")
    assert second.returncode == 0 and "setup: built" not in second.stdout
    assert f"up to date: {', '.join(CORE)}" in second.stdout
    assert files(folder) == built  # nothing built, nothing touched
    assert (folder / native.MANIFEST).read_text() == manifest

    (tmp_path / "m.csv").write_text(PAIRS)
    used = run(env, "-c", USE_HELPERS, TOPOLOGY, str(tmp_path / "m.csv"))
    assert used.returncode == 0, used.stderr
    found = json.loads(used.stdout)
    entries = json.loads(manifest)
    assert found["libraries"] == sorted(str(folder / entries[name]["path"])
                                        for name in ("partition", "refinement"))
    assert found["launcher"] == str(folder / entries["launcher"]["path"])
    assert found["status"] == 0 and [len(pus) for pus in found["pus"].values()] == [4, 4]


@pytest.mark.slow
def test_concurrent_setups_build_each_helper_once(tmp_path):
    env = environment(tmp_path / "native")
    results = []
    threads = [threading.Thread(target=lambda: results.append(run(env, "-m", "pinbench", "setup")))
               for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [r.returncode for r in results] == [0, 0], [r.stdout + r.stderr for r in results]
    said = sorted(r.stdout for r in results)
    assert sum(f"built {', '.join(CORE)}" in text for text in said) == 1
    assert sum(f"up to date: {', '.join(CORE)}" in text for text in said) == 1
    assert len(list((tmp_path / "native").glob("launcher-*"))) == 1


@pytest.mark.slow
def test_a_read_only_package_places_and_measures_with_its_built_helpers(tmp_path, spin_binaries):
    package, folder = copy_package(tmp_path), tmp_path / "native"
    env = environment(folder, package)
    set_writable(package, False)
    try:
        before = files(package)
        where = run(env, "-c", "import pinbench; print(pinbench.__file__)")
        assert where.stdout.strip() == str(package / "pinbench" / "__init__.py")
        setup = run(env, "-m", "pinbench", "setup")
        assert setup.returncode == 0, setup.stdout + setup.stderr
        (tmp_path / "m.csv").write_text(PAIRS)
        placed = run(env, "-m", "pinbench", "place", "--topology", TOPOLOGY, "--matrix",
                     str(tmp_path / "m.csv"), "--strategy", "hierarchical", "gp")
        assert placed.returncode == 0, placed.stderr
        assert "hierarchical" in placed.stdout and "gp" in placed.stdout
        measured = measure(env, tmp_path, spin_binaries["gcc"])
        assert measured.returncode == 0, measured.stderr[-2000:]
        assert len((tmp_path / "t.csv").read_text().splitlines()) == 3  # a header, two runs
        assert files(package) == before
    finally:
        set_writable(package, True)


def test_a_missing_helper_is_one_line_naming_pinbench_setup(tmp_path, spin_binaries):
    env = environment(tmp_path / "never-built")
    (tmp_path / "m.csv").write_text(PAIRS)
    for argv in (["-m", "pinbench", "place", "--topology", TOPOLOGY, "--matrix",
                  str(tmp_path / "m.csv"), "--strategy", "hierarchical"],
                 ["-m", "pinbench", "trace", "--print-flags"],
                 ["-m", "pinbench", "trace", "--tracer", "valgrind", "--threads", "2", "--out",
                  str(tmp_path / "x.csv"), "--", "/bin/true"]):
        proc = run(env, *argv)
        assert (proc.returncode, proc.stderr) == (
            2, f"pinbench {argv[2]}: error: {native.NONE_BUILT}\n"), argv
    proc = measure(env, tmp_path, spin_binaries["gcc"])
    assert (proc.returncode, proc.stderr.splitlines()[-1:]) == (1, [MEASURE + native.NONE_BUILT])
    assert "Traceback" not in proc.stderr


def test_a_helper_this_machine_cannot_build_is_one_line_at_setup_and_at_run_time(
        tmp_path, monkeypatch):
    folder = tmp_path / "native"
    monkeypatch.setenv(native.NATIVE_DIR_VARIABLE, str(folder))
    path = os.environ["PATH"]
    monkeypatch.setenv("PATH", str(tmp_path))  # no compiler, no valgrind, no clang
    said = []
    assert native.setup(said.append) == 1  # the launcher and the libraries are needed
    assert said[0] == ("pinbench setup: not built: launcher (the launcher): no C compiler found "
                       "(install the Debian package gcc, as scripts/setup.sh does)")
    assert len(said) == len(native.HELPERS)
    assert any(line.startswith("pinbench setup: not built: valgrind (the Valgrind tool): "
                               "valgrind not found") for line in said)
    monkeypatch.setenv("PATH", path)
    with pytest.raises(native.NotBuilt) as error:
        native.built("launcher")
    assert str(error.value) == ("the launcher is not built: no C compiler found (install the "
                                "Debian package gcc, as scripts/setup.sh does); then run "
                                "pinbench setup")


@pytest.mark.slow
def test_a_helper_that_does_not_compile_is_one_line_with_the_compilers_error(tmp_path):
    package, folder = copy_package(tmp_path), tmp_path / "native"
    env = environment(folder, package)
    with (package / "pinbench" / "graph" / "refinement.c").open("a") as handle:
        handle.write("#error planted\n")
    setup = run(env, "-m", "pinbench", "setup")
    assert setup.returncode == 1
    [line] = [line for line in setup.stdout.splitlines() if "refinement" in line]
    assert line.startswith("pinbench setup: not built: refinement (the placement refinement): "
                           "building the placement refinement failed (") and \
        line.endswith("error: #error planted")
    (tmp_path / "m.csv").write_text(PAIRS)
    placed = run(env, "-m", "pinbench", "place", "--topology", TOPOLOGY, "--matrix",
                 str(tmp_path / "m.csv"), "--strategy", "hierarchical")
    assert placed.returncode == 2 and placed.stderr.startswith(
        "pinbench place: error: the placement refinement is not built: building the placement "
        "refinement failed (") and placed.stderr.endswith("; then run pinbench setup\n")
    assert len(placed.stderr.splitlines()) == 1


@pytest.mark.slow
def test_a_stale_helper_is_one_line_until_setup_builds_it_again(tmp_path, spin_binaries):
    package, folder = copy_package(tmp_path), tmp_path / "native"
    env = environment(folder, package)
    assert run(env, "-m", "pinbench", "setup").returncode == 0
    old = {p.name for p in folder.iterdir()}
    for source in ("measure/launcher.c", "graph/refinement.c"):
        with (package / "pinbench" / source).open("a") as handle:
            handle.write("/* changed */\n")
    (tmp_path / "m.csv").write_text(PAIRS)
    place = ["-m", "pinbench", "place", "--topology", TOPOLOGY, "--matrix",
             str(tmp_path / "m.csv"), "--strategy", "hierarchical"]
    placed = run(env, *place)
    assert (placed.returncode, placed.stderr) == (2, (
        "pinbench place: error: the placement refinement is out of date (its sources changed "
        "since it was built): run pinbench setup\n"))
    measured = measure(env, tmp_path, spin_binaries["gcc"])
    assert measured.stderr.splitlines()[-1:] == [
        MEASURE + "the launcher is out of date (its sources changed since it was built): "
        "run pinbench setup"] and "Traceback" not in measured.stderr

    again = run(env, "-m", "pinbench", "setup")
    assert "built launcher, refinement; up to date: partition, tsan" in again.stdout
    new = {p.name for p in folder.iterdir()}
    assert len(old - new) == len(new - old) == 2  # the older builds are removed
    assert run(env, *place).returncode == 0
    assert measure(env, tmp_path, spin_binaries["gcc"]).returncode == 0


@pytest.mark.slow
def test_a_campaign_without_the_helpers_ends_in_their_line(tmp_path):
    """The measurement job says the launcher's line; a campaign that traces stops before its
    first job with the tsan runtime's."""
    env = environment(tmp_path / "never-built")
    config = {"campaign": "tiny", "repetitions": 3, "threads": [1], "strategies": ["os", "compact"],
              "machines": {"here": {"topology": "auto"}},
              "benchmarks": {"spin": {"source": "tests/data/spin.c", "input": "5",
                                      "timeout_s": 20}}}
    snakemake = campaign_command(tmp_path)[1:]  # run with the environment's Python
    (tmp_path / "campaign.yaml").write_text(yaml.safe_dump(config))
    measured = run(env, *snakemake, cwd=ROOT)
    assert measured.returncode == 1 and MEASURE + native.NONE_BUILT in measured.stderr, \
        measured.stderr[-3000:]
    assert "Traceback" not in measured.stderr

    (tmp_path / "campaign.yaml").write_text(yaml.safe_dump(config | {
        "strategies": ["os", "hierarchical"]}))
    traced = run(env, *snakemake, "-n", cwd=ROOT)
    assert traced.returncode == 1 and traced.stderr.endswith(NONE_BUILT), traced.stderr[-3000:]


@pytest.mark.slow
def test_a_non_editable_install_in_a_fresh_environment_works_after_pinbench_setup(tmp_path):
    """``pip install .`` (from a copy of the working tree's sources: pip builds in the tree)
    into a new virtual environment. Its dependencies are the pinned ones this suite runs
    with, named by a path file rather than installed again (half a minute of the suite): a
    path line adds their folder alone (pip and setuptools too), not the editable pinbench its
    own path files load."""
    source = tmp_path / "src"
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], capture_output=True,
                            check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    venv = tmp_path / "venv"
    env = {k: v for k, v in os.environ.items()
           if k not in (native.NATIVE_DIR_VARIABLE, "PYTHONPATH", "VIRTUAL_ENV")}
    subprocess.run([PY, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; "
                           "print(sysconfig.get_paths()['purelib'])"], capture_output=True,
                          text=True, check=True).stdout.strip()
    (Path(site) / "pinned_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    installed = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
                                "--no-deps",
                                "--no-build-isolation", str(source)],
                               env=env, capture_output=True, text=True, timeout=900)
    assert installed.returncode == 0, installed.stderr[-3000:]
    pinbench = str(venv / "bin" / "pinbench")

    def call(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True,
                              timeout=300)

    version = call(pinbench, "--version")
    assert version.returncode == 0 and version.stdout.startswith("pinbench"), version.stderr
    place = ["place", "--topology", "Package:1 Core:2 PU:1", "--threads", "2", "--strategy",
             "compact"]
    placed = call(str(venv / "bin" / "python"), "-X", "importtime", "-c",
                  "import sys; from pinbench.cli import main; import pinbench; "
                  "print(pinbench.__file__); sys.exit(main(sys.argv[1:]))", *place)
    assert placed.returncode == 0, placed.stderr[-2000:]
    where, *lines = placed.stdout.splitlines()
    assert Path(where).is_relative_to(venv) and "thread -> PU: 0->0 1->1" in lines
    imported = {line.rsplit("|", 1)[1].strip().split(".")[0] for line in placed.stderr.splitlines()
                if line.startswith("import time:") and line.count("|") == 2}
    assert "pinbench" in imported and not imported & {"affinity", "stats", "reports"}
    assert call(pinbench, *place).returncode == 0

    (tmp_path / "m.csv").write_text(PAIRS)
    hierarchical = [pinbench, "place", "--topology", TOPOLOGY, "--matrix",
                    str(tmp_path / "m.csv"), "--strategy", "hierarchical"]
    before = call(*hierarchical)
    assert (before.returncode, before.stderr) == (
        2, f"pinbench place: error: {native.NONE_BUILT}\n")
    setup = call(pinbench, "setup")
    assert setup.returncode == 0, setup.stdout + setup.stderr
    assert f"(in {venv / 'lib' / 'pinbench' / 'native'})" in setup.stdout
    after = call(*hierarchical)
    assert after.returncode == 0, after.stderr
