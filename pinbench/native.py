"""pinbench's C helpers: what each is built from, how, and where the built ones live.

- ``launcher`` (measure/launcher.c): the process that starts and times every run
  (:mod:`pinbench.measure.launcher`);
- ``partition`` (graph/partition.c) and ``refinement`` (graph/refinement.c): the GP
  partition's swap refinement and the placement refinement, shared libraries that ctypes
  loads;
- ``tsan`` (trace/pintools/tsan_rt.c, tsan_wrap.c): the tsan tracer's runtime, an archive
  that a traced program links;
- ``valgrind`` (trace/pintools/vg_pinbench.c): the Valgrind tracer's tool, in a
  VALGRIND_LIB folder beside links to the stock tools;
- ``ompt`` (trace/pintools/ompt/pinbench_ompt.c): the explained runs' OMPT tool for LLVM's
  libomp, beside a folder whose ``libgomp.so.1`` is libomp;
- ``pin`` (trace/pintools/pin/): the Intel Pin tracer's tool;
- ``rebind`` (measure/rebind.c): the shim that re-binds threads per parallel region
  (:mod:`pinbench.measure.rebind`), preloaded in the runs of per-region placements; setup
  also measures the cost of a re-binding with it (:func:`pinbench.measure.rebind_cost.calibrate`).

**Where.** Never in the package's folders, which may be read-only: in
``<sys.prefix>/lib/pinbench/native/`` (the virtual environment pinbench is installed in), or
in the folder that ``PINBENCH_NATIVE_DIR`` names (for a read-only prefix). Each helper is
built in a folder of its own, ``<name>-<key>``, the key being a hash of its sources and
of its build commands; ``manifest.json`` beside them records, per helper, the digest of
its sources, the commands that built it and the path to use, or why it was not built.
The nodes of a cluster use the helpers of the virtual environment they share.

**When.** At install time: ``pinbench setup`` (:func:`setup`), which ``scripts/setup.sh``
runs after installing pinbench, builds every helper this machine can build and says in one
line each why it could not build the others (no Valgrind headers, no libomp, no PIN_ROOT).
A helper whose folder for the same key exists is not built again, so a second setup builds
nothing; a lock makes concurrent setups build once. At run time :func:`built` gives a
helper's path, or raises :class:`NotBuilt`, one line naming ``pinbench setup``, when it is
missing or stale (its sources changed since it was built, as they may in an editable
install). Nothing is compiled on first use.

**A non-editable install** (``pip install .``) installs no helper: the first command that
needs one says ``pinbench place: error: the C helpers are not built: run pinbench setup``
(:mod:`pinbench.cli`). Building them
in a setuptools hook into the wheel was the other choice, and it was set aside: the helpers
belong to the machine they run on, a wheel does not (pip caches it and may install it on
another machine): the Valgrind tool is linked with this machine's static Valgrind
libraries and used beside links to its stock tools, the OMPT folder points at this
machine's libomp, the Pin tool needs a kit, and each absolute path would be the building
machine's. An editable install needs the run-time check for stale helpers anyway.

A recipe's flags are part of what was measured with its helper (the launcher's overhead:
perf/launcher_overhead.py): change them only on purpose.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pinbench.errors import PinbenchError

#: The package's folder: the helpers' sources are read from it, nothing is written to it.
PACKAGE = Path(__file__).resolve().parent
PINTOOLS = PACKAGE / "trace" / "pintools"
#: The variable naming the folder of the built helpers, instead of the default.
NATIVE_DIR_VARIABLE = "PINBENCH_NATIVE_DIR"
MANIFEST = "manifest.json"
#: What a command that needs a helper says when none was ever built here.
NONE_BUILT = "the C helpers are not built: run pinbench setup"

#: How the launcher is built (a program) and the placement's hot loops (shared libraries).
LAUNCHER_FLAGS = ("-O2", "-std=gnu11", "-Wall", "-Wextra")
LIBRARY_FLAGS = ("-O2", "-std=gnu11", "-Wall", "-Wextra", "-shared", "-fPIC")
#: Where Debian (and other layouts) keep LLVM's OpenMP runtime, libomp.so.5.
LIBOMP_CANDIDATES = ("/usr/lib/x86_64-linux-gnu/libomp.so.5", "/usr/lib/llvm-14/lib/libomp.so.5",
                     "/usr/lib/aarch64-linux-gnu/libomp.so.5", "/usr/local/lib/libomp.so.5",
                     "/usr/lib/x86_64-linux-gnu/libomp.so", "/usr/local/lib/libomp.so")
#: Where Debian (and other layouts) keep Valgrind's tool headers, static libraries, tools.
VALGRIND_INCLUDE_DIRS = ("/usr/include/valgrind", "/usr/local/include/valgrind")
VALGRIND_LIB_DIRS = ("/usr/lib/x86_64-linux-gnu/valgrind", "/usr/libexec/valgrind",
                     "/usr/lib/valgrind", "/usr/local/lib/valgrind",
                     "/usr/local/libexec/valgrind")
VALGRIND_DEFINES = ("-DVGA_amd64=1", "-DVGO_linux=1", "-DVGP_amd64_linux=1",
                    "-DVGPV_amd64_linux_vanilla=1")
#: A helper's build folder: ``<name>-<key>`` (a temporary one starts with a dot).
_BUILD_FOLDER = re.compile(r"[a-z]+-[0-9a-f]{16}")


class NotBuilt(PinbenchError, RuntimeError):
    """A helper is missing or stale at run time; the one-line message names ``pinbench setup``."""


class Unavailable(PinbenchError, RuntimeError):
    """This machine lacks what a helper is built with (a compiler, headers, a kit); one line."""


class BuildFailed(PinbenchError, RuntimeError):
    """A helper's build command failed; one line (the compiler's first error)."""


@dataclass(frozen=True)
class Recipe:
    """How a helper is built: ``commands`` run in order in a fresh folder (their working
    directory; ``{out}`` stands for its path), then ``links`` (name -> target) made in it."""

    commands: tuple[tuple[str, ...], ...]
    links: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Helper:
    """One C helper: its ``sources`` (relative to the package), the ``output`` that is used
    (relative to its build folder), its ``recipe`` (raising :class:`Unavailable` where it
    cannot be built) and whether pinbench works without it (``optional``)."""

    name: str
    what: str
    sources: tuple[str, ...]
    output: str
    recipe: Callable[[], Recipe]
    optional: bool = False

    def digest(self) -> str:
        """The SHA-256 of the sources' names and contents."""
        digest = hashlib.sha256()
        for source in self.sources:
            digest.update(source.encode() + b"\0" + (PACKAGE / source).read_bytes() + b"\0")
        return digest.hexdigest()


def native_dir() -> Path:
    """The folder of the built helpers: ``PINBENCH_NATIVE_DIR``, else
    ``<sys.prefix>/lib/pinbench/native``."""
    named = os.environ.get(NATIVE_DIR_VARIABLE)
    return Path(named) if named else Path(sys.prefix) / "lib" / "pinbench" / "native"


def _which(*names: str) -> str | None:
    """The path of the first of ``names`` found on PATH."""
    return next((path for path in map(shutil.which, names) if path), None)


def c_compiler() -> str:
    """The C compiler of the launcher and the libraries: ``PINBENCH_LAUNCHER_CC`` if set,
    else gcc, cc or clang; :class:`Unavailable` when there is none."""
    found = _which(*filter(None, (os.environ.get("PINBENCH_LAUNCHER_CC"), "gcc", "cc", "clang")))
    if found is None:
        raise Unavailable("no C compiler found (install the Debian package gcc, "
                          "as scripts/setup.sh does)")
    return found


def _launcher() -> Recipe:
    return Recipe(((c_compiler(), *LAUNCHER_FLAGS, "-o", "pinbench-launcher",
                    str(PACKAGE / "measure" / "launcher.c")),))


def _library(stem: str) -> Callable[[], Recipe]:
    """The recipe of ``graph/<stem>.c`` as ``lib<stem>.so``."""
    def recipe() -> Recipe:
        return Recipe(((c_compiler(), *LIBRARY_FLAGS, "-o", f"lib{stem}.so",
                        str(PACKAGE / "graph" / f"{stem}.c")),))
    return recipe


def _rebind() -> Recipe:
    return Recipe(((c_compiler(), *LIBRARY_FLAGS, "-fvisibility=hidden", "-o",
                    "libpinbench_rebind.so", str(PACKAGE / "measure" / "rebind.c"), "-ldl",
                    "-pthread"),))


def _tsan() -> Recipe:
    cc = _which("gcc", "cc", "clang")
    if cc is None:
        raise Unavailable("no C compiler found (install the Debian package gcc)")
    if shutil.which("ar") is None:
        raise Unavailable("ar not found (install the Debian package binutils)")
    flags = ["-O2", "-fPIC", "-fvisibility=hidden", "-std=gnu11", "-Wall", "-Wextra"]
    # the runtime must not call memcpy/memset itself (they are wrapped at link time)
    flags += ["-fno-builtin"] if "clang" in Path(cc).name else \
        ["-fno-tree-loop-distribute-patterns"]
    compiles = tuple((cc, *flags, "-c", str(PINTOOLS / f"{src}.c"), "-o", f"{src}.o")
                     for src in ("tsan_rt", "tsan_wrap"))
    return Recipe((*compiles, ("ar", "rcs", "libpinbench_tsan.a", "tsan_rt.o", "tsan_wrap.o")))


def _valgrind() -> Recipe:
    """The tool, linked with Valgrind's static core libraries, beside links to the stock
    tools: the folder is the VALGRIND_LIB of a traced run."""
    if platform.machine() not in ("x86_64", "amd64"):
        raise Unavailable(f"the Valgrind tool is built for amd64 only, not {platform.machine()}")
    if shutil.which("valgrind") is None:
        raise Unavailable("valgrind not found (install the Debian package valgrind)")
    inc = next((d for d in VALGRIND_INCLUDE_DIRS if os.path.isfile(f"{d}/pub_tool_basics.h")), None)
    libs = next((Path(d) for d in VALGRIND_LIB_DIRS
                 if os.path.isfile(f"{d}/libcoregrind-amd64-linux.a")), None)
    tools = next((Path(d) for d in VALGRIND_LIB_DIRS
                  if os.path.isfile(f"{d}/memcheck-amd64-linux")), None)
    if inc is None or libs is None or tools is None:
        raise Unavailable("Valgrind's tool headers (pub_tool_basics.h) and static libraries "
                          "(libcoregrind-amd64-linux.a) are missing (Debian package valgrind)")
    if shutil.which("gcc") is None:
        raise Unavailable("gcc not found (install the Debian package gcc)")
    tool = "pinbench-amd64-linux"
    compile_ = ("gcc", "-O2", "-std=gnu11", "-Wall", "-Wno-unused-parameter", f"-I{inc}",
                f"-I{PINTOOLS}", *VALGRIND_DEFINES, "-fno-builtin", "-fno-stack-protector",
                "-fno-pie", "-fno-strict-aliasing", "-c", str(PINTOOLS / "vg_pinbench.c"),
                "-o", "vg.o")
    link = ("gcc", "-o", tool, "vg.o", "-static", "-nodefaultlibs", "-nostartfiles",
            "-u", "_start", "-Wl,-Ttext-segment=0x58000000", "-no-pie",
            str(libs / "libcoregrind-amd64-linux.a"), str(libs / "libvex-amd64-linux.a"), "-lgcc")
    stock = tuple(sorted((path.name, str(path)) for path in tools.iterdir()
                         if not path.name.startswith("pinbench-")))
    return Recipe((compile_, link), stock)


def find_libomp() -> Path:
    """LLVM's OpenMP runtime (libomp, which implements OMPT and libgomp's ABI), resolved:
    ``clang -print-file-name=libomp.so.5`` first, then the usual places."""
    candidates: list[str] = []
    if shutil.which("clang"):
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            found = subprocess.run(["clang", "-print-file-name=libomp.so.5"], capture_output=True,
                                   text=True, timeout=30).stdout.strip()
            if os.path.isabs(found):
                candidates.append(found)
    for candidate in [*candidates, *LIBOMP_CANDIDATES]:
        if os.path.isfile(candidate):
            return Path(candidate).resolve()
    raise Unavailable("LLVM's OpenMP runtime libomp.so.5 not found (install the Debian package "
                      "libomp-dev, as scripts/setup.sh does)")


def _ompt() -> Recipe:
    """The OMPT tool, built with clang (which finds ``omp-tools.h`` in its resource folder),
    and ``gomp-on-libomp/libgomp.so.1`` -> libomp: on ``LD_LIBRARY_PATH`` that folder runs a
    gcc-built program on libomp (which implements libgomp's GOMP_* and omp_* entry points)."""
    cc = shutil.which("clang")
    if cc is None:
        raise Unavailable("the OMPT tool is built with clang, not found (install the Debian "
                          "packages clang and libomp-dev)")
    return Recipe(((cc, "-O2", "-fPIC", "-shared", "-std=gnu11", "-Wall", "-Wextra",
                    "-fvisibility=hidden", "-o", "libpinbench_ompt.so",
                    str(PINTOOLS / "ompt" / "pinbench_ompt.c")),),
                  (("gomp-on-libomp/libgomp.so.1", str(find_libomp())),))


def pin_kit() -> Path:
    """The Intel Pin kit that ``PIN_ROOT`` names; :class:`Unavailable` when none (Pin is
    never installed or downloaded by pinbench)."""
    root = os.environ.get("PIN_ROOT", "")
    if not root:
        raise Unavailable("the pin tracer needs PIN_ROOT set to an Intel Pin kit "
                          "(Pin is not installed or downloaded by pinbench)")
    kit = Path(root)
    if not (kit / "source" / "tools" / "Config" / "makefile.config").is_file() or \
            not (kit / "pin").exists():
        raise Unavailable(f"PIN_ROOT={root} is not a Pin kit "
                          "(no pin and source/tools/Config/makefile.config)")
    return kit


def _pin() -> Recipe:
    kit = pin_kit()
    if shutil.which("make") is None:
        raise Unavailable("make not found (install the Debian package make)")
    return Recipe((("make", "-C", str(PINTOOLS / "pin"), f"PIN_ROOT={kit}", "OBJDIR={out}/",
                    "{out}/pinbench.so"),))


HELPERS = {helper.name: helper for helper in (
    Helper("launcher", "the launcher", ("measure/launcher.c",), "pinbench-launcher", _launcher),
    Helper("partition", "the partition refinement", ("graph/partition.c",), "libpartition.so",
           _library("partition")),
    Helper("refinement", "the placement refinement", ("graph/refinement.c",),
           "librefinement.so", _library("refinement")),
    Helper("tsan", "the tsan runtime",
           ("trace/pintools/tsan_rt.c", "trace/pintools/tsan_wrap.c", "trace/pintools/pb_core.h"),
           "libpinbench_tsan.a", _tsan),
    Helper("valgrind", "the Valgrind tool",
           ("trace/pintools/vg_pinbench.c", "trace/pintools/pb_core.h"), ".", _valgrind,
           optional=True),
    Helper("ompt", "the OMPT tool", ("trace/pintools/ompt/pinbench_ompt.c",),
           "libpinbench_ompt.so", _ompt, optional=True),
    Helper("pin", "the Pin tool", ("trace/pintools/pin/pinbench.cpp", "trace/pintools/pin/makefile",
                                   "trace/pintools/pin/makefile.rules", "trace/pintools/pb_core.h"),
           "pinbench.so", _pin, optional=True),
    Helper("rebind", "the re-binding shim", ("measure/rebind.c",), "libpinbench_rebind.so",
           _rebind, optional=True),
)}


def read_manifest(folder: Path) -> dict:
    """The manifest of the helpers built in ``folder`` (empty when there is none)."""
    try:
        return json.loads((folder / MANIFEST).read_text())
    except FileNotFoundError:
        return {}


def built(name: str) -> Path:
    """The built helper ``name`` (its file, or folder for ``valgrind``).

    Raises :class:`NotBuilt` (one line naming ``pinbench setup``) when no helper was built
    here, this one was not (and why), or its sources changed since it was built.
    """
    helper, folder = HELPERS[name], native_dir()
    manifest = read_manifest(folder)
    if not manifest:
        raise NotBuilt(NONE_BUILT)
    entry = manifest.get(name, {})
    if "not_built" in entry:
        raise NotBuilt(f"{helper.what} is not built: {entry['not_built']}; then run pinbench setup")
    path = folder / entry["path"] if "path" in entry else None
    if path is None or not path.exists():
        raise NotBuilt(f"{helper.what} is missing from {folder}: run pinbench setup")
    if entry["sources"] != helper.digest():
        raise NotBuilt(f"{helper.what} is out of date (its sources changed since it was built): "
                       "run pinbench setup")
    return path


def _run(command: list[str], what: str, cwd: Path) -> None:
    """One build command; :class:`BuildFailed` with its first error line."""
    try:
        proc = subprocess.run(command, capture_output=True, text=True, cwd=cwd)
    except OSError as exc:
        raise BuildFailed(f"building {what}: cannot run {command[0]}: {exc.strerror}") from None
    if proc.returncode != 0:
        lines = [line for line in (proc.stderr + proc.stdout).splitlines() if line.strip()]
        first = next((line for line in lines if "error" in line.lower()), lines[0] if lines else "")
        raise BuildFailed(f"building {what} failed ({Path(command[0]).name}): {first.strip()}")


def _build(helper: Helper, recipe: Recipe, target: Path) -> None:
    """``recipe`` run in a temporary folder beside ``target``, renamed ``target`` when done."""
    work = Path(tempfile.mkdtemp(prefix=f".{helper.name}-", dir=target.parent))
    try:
        work.chmod(0o755)
        for command in recipe.commands:
            _run([part.replace("{out}", str(work)) for part in command], helper.what, work)
        for name, to in recipe.links:
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            (work / name).symlink_to(to)
        for obj in work.glob("*.o"):  # the objects the output was made of
            obj.unlink()
        if not (work / helper.output).exists():
            raise BuildFailed(f"building {helper.what} did not make {helper.output}")
        os.rename(work, target)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def _set_up(helper: Helper, folder: Path) -> tuple[dict, bool]:
    """``helper`` built in ``folder`` unless its folder for the same sources and commands is
    there: its manifest entry, and whether it was built now."""
    recipe, sources = helper.recipe(), helper.digest()
    key = hashlib.sha256(json.dumps([sources, recipe.commands, recipe.links]).encode())
    target = folder / f"{helper.name}-{key.hexdigest()[:16]}"
    now = not target.is_dir()
    if now:
        _build(helper, recipe, target)
    return {"sources": sources, "path": f"{target.name}/{helper.output}",
            "commands": list(map(shlex.join, recipe.commands)), "links": dict(recipe.links)}, now


def setup(say: Callable[[str], None] = print) -> int:
    """Build every helper this machine can build into :func:`native_dir`, the ones whose
    folder of the same key is there excepted; write the manifest; remove the folders of
    older builds (processes running them go on). One line says what was built or up to
    date, one line each what was not built and why. Returns 0, or 1 when a helper failed
    to build or a helper pinbench needs (not ``optional``) cannot be built here."""
    folder = native_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        lock = open(folder / ".lock", "a")
    except OSError as exc:
        say(f"pinbench setup: cannot write in {folder}: {exc.strerror} "
            f"(set {NATIVE_DIR_VARIABLE} to a writable folder)")
        return 1
    manifest, done, up_to_date, status = {}, [], [], 0
    with lock:  # concurrent setups (parallel installs, test workers) build once
        fcntl.flock(lock, fcntl.LOCK_EX)
        for helper in HELPERS.values():
            try:
                manifest[helper.name], now = _set_up(helper, folder)
            except (Unavailable, BuildFailed) as exc:
                manifest[helper.name] = {"not_built": str(exc)}
                say(f"pinbench setup: not built: {helper.name} ({helper.what}): {exc}")
                if isinstance(exc, BuildFailed) or not helper.optional:
                    status = 1
                continue
            (done if now else up_to_date).append(helper.name)
        if read_manifest(folder) != manifest:
            written = folder / f".{MANIFEST}.{os.getpid()}"
            written.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
            os.replace(written, folder / MANIFEST)
        kept = {entry["path"].split("/")[0] for entry in manifest.values() if "path" in entry}
        for old in folder.iterdir():
            if old.is_dir() and old.name not in kept and (
                    _BUILD_FOLDER.fullmatch(old.name) or old.name.startswith(".")):
                shutil.rmtree(old, ignore_errors=True)
        if "path" in manifest["rebind"]:
            from pinbench.measure.rebind_cost import calibrate  # only when the shim is built

            calibrate(folder / manifest["rebind"]["path"], folder, say)
    said = [f"built {', '.join(done)}"] if done else []
    said += [f"up to date: {', '.join(up_to_date)}"] if up_to_date else []
    if said:
        say(f"pinbench setup: {'; '.join(said)} (in {folder})")
    return status
