"""Cache-line sharing tracers: build them on demand, trace a program, read its matrix.

Three tracers write the same output (see pintools/README.md):

- ``tsan`` (default): the program is compiled with ``-fsanitize=thread`` and linked with
  our small runtime (pintools/tsan_rt.c) instead of libtsan; ``traced_build_flags()``
  (or ``--print-flags``) gives the compile and the link flags, kept apart. Thread id:
  ``omp_get_thread_num()`` at function entry; the threads keep running in parallel.
- ``valgrind``: a Valgrind tool (pintools/vg_pinbench.c) for binaries that cannot be
  rebuilt; built out of tree against Debian's valgrind package. Runs with
  ``OMP_WAIT_POLICY=passive`` unless the environment sets it.
- ``pin``: an Intel Pin tool (pintools/pin/), built with the kit's makefiles only when
  ``PIN_ROOT`` names a kit. Pin is never downloaded.

Output: the N x N symmetric matrix as plain CSV (``affinity.matrix``) and a JSON sidecar
(same path, ``.json``) with the tracer, weight definition, line size, threads, accesses,
distinct and shared lines and the time taken. Weights: ``common`` (default; for each
line touched by both i and j, W[i][j] += acc_i + acc_j), ``min`` (sum of minima),
``events`` (numalize-style sharing events). The runtimes take their options from the
environment: PINBENCH_TRACE_OUT, PINBENCH_TRACE_JSON, PINBENCH_TRACE_WEIGHT,
PINBENCH_TRACE_LINE, PINBENCH_TRACE_THREADS, PINBENCH_TRACE_RAW (the Valgrind tool also
from ``--out=`` etc., the Pin tool from its knobs ``-o`` etc.).

Command line::

    python -m affinity.trace --tracer {tsan,valgrind,pin} --threads N --out m.csv \\
        [--weight common|min|events] [--line-bytes 64] -- PROGRAM ARGS
    python -m affinity.trace --print-flags      # CFLAGS=... and LDFLAGS=... (two lines)

Errors (bad usage, a tracer that cannot be built, a failing program) print one line and
exit with status 2.
"""
from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: python affinity/trace.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from affinity.matrix import MatrixError, read_matrix  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PINTOOLS = ROOT / "pintools"
BUILD = PINTOOLS / "build"
TRACERS = ("tsan", "valgrind", "pin")
WEIGHTS = ("common", "min", "events")
LINE_BYTES = tuple(2 ** k for k in range(3, 13))  # 8 .. 4096

#: the compile flags of a traced build (the link flags come from traced_build_flags())
TSAN_CFLAGS = "-fsanitize=thread -fopenmp"
#: the program's memcpy/memmove/memset calls go through the runtime's wrappers
TSAN_WRAPPED = ("memcpy", "memmove", "memset", "__memcpy_chk", "__memmove_chk", "__memset_chk")

TSAN_SOURCES = ("tsan_rt.c", "tsan_wrap.c", "pb_core.h")
VALGRIND_SOURCES = ("vg_pinbench.c", "pb_core.h")
PIN_SOURCES = ("pin/pinbench.cpp", "pin/makefile", "pin/makefile.rules", "pb_core.h")

#: where Debian (and other layouts) keep Valgrind's tool headers, static libraries, tools
VALGRIND_INCLUDE_DIRS = ("/usr/include/valgrind", "/usr/local/include/valgrind")
VALGRIND_LIB_DIRS = ("/usr/lib/x86_64-linux-gnu/valgrind", "/usr/libexec/valgrind",
                     "/usr/lib/valgrind", "/usr/local/lib/valgrind",
                     "/usr/local/libexec/valgrind")
VALGRIND_DEFINES = ("-DVGA_amd64=1", "-DVGO_linux=1", "-DVGP_amd64_linux=1",
                    "-DVGPV_amd64_linux_vanilla=1")


class TraceError(RuntimeError):
    """A tracer cannot be built or run, or the traced program failed; one-line message."""


# ------------------------------------------------------------------------------ building

def _newest_source(names: tuple[str, ...]) -> float:
    return max((PINTOOLS / name).stat().st_mtime for name in names)


@contextlib.contextmanager
def _build_lock():
    """Serialise builds of concurrent processes (workflow jobs, test workers)."""
    BUILD.mkdir(parents=True, exist_ok=True)
    with open(BUILD / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _up_to_date(output: Path, stamp: Path, recipe: list[list[str]],
                sources: tuple[str, ...]) -> bool:
    """``output`` exists, is newer than its sources and was made by the same commands."""
    try:
        return (output.stat().st_mtime >= _newest_source(sources)
                and json.loads(stamp.read_text()) == recipe)
    except (OSError, ValueError):
        return False


def _run_build(cmd: list[str], what: str, cwd: Path | None = None) -> None:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    except OSError as exc:
        raise TraceError(f"building {what}: cannot run {cmd[0]}: {exc.strerror}") from None
    if proc.returncode != 0:
        lines = [line for line in (proc.stderr + proc.stdout).splitlines() if line.strip()]
        first = next((line for line in lines if "error" in line.lower()), lines[0] if lines else "")
        raise TraceError(f"building {what} failed ({' '.join(cmd[:2])} ...): {first.strip()}")


def _c_compiler() -> str:
    for cc in ("gcc", "cc", "clang"):
        path = shutil.which(cc)
        if path:
            return path
    raise TraceError("no C compiler found (install the Debian package gcc)")


def _build_tsan() -> Path:
    out = BUILD / "libpinbench_tsan.a"
    cc = _c_compiler()
    if shutil.which("ar") is None:
        raise TraceError("ar not found (install the Debian package binutils)")
    gnu = "clang" not in Path(cc).name
    flags = ["-O2", "-fPIC", "-fvisibility=hidden", "-std=gnu11", "-Wall", "-Wextra"]
    # the runtime must not call memcpy/memset itself (they are wrapped at link time)
    flags += ["-fno-tree-loop-distribute-patterns"] if gnu else ["-fno-builtin"]
    recipe = [[cc, *flags, "-c", f"{src}.c", "-o", f"{src}.o"] for src in ("tsan_rt", "tsan_wrap")]
    recipe.append(["ar", "rcs", out.name, "tsan_rt.o", "tsan_wrap.o"])
    stamp = BUILD / "tsan.stamp"
    if _up_to_date(out, stamp, recipe, TSAN_SOURCES):
        return out
    with tempfile.TemporaryDirectory(dir=BUILD) as tmp:
        for src in ("tsan_rt", "tsan_wrap"):
            _run_build([cc, *flags, "-c", str(PINTOOLS / f"{src}.c"), "-o", f"{tmp}/{src}.o"],
                       "the tsan runtime")
        _run_build(["ar", "rcs", f"{tmp}/{out.name}", f"{tmp}/tsan_rt.o", f"{tmp}/tsan_wrap.o"],
                   "the tsan runtime")
        os.replace(f"{tmp}/{out.name}", out)
    stamp.write_text(json.dumps(recipe))
    return out


def _valgrind_dirs() -> tuple[Path, Path, Path]:
    """(tool headers, directory of the static core libraries, directory of the stock tools)."""
    if platform.machine() not in ("x86_64", "amd64"):
        raise TraceError(f"the valgrind tracer is built for amd64 only, not {platform.machine()}")
    if shutil.which("valgrind") is None:
        raise TraceError("valgrind not found (install the Debian package valgrind)")
    inc = next((Path(d) for d in VALGRIND_INCLUDE_DIRS
                if (Path(d) / "pub_tool_basics.h").is_file()), None)
    libs = next((Path(d) for d in VALGRIND_LIB_DIRS
                 if (Path(d) / "libcoregrind-amd64-linux.a").is_file()), None)
    tools = next((Path(d) for d in VALGRIND_LIB_DIRS
                  if (Path(d) / "memcheck-amd64-linux").is_file()), None)
    if inc is None or libs is None or tools is None:
        raise TraceError("Valgrind's tool headers (pub_tool_basics.h) and static libraries "
                         "(libcoregrind-amd64-linux.a) are missing (Debian package valgrind)")
    return inc, libs, tools


def _build_valgrind() -> Path:
    """The VALGRIND_LIB directory: our tool next to links to the stock files."""
    inc, libs, tools = _valgrind_dirs()
    if shutil.which("gcc") is None:
        raise TraceError("gcc not found (install the Debian package gcc)")
    libdir = BUILD / "valgrind"
    tool = libdir / "pinbench-amd64-linux"
    compile_cmd = ["gcc", "-O2", "-std=gnu11", "-Wall", "-Wno-unused-parameter", f"-I{inc}",
                   f"-I{PINTOOLS}", *VALGRIND_DEFINES, "-fno-builtin", "-fno-stack-protector",
                   "-fno-pie", "-fno-strict-aliasing", "-c", "vg_pinbench.c", "-o", "vg.o"]
    link_cmd = ["gcc", "-o", tool.name, "vg.o", "-static", "-nodefaultlibs", "-nostartfiles",
                "-u", "_start", "-Wl,-Ttext-segment=0x58000000", "-no-pie",
                str(libs / "libcoregrind-amd64-linux.a"), str(libs / "libvex-amd64-linux.a"),
                "-lgcc"]
    recipe = [compile_cmd, link_cmd, [str(tools)]]
    stamp = BUILD / "valgrind.stamp"
    if _up_to_date(tool, stamp, recipe, VALGRIND_SOURCES) and \
            (libdir / "vgpreload_core-amd64-linux.so").exists():
        return libdir
    with tempfile.TemporaryDirectory(dir=BUILD) as tmp:
        _run_build([*compile_cmd[:-4], "-c", str(PINTOOLS / "vg_pinbench.c"), "-o", f"{tmp}/vg.o"],
                   "the Valgrind tool")
        _run_build([link_cmd[0], "-o", f"{tmp}/{tool.name}", f"{tmp}/vg.o", *link_cmd[4:]],
                   "the Valgrind tool")
        libdir.mkdir(parents=True, exist_ok=True)
        for stock in tools.iterdir():
            link = libdir / stock.name
            if stock.name.startswith("pinbench-") or link.exists() or link.is_symlink():
                continue
            link.symlink_to(stock)
        os.replace(f"{tmp}/{tool.name}", tool)
    stamp.write_text(json.dumps(recipe))
    return libdir


def _pin_root() -> Path:
    root = os.environ.get("PIN_ROOT", "")
    if not root:
        raise TraceError("the pin tracer needs PIN_ROOT set to an Intel Pin kit "
                         "(Pin is not installed or downloaded by pinbench)")
    root_path = Path(root)
    if not (root_path / "source" / "tools" / "Config" / "makefile.config").is_file() or \
            not (root_path / "pin").exists():
        raise TraceError(f"PIN_ROOT={root} is not a Pin kit "
                         "(no pin and source/tools/Config/makefile.config)")
    return root_path


def _build_pin() -> Path:
    root = _pin_root()
    if shutil.which("make") is None:
        raise TraceError("make not found (install the Debian package make)")
    objdir = BUILD / "pin"
    tool = objdir / "pinbench.so"
    recipe = [["make", "-C", str(PINTOOLS / "pin"), f"PIN_ROOT={root}", f"OBJDIR={objdir}/",
               str(tool)]]
    stamp = BUILD / "pin.stamp"
    if _up_to_date(tool, stamp, recipe, PIN_SOURCES):
        return tool
    objdir.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        tool.unlink()  # make does not know pb_core.h
    with contextlib.suppress(FileNotFoundError):
        (objdir / "pinbench.o").unlink()
    _run_build(recipe[0], "the Pin tool")
    if not tool.is_file():
        raise TraceError(f"building the Pin tool did not produce {tool}")
    stamp.write_text(json.dumps(recipe))
    return tool


def build_tracer(name: str) -> Path:
    """Build tracer ``name`` if missing or older than its sources; return what it runs with.

    ``tsan``: the runtime archive; ``valgrind``: the VALGRIND_LIB directory holding the
    tool; ``pin``: the Pin tool (needs PIN_ROOT). Raises TraceError (one line).
    """
    builders = {"tsan": _build_tsan, "valgrind": _build_valgrind, "pin": _build_pin}
    if name not in builders:
        raise TraceError(f"unknown tracer {name!r} (choose from {', '.join(TRACERS)})")
    with _build_lock():
        return builders[name]()


def traced_build_flags() -> tuple[str, str]:
    """(compile flags, link flags) of a program traced by the tsan runtime.

    Compile with the first (``cc $CFLAGS -c x.c``), link with the second
    (``cc x.o $LDFLAGS``): never ``-fsanitize=thread`` on the link line (it would pull in
    libtsan), never ``-fno-sanitize=thread`` on the compile line (it would switch the
    instrumentation off). The link flags name the runtime by absolute path.
    """
    lib = build_tracer("tsan")
    wraps = ",".join(f"--wrap={name}" for name in TSAN_WRAPPED)
    return TSAN_CFLAGS, f"-fopenmp {lib} -latomic -Wl,{wraps}"


# ------------------------------------------------------------------------------ tracing

def _program_path(argv0: str) -> Path:
    """The program as an absolute path (./x stays runnable whatever the working directory)."""
    found = argv0 if "/" in argv0 else shutil.which(argv0)
    path = Path(os.path.abspath(found)) if found else None
    if path is None or not path.is_file():
        raise TraceError(f"program not found: {argv0}")
    if not os.access(path, os.X_OK):
        raise TraceError(f"program is not executable: {argv0}")
    return path


def _linked_with_runtime(path: Path) -> bool | None:
    """True/False for an ELF file (does it hold the tsan runtime's marker?), None otherwise."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if not data.startswith(b"\x7fELF"):
        return None
    return b"pinbench-tsan-runtime" in data


def sidecar_path(out_csv: Path) -> Path:
    """The JSON sidecar of a matrix file: same path, extension ``.json``."""
    return Path(out_csv).with_suffix(".json")


def trace(program_argv: list[str], threads: int, out_csv: Path | str, tracer: str = "tsan",
          weight: str = "common", line_bytes: int = 64, *, env: dict[str, str] | None = None,
          stdout=None, stderr=None, timeout: float | None = None,
          raw: Path | str | None = None, tracer_options: list[str] | None = None) -> dict:
    """Run ``program_argv`` with OMP_NUM_THREADS=threads under ``tracer``; return the sidecar.

    Writes ``out_csv`` (the N x N matrix) and its sidecar (``out_csv`` with ``.json``).
    For ``tsan`` the program must have been built with ``traced_build_flags()``.
    ``env`` replaces os.environ as the base environment; ``stdout``/``stderr`` go to
    subprocess.run (default: inherited); ``raw`` also writes "line,thread,count" records;
    ``tracer_options`` go to valgrind or pin before the tool's own options.
    Raises TraceError (one line) if the tracer is missing, the program fails or no
    matrix was written.
    """
    if tracer not in TRACERS:
        raise TraceError(f"unknown tracer {tracer!r} (choose from {', '.join(TRACERS)})")
    if weight not in WEIGHTS:
        raise TraceError(f"unknown weight {weight!r} (choose from {', '.join(WEIGHTS)})")
    if line_bytes not in LINE_BYTES:
        raise TraceError(f"line size {line_bytes} is not a power of two from 8 to 4096")
    if not isinstance(threads, int) or not 1 <= threads <= 4096:
        raise TraceError(f"thread count {threads} is not an integer from 1 to 4096")
    if not program_argv:
        raise TraceError("no program to trace")
    program = _program_path(program_argv[0])
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
    if raw is not None:
        options["PINBENCH_TRACE_RAW"] = str(Path(raw).resolve())
    else:
        run_env.pop("PINBENCH_TRACE_RAW", None)
    run_env.update(options)
    run_env["OMP_NUM_THREADS"] = str(threads)
    if tracer == "tsan":
        build_tracer("tsan")  # not needed to run, but keeps the error messages in one place
        if _linked_with_runtime(program) is False:
            raise TraceError(f"{program_argv[0]} is not linked with the pinbench tsan runtime "
                             "(build it with the flags of: python -m affinity.trace --print-flags)")
        cmd = [str(program), *program_argv[1:]]
    elif tracer == "valgrind":
        libdir = build_tracer("valgrind")
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
        tool = build_tracer("pin")
        cmd = [str(_pin_root() / "pin"), *(tracer_options or []), "-t", str(tool),
               "-o", str(out_csv), "-json", str(out_json), "-weight", weight,
               "-line", str(line_bytes), "-threads", str(threads),
               *(["-raw", options["PINBENCH_TRACE_RAW"]] if raw is not None else []),
               "--", str(program), *program_argv[1:]]

    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, env=run_env, stdout=stdout, stderr=stderr, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise TraceError(f"{program_argv[0]} did not finish within {timeout} s "
                         f"under the {tracer} tracer") from None
    except OSError as exc:
        raise TraceError(f"cannot run {cmd[0]}: {exc.strerror}") from None
    wall = time.monotonic() - start
    if proc.returncode != 0:
        how = (f"was killed by signal {-proc.returncode}" if proc.returncode < 0
               else f"exited with status {proc.returncode}")
        raise TraceError(f"{program_argv[0]} {how} under the {tracer} tracer")
    if not out_csv.is_file() or not out_json.is_file():
        hint = (" (is it built with the flags of --print-flags?)" if tracer == "tsan" else "")
        raise TraceError(f"{program_argv[0]} ran but no matrix was written to {out_csv}{hint}")
    try:
        matrix = read_matrix(out_csv)
        sidecar = json.loads(out_json.read_text())
    except (MatrixError, ValueError) as exc:
        raise TraceError(f"unusable tracer output: {exc}") from None
    set_here = [*options, "OMP_NUM_THREADS", "VALGRIND_LIB", "OMP_WAIT_POLICY"]
    sidecar.update({"threads_requested": threads, "program": list(program_argv),
                    "command": cmd, "wall_s": round(wall, 6),
                    "environment": {k: run_env[k] for k in set_here if k in run_env}})
    if len(matrix) != sidecar.get("threads"):
        raise TraceError(f"{out_csv}: {len(matrix)} rows but the sidecar says "
                         f"{sidecar.get('threads')} threads")
    out_json.write_text(json.dumps(sidecar, indent=2) + "\n")
    return sidecar


# ------------------------------------------------------------------------------ command line

class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit status 2 (main)
        raise _UsageError(message)


def main(argv: list[str] | None = None) -> int:
    """Trace a program (or print the flags of a traced build)."""
    parser = _Parser(prog="python -m affinity.trace",
                     description="Write the cache-line sharing matrix of a program's threads.")
    parser.add_argument("--print-flags", action="store_true",
                        help="print CFLAGS=... and LDFLAGS=... of a tsan-traced build")
    parser.add_argument("--tracer", choices=TRACERS, default="tsan")
    parser.add_argument("--threads", type=int, help="OpenMP threads (OMP_NUM_THREADS)")
    parser.add_argument("--out", type=Path, help="matrix CSV; the sidecar is the same path .json")
    parser.add_argument("--weight", choices=WEIGHTS, default="common")
    parser.add_argument("--line-bytes", type=int, default=64)
    parser.add_argument("program", nargs=argparse.REMAINDER, help="-- PROGRAM ARGS")
    try:
        args = parser.parse_args(argv)
        program = args.program[1:] if args.program[:1] == ["--"] else args.program
        if args.print_flags:
            if program or args.out or args.threads is not None:
                raise _UsageError("--print-flags takes no other arguments")
            cflags, ldflags = traced_build_flags()
            print(f"CFLAGS={cflags}")
            print(f"LDFLAGS={ldflags}")
            return 0
        if args.threads is None or args.out is None or not program:
            raise _UsageError("give --threads N, --out FILE.csv and -- PROGRAM [ARGS]")
        if args.threads < 1:
            raise _UsageError(f"--threads must be at least 1, not {args.threads}")
        if args.line_bytes not in LINE_BYTES:
            raise _UsageError(f"--line-bytes must be a power of two from 8 to 4096, "
                              f"not {args.line_bytes}")
        side = trace(program, args.threads, args.out, args.tracer, args.weight, args.line_bytes)
    except _UsageError as exc:
        print(f"python -m affinity.trace: error: {exc} (see --help)", file=sys.stderr)
        return 2
    except TraceError as exc:
        print(f"python -m affinity.trace: error: {exc}", file=sys.stderr)
        return 2
    print(f"trace: {args.out}: {side['threads']} threads, {side['weight']} weight, "
          f"{side['accesses']} accesses, {side['shared_lines']} of {side['distinct_lines']} "
          f"lines shared, {side['wall_s']:.2f} s under {side['tracer']}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
