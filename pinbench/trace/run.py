"""Tracing a program: which threads touch which cache lines, as an affinity matrix.

The three tracers (:mod:`pinbench.trace.build`) write the same output (see
pintools/README.md): the N x N symmetric matrix as plain CSV
(:mod:`pinbench.graph.matrix`) and a JSON sidecar (same path, ``.json``) with the
tracer, weight definition, which accesses were counted, line size, threads, accesses,
distinct and shared lines and the time taken. Weight definitions: ``common`` (for each
line touched by both i and j, W[i][j] += acc_i + acc_j), ``min`` (sum of minima),
``events`` (numalize-style sharing events), each over every access; and the same with
the prefix ``parallel-`` over the accesses made inside parallel regions only
(``parallel-common`` is the default; pintools/README.md, "What is counted"). The
runtimes take their options from the environment: PINBENCH_TRACE_OUT,
PINBENCH_TRACE_JSON, PINBENCH_TRACE_WEIGHT, PINBENCH_TRACE_LINE, PINBENCH_TRACE_THREADS,
PINBENCH_TRACE_RAW (the Valgrind tool also from ``--out=`` etc., the Pin tool from its
knobs ``-o`` etc.).

- ``tsan``: the program must be built with :func:`pinbench.trace.build.traced_build_flags`.
  Thread id: ``omp_get_thread_num()`` at function entry; the threads keep running in parallel.
- ``valgrind``: any binary; runs with ``OMP_WAIT_POLICY=passive`` unless the environment
  sets it (Valgrind runs one thread at a time).
- ``pin``: any binary, with an Intel Pin kit named by ``PIN_ROOT``.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from pinbench.graph.matrix import MatrixError, read_matrix
from pinbench.results import formats
from pinbench.results.layout import sidecar_path
from pinbench.results.regions import write_regions
from pinbench.trace.build import TRACERS, TraceError, built_tracer, pin_root, untraceable
from pinbench.trace.regions import regions_of

#: The weight definitions (pintools/README.md, "Weights"): each name counts every access,
#: the name with the prefix ``parallel-`` only those inside parallel regions ("What is
#: counted").
WEIGHTS = ("common", "min", "events")
#: Every weight name (the campaign's ``tracing.weight``), the default first.
WEIGHT_DEFINITIONS = (*(f"parallel-{w}" for w in WEIGHTS), *WEIGHTS)
DEFAULT_WEIGHT = WEIGHT_DEFINITIONS[0]
LINE_BYTES = tuple(2 ** k for k in range(3, 13))  # 8 .. 4096


def _program_path(argv0: str) -> Path:
    """The program as an absolute path (./x stays runnable whatever the working directory)."""
    found = argv0 if "/" in argv0 else shutil.which(argv0)
    path = Path(os.path.abspath(found)) if found else None
    if path is None or not path.is_file():
        raise TraceError(f"program not found: {argv0}")
    if not os.access(path, os.X_OK):
        raise TraceError(f"program is not executable: {argv0}")
    return path


def _is_script(path: Path) -> bool:
    """Whether ``path`` starts with ``#!`` (an interpreter runs it)."""
    with path.open("rb") as handle:
        return handle.read(2) == b"#!"


def trace(program_argv: list[str], threads: int, out_csv: Path | str, tracer: str = "tsan",
          weight: str = DEFAULT_WEIGHT, line_bytes: int = 64, *,
          env: dict[str, str] | None = None,
          stdout=None, stderr=None, timeout: float | None = None,
          raw: Path | str | None = None, tracer_options: list[str] | None = None,
          exit_status: Sequence[int] = (0,), cwd: str | None = None,
          regions: Path | str | None = None) -> dict:
    """Run ``program_argv`` with OMP_NUM_THREADS=threads under ``tracer``; return the sidecar.

    Writes ``out_csv`` (the N x N matrix) and its sidecar (``out_csv`` with ``.json``).
    For ``tsan`` the program must have been built with ``traced_build_flags()``.
    ``env`` replaces os.environ as the base environment; ``stdout``/``stderr`` go to
    subprocess.run (default: inherited); ``raw`` also writes "line,thread,count" records;
    ``tracer_options`` go to valgrind or pin before the tool's own options; ``exit_status``:
    the program's exit statuses that mean success; ``cwd``: the folder it starts in (default:
    this process's); ``regions``: also trace per parallel region and write the regions file
    there (:mod:`pinbench.results.regions`; the tsan and valgrind tracers).
    Raises :class:`pinbench.native.NotBuilt` (one line) if the tracer is not built, and
    TraceError (one line) if the program fails, no matrix was written, or a ``parallel-``
    weight with more than one thread counted no access (no OpenMP parallel region was
    seen: a matrix of zeros would mean nothing), or a binary tracer is asked to trace a
    script (it would trace the interpreter). A matrix without any shared line gets a
    warning in the sidecar (``warnings``).
    """
    if tracer not in TRACERS:
        raise TraceError(f"unknown tracer {tracer!r} (choose from {', '.join(TRACERS)})")
    if weight not in WEIGHT_DEFINITIONS:
        raise TraceError(f"unknown weight {weight!r} (choose from {', '.join(WEIGHT_DEFINITIONS)})")
    if line_bytes not in LINE_BYTES:
        raise TraceError(f"line size {line_bytes} is not a power of two from 8 to 4096")
    if not isinstance(threads, int) or not 1 <= threads <= 4096:
        raise TraceError(f"thread count {threads} is not an integer from 1 to 4096")
    if not program_argv:
        raise TraceError("no program to trace")
    if regions is not None and tracer == "pin":
        raise TraceError("the pin tracer does not trace per parallel region; the tsan and "
                         "valgrind tracers do (docs/tracing.md)")
    if regions is None:
        return _trace(program_argv, threads, out_csv, tracer, weight, line_bytes, env, stdout,
                      stderr, timeout, raw, tracer_options, exit_status, cwd, None)
    Path(regions).parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=Path(regions).parent, prefix=".regions-") as folder:
        listing = Path(folder) / "regions"
        sidecar = _trace(program_argv, threads, out_csv, tracer, weight, line_bytes, env,
                         stdout, stderr, timeout, raw, tracer_options, exit_status, cwd,
                         listing)
        write_regions(regions_of(listing, threads, sidecar["accesses"]), regions)
    return sidecar


def _trace(program_argv: list[str], threads: int, out_csv: Path | str, tracer: str,
           weight: str, line_bytes: int, env: dict[str, str] | None, stdout, stderr,
           timeout: float | None, raw: Path | str | None, tracer_options: list[str] | None,
           exit_status: Sequence[int], cwd: str | None, listing: Path | None) -> dict:
    """:func:`trace` once its arguments are checked; ``listing``: where the tsan runtime
    writes its list of parallel regions (None: not per region)."""
    program = _program_path(program_argv[0])
    if tracer != "tsan" and _is_script(program):
        raise TraceError(f"{program_argv[0]} is a script: the {tracer} tracer would trace its "
                         "interpreter, not the OpenMP program it starts (trace the program "
                         "itself, or build it for the tsan tracer, whose runtime goes with it)")
    out_csv = Path(out_csv).resolve()
    out_json = sidecar_path(out_csv)
    out_csv.parent.mkdir(parents=True, exist_ok=True)
    for stale in (out_csv, out_json):
        with contextlib.suppress(FileNotFoundError):
            stale.unlink()

    run_env = dict(os.environ if env is None else env)
    options = {"PINBENCH_TRACE_OUT": str(out_csv), "PINBENCH_TRACE_JSON": str(out_json),
               "PINBENCH_TRACE_WEIGHT": weight, "PINBENCH_TRACE_LINE": str(line_bytes),
               "PINBENCH_TRACE_THREADS": str(threads)}
    for name, path in (("PINBENCH_TRACE_RAW", raw), ("PINBENCH_TRACE_REGIONS", listing)):
        if path is not None:
            options[name] = str(Path(path).resolve())
        else:
            run_env.pop(name, None)
    run_env.update(options)
    run_env["OMP_NUM_THREADS"] = str(threads)
    if tracer == "tsan":
        found = untraceable(program)
        if found:
            raise TraceError(f"{program_argv[0]} cannot be traced by the tsan tracer: {found}; "
                             "compile it with the CFLAGS and link it with the LDFLAGS of "
                             "`pinbench trace --print-flags`, in separate commands "
                             "(docs/tracing.md)")
        cmd = [str(program), *program_argv[1:]]
    elif tracer == "valgrind":
        libdir = built_tracer("valgrind")
        run_env["VALGRIND_LIB"] = str(libdir)
        # Valgrind runs one thread at a time: spinning waits of the OpenMP runtime would
        # only add the runtime's own accesses (and time)
        run_env.setdefault("OMP_WAIT_POLICY", "passive")
        cmd = [shutil.which("valgrind") or "valgrind", "-q", *(tracer_options or []),
               "--tool=pinbench", f"--out={out_csv}", f"--json={out_json}", f"--weight={weight}",
               f"--line-bytes={line_bytes}", f"--threads={threads}",
               *([f"--raw={options['PINBENCH_TRACE_RAW']}"] if raw is not None else []),
               str(program), *program_argv[1:]]
    else:
        tool = built_tracer("pin")
        cmd = [str(pin_root() / "pin"), *(tracer_options or []), "-t", str(tool),
               "-o", str(out_csv), "-json", str(out_json), "-weight", weight,
               "-line", str(line_bytes), "-threads", str(threads),
               *(["-raw", options["PINBENCH_TRACE_RAW"]] if raw is not None else []),
               "--", str(program), *program_argv[1:]]

    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, env=run_env, stdout=stdout, stderr=stderr, timeout=timeout,
                              cwd=cwd)
    except subprocess.TimeoutExpired:
        raise TraceError(f"{program_argv[0]} did not finish within {timeout} s "
                         f"under the {tracer} tracer") from None
    except OSError as exc:
        raise TraceError(f"cannot run {cmd[0]}: {exc.strerror}") from None
    wall = time.monotonic() - start
    if proc.returncode not in exit_status:
        how = (f"was killed by signal {-proc.returncode}" if proc.returncode < 0
               else f"exited with status {proc.returncode}")
        raise TraceError(f"{program_argv[0]} {how} under the {tracer} tracer")
    if not out_csv.is_file() or not out_json.is_file():
        hint = (" (is it built with the flags of --print-flags?)" if tracer == "tsan" else "")
        raise TraceError(f"{program_argv[0]} ran but no matrix was written to {out_csv}{hint}")
    try:
        matrix = read_matrix(out_csv)
        sidecar = formats.read("sidecar", json.loads(out_json.read_text()), out_json)
    except (MatrixError, ValueError) as exc:
        raise TraceError(f"unusable tracer output: {exc}") from None
    set_here = [*options, "OMP_NUM_THREADS", "VALGRIND_LIB", "OMP_WAIT_POLICY"]
    sidecar.update({"threads_requested": threads, "program": list(program_argv),
                    "command": cmd, "wall_s": round(wall, 6),
                    "environment": {k: run_env[k] for k in set_here if k in run_env}})
    if len(matrix) != sidecar.get("threads"):
        raise TraceError(f"{out_csv}: {len(matrix)} rows but the sidecar says "
                         f"{sidecar.get('threads')} threads")
    if sidecar.get("instrumented") is False:
        raise TraceError(f"{program_argv[0]} ran no code compiled with -fsanitize=thread (the "
                         "tsan tracer's runtime is linked in but was never called): compile "
                         "it with the flags of --print-flags, apart from the link, whose "
                         "-fno-sanitize=thread switches the instrumentation off on a command "
                         "that also compiles")
    if sidecar.get("count") == "parallel" and threads > 1 and not sidecar.get("accesses"):
        raise TraceError(f"{program_argv[0]} made no access inside an OpenMP parallel region "
                         f"that the {tracer} tracer recognised; weight "
                         f"{weight.removeprefix('parallel-')!r} counts every access")
    if threads > 1 and np.count_nonzero(matrix) == np.count_nonzero(np.diag(matrix)):
        sidecar["warnings"] = [
            f"no cache line was shared by two of the {threads} threads (an all-zero matrix): "
            "the graph strategies will place as if nothing were shared; is the traced program "
            "the OpenMP program itself?"]
    out_json.write_text(json.dumps(formats.stamp("sidecar", sidecar), indent=2) + "\n")
    return sidecar
