"""Explained runs: a benchmark run under pinbench's OMPT tool, on LLVM's libomp.

An explained run is a measurement job's run with the OMPT tool loaded
(``pintools/ompt/pinbench_ompt.c``, built by ``pinbench setup``, found by
:func:`pinbench.trace.build.ompt_tool` in the workflow, never here). It records, per
OpenMP thread, the time in parallel regions, the waits of barriers, taskwait, taskgroup,
locks and critical sections, and counts of regions, barriers and tasks, and writes them at
the runtime's finalize as one JSON record.

Runtimes: LLVM's libomp implements OMPT, GCC's libgomp does not. libomp also implements
libgomp's ABI, so a gcc-built program runs on libomp when ``LD_LIBRARY_PATH`` starts with a
folder whose ``libgomp.so.1`` is libomp (:data:`REDIRECT_NOTE`). A program whose runtime
does not load the tool (a static libgomp, no OpenMP at all) writes no record: its explained
runs fail with :data:`NO_RECORD`, in one line, and the job goes on.

The job's one-thread runs (T_1, when the campaign measures no one-thread cell) run under the
tool too, so that T_1 and the explained runs share a runtime; their record is kept, a run
without one counts as a run on the program's own runtime.

Explained runs are never timing runs: they go to their own journal and table
(:mod:`pinbench.results.explained`), so the Speedup-Test sees only uninstrumented times.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from pinbench.measure import tool_files

#: The variable naming the file the tool writes its record to.
OUT_VARIABLE = "PINBENCH_OMPT_OUT"
#: Why an explained run has no record.
NO_RECORD = ("no OMPT record: the program did not run under the OMPT tool (its OpenMP runtime "
             "is not libomp and could not be redirected to it, e.g. a static libgomp)")
REDIRECT_NOTE = "libgomp.so.1 redirected to libomp through LD_LIBRARY_PATH"


def explain_environment(env: dict[str, str], tool: dict[str, str], out: str) -> dict[str, str]:
    """``env`` with the OMPT tool loaded and libgomp redirected to libomp.

    ``tool``: what :func:`pinbench.trace.build.ompt_tool` returned (``tool``,
    ``gomp_dir``); ``out``: where the tool writes the run's record.

    >>> env = explain_environment({"LD_LIBRARY_PATH": "/opt"}, {"tool": "/t.so",
    ...                           "gomp_dir": "/g"}, "/r.json")
    >>> env["OMP_TOOL_LIBRARIES"], env["LD_LIBRARY_PATH"], env["PINBENCH_OMPT_OUT"]
    ('/t.so', '/g:/opt', '/r.json')
    """
    env = dict(env)
    library_path = env.get("LD_LIBRARY_PATH", "")
    env.update(OMP_TOOL="enabled", OMP_TOOL_LIBRARIES=tool["tool"], **{OUT_VARIABLE: out},
               LD_LIBRARY_PATH=tool["gomp_dir"] + (f":{library_path}" if library_path else ""))
    return env


def links_libgomp(binary: str) -> bool:
    """Whether a program names GCC's ``libgomp.so.1`` among its libraries (a gcc build), read
    from its bytes (a script or an unreadable file: False)."""
    try:
        with open(binary, "rb") as handle:
            return b"libgomp.so.1" in handle.read(64 << 20)
    except OSError:
        return False


def runtime_used(record: dict | None, binary: str) -> str:
    """In words, the OpenMP runtime an explained run used, e.g.
    ``libomp (LLVM OMP version: 5.0.20140926), libgomp.so.1 redirected to libomp through
    LD_LIBRARY_PATH``; ``none`` when the run left no record."""
    if not record:
        return "none"
    text = f"libomp ({record.get('runtime') or 'version not reported'})"
    return text + (f", {REDIRECT_NOTE}" if links_libgomp(binary) else "")


def read_record(path: str) -> dict | None:
    """The tool's record of a run, or None when it wrote none (or an unreadable one); the
    file is removed once read."""
    text = tool_files.take(path)
    try:
        record = json.loads(text) if text is not None else None
    except ValueError:
        return None
    return record if isinstance(record, dict) and "threads" in record else None


def record_path(folder: Path, strategy: str, repetition: int) -> str:
    """Where one explained run's tool writes its record (read back and removed after the run):
    an absolute path, so that a program that changes its directory still writes it there.

    >>> os.path.isabs(record_path(Path("."), "os", 0))
    True
    """
    folder.mkdir(parents=True, exist_ok=True)
    return os.path.abspath(folder / f".ompt-{os.getpid()}-{strategy}-r{repetition}.json")
