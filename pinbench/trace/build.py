"""Building the tracers on demand: the tsan runtime, the Valgrind tool, the Pin tool.

- ``tsan``: a static archive of our small runtime (pintools/tsan_rt.c, tsan_wrap.c) that
  a program compiled with ``-fsanitize=thread`` links instead of libtsan;
  :func:`traced_build_flags` gives the compile and the link flags, kept apart.
- ``valgrind``: a Valgrind tool (pintools/vg_pinbench.c) built out of tree against
  Debian's valgrind package, in a VALGRIND_LIB directory beside links to the stock tools.
- ``pin``: an Intel Pin tool (pintools/pin/), built with the kit's makefiles only when
  ``PIN_ROOT`` names a kit. Pin is never downloaded.

Beside the tracers, :func:`build_ompt_tool` builds the OMPT tool of the explained runs
(pintools/ompt/pinbench_ompt.c, a shared library for LLVM's libomp) and the folder that
redirects a gcc-built program's ``libgomp.so.1`` to libomp.

Each is rebuilt when missing, older than its sources or made by other commands, under
a lock shared by concurrent processes; outputs go to ``pintools/build/``.
"""
from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import platform
import shutil
import subprocess
import tempfile
from pathlib import Path

PINTOOLS = Path(__file__).resolve().parent / "pintools"
BUILD = PINTOOLS / "build"
TRACERS = ("tsan", "valgrind", "pin")
#: the compile flags of a traced build (the link flags come from traced_build_flags())
TSAN_CFLAGS = "-fsanitize=thread -fopenmp"
#: the program's memcpy/memmove/memset calls go through the runtime's wrappers
TSAN_WRAPPED = ("memcpy", "memmove", "memset", "__memcpy_chk", "__memmove_chk", "__memset_chk")

TSAN_SOURCES = ("tsan_rt.c", "tsan_wrap.c", "pb_core.h")
VALGRIND_SOURCES = ("vg_pinbench.c", "pb_core.h")
PIN_SOURCES = ("pin/pinbench.cpp", "pin/makefile", "pin/makefile.rules", "pb_core.h")
OMPT_SOURCES = ("ompt/pinbench_ompt.c",)
#: where Debian (and other layouts) keep LLVM's OpenMP runtime, libomp.so.5
LIBOMP_CANDIDATES = ("/usr/lib/x86_64-linux-gnu/libomp.so.5", "/usr/lib/llvm-14/lib/libomp.so.5",
                     "/usr/lib/aarch64-linux-gnu/libomp.so.5", "/usr/local/lib/libomp.so.5",
                     "/usr/lib/x86_64-linux-gnu/libomp.so", "/usr/local/lib/libomp.so")

#: where Debian (and other layouts) keep Valgrind's tool headers, static libraries, tools
VALGRIND_INCLUDE_DIRS = ("/usr/include/valgrind", "/usr/local/include/valgrind")
VALGRIND_LIB_DIRS = ("/usr/lib/x86_64-linux-gnu/valgrind", "/usr/libexec/valgrind",
                     "/usr/lib/valgrind", "/usr/local/lib/valgrind",
                     "/usr/local/libexec/valgrind")
VALGRIND_DEFINES = ("-DVGA_amd64=1", "-DVGO_linux=1", "-DVGP_amd64_linux=1",
                    "-DVGPV_amd64_linux_vanilla=1")


class TraceError(RuntimeError):
    """A tracer cannot be built or run, or the traced program failed; one-line message."""


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


def pin_root() -> Path:
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
    root = pin_root()
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


@functools.cache
def find_libomp() -> Path:
    """LLVM's OpenMP runtime (libomp, which implements OMPT and libgomp's ABI), resolved.

    Asks ``clang -print-file-name=libomp.so.5`` first, then the usual places; once per
    process (a campaign asks before each measurement job). Raises TraceError (one line)
    when there is none.
    """
    candidates: list[str] = []
    if shutil.which("clang"):
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            found = subprocess.run(["clang", "-print-file-name=libomp.so.5"], capture_output=True,
                                   text=True, timeout=30).stdout.strip()
            if os.path.isabs(found):
                candidates.append(found)
    candidates += LIBOMP_CANDIDATES
    for candidate in candidates:
        if os.path.isfile(candidate):
            return Path(candidate).resolve()
    raise TraceError("LLVM's OpenMP runtime libomp.so.5 not found (install the Debian package "
                     "libomp-dev, as scripts/setup.sh does)")


def _build_ompt() -> Path:
    """The OMPT tool, built with clang (which finds ``omp-tools.h`` in its resource folder)."""
    cc = shutil.which("clang")
    if cc is None:
        raise TraceError("the OMPT tool is built with clang, not found (install the Debian "
                         "packages clang and libomp-dev)")
    out = BUILD / "ompt" / "libpinbench_ompt.so"
    cmd = [cc, "-O2", "-fPIC", "-shared", "-std=gnu11", "-Wall", "-Wextra",
           "-fvisibility=hidden", "-o", out.name, "pinbench_ompt.c"]
    stamp = BUILD / "ompt.stamp"
    if _up_to_date(out, stamp, [cmd], OMPT_SOURCES):
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=BUILD) as tmp:
        _run_build([*cmd[:-3], "-o", f"{tmp}/{out.name}", str(PINTOOLS / "ompt" / "pinbench_ompt.c")],
                   "the OMPT tool")
        os.replace(f"{tmp}/{out.name}", out)
    stamp.write_text(json.dumps([cmd]))
    return out


def _gomp_redirect(libomp: Path) -> Path:
    """A folder holding ``libgomp.so.1`` -> libomp: on ``LD_LIBRARY_PATH`` it runs a gcc-built
    program on libomp (which implements libgomp's GOMP_* and omp_* entry points)."""
    folder = BUILD / "ompt" / "gomp-on-libomp"
    link = folder / "libgomp.so.1"
    folder.mkdir(parents=True, exist_ok=True)
    if not (link.is_symlink() and Path(os.readlink(link)) == libomp):
        tmp = folder / f".libgomp.so.1.{os.getpid()}"
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        tmp.symlink_to(libomp)
        os.replace(tmp, link)
    return folder


def build_ompt_tool() -> dict[str, str]:
    """Build the OMPT tool if missing or older than its source; return what an explained run
    needs: ``tool`` (the shared library, for ``OMP_TOOL_LIBRARIES``), ``libomp`` (the runtime)
    and ``gomp_dir`` (a folder whose ``libgomp.so.1`` is libomp, for ``LD_LIBRARY_PATH``).
    Raises TraceError (one line)."""
    with _build_lock():
        libomp = find_libomp()
        return {"tool": str(_build_ompt()), "libomp": str(libomp),
                "gomp_dir": str(_gomp_redirect(libomp))}


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
