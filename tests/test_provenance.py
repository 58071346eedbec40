"""The commit pinbench names (``pinbench --version``, ``environment.json``) is its own: its
checkout's when that checkout tracks its files, else the one a wheel or sdist was built from,
never that of a repository the package merely lies in."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from pinbench import __version__
from pinbench.provenance import checkout, identity

ROOT = Path(__file__).resolve().parent.parent
#: git commits without the user's configuration.
GIT_ENV = os.environ | {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org",
                        "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def git(folder: Path, *args: str) -> str:
    """``git args`` in ``folder``, its output."""
    return subprocess.run(["git", "-C", str(folder), *args], env=GIT_ENV, capture_output=True,
                          text=True, check=True).stdout.strip()


def repository(folder: Path, **files: str) -> str:
    """A fresh repository in ``folder`` with ``files`` committed; its HEAD."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    git(folder, "init", "-q")
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", "something else")
    return git(folder, "rev-parse", "HEAD")


def copy_package(target: Path) -> Path:
    """``target/pinbench`` with what :mod:`pinbench.provenance` needs of the package."""
    package = target / "pinbench"
    package.mkdir(parents=True)
    for name in ("__init__.py", "provenance.py"):
        shutil.copy2(ROOT / "pinbench" / name, package / name)
    return package


def described(where: Path) -> str:
    """``pinbench --version``'s line from the package under ``where``."""
    proc = subprocess.run([sys.executable, "-c", "from pinbench.provenance import describe; "
                                                 "print(describe())"],
                          env=os.environ | {"PYTHONPATH": str(where)}, cwd=where,
                          capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def test_a_copy_inside_another_repository_names_no_commit_of_it(tmp_path):
    outer = tmp_path / "project"
    repository(outer, **{"README.md": "a user's project\n"})
    package = copy_package(outer / "vendor")
    assert git(package, "rev-parse", "--show-toplevel") == str(outer)
    assert checkout(package) is None
    assert described(outer / "vendor") == f"pinbench {__version__} (not from a git checkout)"


def test_a_copy_whose_repository_tracks_it_names_that_commit(tmp_path):
    copy_package(tmp_path / "fork")
    head = repository(tmp_path / "fork")
    assert checkout(tmp_path / "fork" / "pinbench") == (head, False)
    (tmp_path / "fork" / "pinbench" / "__init__.py").write_text(f"__version__ = '{__version__}'\n")
    assert checkout(tmp_path / "fork" / "pinbench") == (head, True)


def test_a_built_package_outside_its_checkout_names_the_commit_it_was_built_from(tmp_path):
    outer = tmp_path / "project"
    repository(outer, **{"README.md": "a user's project\n"})
    package = copy_package(outer / "venv")
    (package / "_build.py").write_text("COMMIT = '0123456789abcdef0123'\nMODIFIED = False\n")
    assert described(outer / "venv") == f"pinbench {__version__} (commit 0123456789ab)"


def test_in_its_own_checkout_pinbench_names_its_head():
    if checkout(ROOT / "pinbench") is None:
        pytest.skip("the tests run from no git checkout of pinbench")
    assert identity()["commit"] == git(ROOT, "rev-parse", "HEAD")


@pytest.mark.slow
def test_a_wheel_and_an_sdist_built_from_a_checkout_carry_its_commit(tmp_path):
    """The project's build files, committed in a fresh repository, built as ``pip wheel``
    and ``setup.py sdist`` build them; the wheel, unpacked inside another repository, names
    that commit."""
    source = tmp_path / "src"
    listed = git(ROOT, "ls-files", "--cached", "--others", "--exclude-standard", "--",
                 "pyproject.toml", "setup.py", "README.md", "LICENSE", ".gitignore",
                 "pinbench").splitlines()
    for name in listed:
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    head = repository(source)
    baked = f"COMMIT = {head!r}\nMODIFIED = False\n"

    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                    "--no-build-isolation", str(source), "-w", str(tmp_path / "dist")],
                   capture_output=True, check=True, timeout=300)
    wheel = next((tmp_path / "dist").glob("pinbench-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        assert archive.read("pinbench/_build.py").decode().endswith(baked)
        outer = tmp_path / "project"
        repository(outer, **{"README.md": "a user's project\n"})
        archive.extractall(outer / "site-packages")
    assert described(outer / "site-packages") == f"pinbench {__version__} (commit {head[:12]})"

    subprocess.run([sys.executable, "setup.py", "-q", "sdist", "-d", str(tmp_path / "dist")],
                   cwd=source, capture_output=True, check=True, timeout=300)
    with tarfile.open(next((tmp_path / "dist").glob("pinbench-*.tar.gz"))) as archive:
        member = next(m for m in archive.getmembers() if m.name.endswith("pinbench/_build.py"))
        assert archive.extractfile(member).read().decode().endswith(baked)
    assert not (source / "pinbench" / "_build.py").exists()  # written into the builds only
