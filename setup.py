"""The build's one step beyond pyproject.toml: a wheel or an sdist built from pinbench's git
checkout carries the commit it was built from, as ``pinbench/_build.py``, which
:mod:`pinbench.provenance` reads where pinbench runs from no checkout of its own (an installed
wheel). An sdist carries the module, so a wheel built from it carries it too."""
from __future__ import annotations

import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from pinbench.provenance import checkout  # noqa: E402  (the package's own sources)

#: The module written into the built package, relative to the package's root folder.
BUILD_MODULE = Path("pinbench", "_build.py")


def write_build_module(root: Path) -> None:
    """``root/pinbench/_build.py`` with the commit of this checkout, when it is one."""
    found = checkout(HERE / "pinbench")
    if found is None:
        return
    commit, modified = found
    (root / BUILD_MODULE).write_text(
        '"""Written by setup.py: the commit of pinbench this package was built from."""\n'
        f"COMMIT = {commit!r}\nMODIFIED = {modified!r}\n", encoding="utf-8")


class BuildPy(build_py):
    """build_py, then the commit into the built package (not for an editable install, which
    runs from the checkout itself)."""

    def run(self) -> None:
        super().run()
        if not getattr(self, "editable_mode", False):
            write_build_module(Path(self.build_lib))


class Sdist(sdist):
    """sdist, with the commit in its copy of the sources."""

    def make_release_tree(self, base_dir: str, files: list[str]) -> None:
        super().make_release_tree(base_dir, files)
        write_build_module(Path(base_dir))


setup(cmdclass={"build_py": BuildPy, "sdist": Sdist})
