"""The folder each run starts in.

A benchmark's ``cwd`` names one: its runs start there, and pinbench never writes into it. By
default a measurement job has a scratch folder of its own (``<machine>/scratch/<bench>/t<N>``:
:meth:`pinbench.results.layout.Layout.scratch`), created empty when the job starts, emptied
before every run and removed when the job ends: what a program writes into its current folder
(an output file, a checkpoint it would resume from) neither litters the project nor meets
another job's runs, nor a later run of its own.

Runs used to start in the project (the workflow's working directory), so a run command may
name the project's files by relative paths (``input: data/in.mtx``). A run started in the
scratch folder gets each argument that names an existing file or folder of the project by a
relative path as its absolute path, so such commands keep working; a path inside an argument
(``--in=data/in.mtx``, a ``sh -c`` script) is the program's own business.
"""
from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator


def project_paths(argv: list[str]) -> list[str]:
    """``argv`` with each argument that is a relative path naming an existing file or folder
    of the project (the working directory) made absolute; the command's name too when it holds
    a slash (a name without one is looked up in ``PATH``).

    >>> project_paths(["sh", "pinbench", "./pinbench/", "no-such-file", "/bin", "-n"]) == [
    ...     "sh", os.path.abspath("pinbench"), os.path.abspath("pinbench"), "no-such-file",
    ...     "/bin", "-n"]
    True
    """
    return [os.path.abspath(arg) if arg and not os.path.isabs(arg) and os.path.lexists(arg)
            and (index or "/" in arg) else arg for index, arg in enumerate(argv)]


def empty(folder: str) -> None:
    """Remove everything in ``folder`` (a link itself, never what it points to); nothing to do,
    one look, when it is empty."""
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)


@contextlib.contextmanager
def scratch(folder: str) -> Iterator[str]:
    """A measurement job's scratch folder: made (or emptied: a job killed before its end left
    it) for the job, removed at its end with the folders above it it leaves empty."""
    os.makedirs(folder, exist_ok=True)
    empty(folder)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)
    with contextlib.suppress(OSError):
        os.removedirs(os.path.dirname(folder))
