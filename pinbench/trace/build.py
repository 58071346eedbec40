"""Building for tracing: the flags of a traced build, and the tracers as ``pinbench setup``
built them (:mod:`pinbench.native`).

- ``tsan``: a static archive of our small runtime (pintools/tsan_rt.c, tsan_wrap.c) that
  a program compiled with ``-fsanitize=thread`` links instead of libtsan;
  :func:`traced_build_flags` gives the compile and the link flags, kept apart, and
  :func:`untraceable` says what a binary built otherwise holds instead.
- ``valgrind``: a Valgrind tool (pintools/vg_pinbench.c) built out of tree against
  Debian's valgrind package, in a VALGRIND_LIB directory beside links to the stock tools.
- ``pin``: an Intel Pin tool (pintools/pin/), built with the kit's makefiles only when
  ``PIN_ROOT`` names a kit. Pin is never downloaded.

Beside the tracers, :func:`ompt_tool` gives the OMPT tool of the explained runs
(pintools/ompt/pinbench_ompt.c, a shared library for LLVM's libomp) and the folder that
redirects a gcc-built program's ``libgomp.so.1`` to libomp.

Each raises :class:`pinbench.native.NotBuilt` (one line naming ``pinbench setup``) when
its helper is missing or stale.
"""
from __future__ import annotations

import os
from pathlib import Path

from pinbench import native
from pinbench.errors import PinbenchError
from pinbench.trace.elf import needed_libraries

TRACERS = ("tsan", "valgrind", "pin")
#: the compile flags of a traced build (the link flags come from traced_build_flags())
TSAN_CFLAGS = "-fsanitize=thread -fopenmp"
#: the program's memcpy/memmove/memset calls go through the runtime's wrappers, and so do its
#: calls of libgomp's parallel entry points (pintools/tsan_rt.c, "PB_FORK": per region)
TSAN_WRAPPED = ("memcpy", "memmove", "memset", "__memcpy_chk", "__memmove_chk", "__memset_chk",
                "GOMP_parallel", "GOMP_parallel_reductions", "GOMP_parallel_sections",
                *(f"GOMP_parallel_loop_{kind}" for kind in (
                    "static", "dynamic", "guided", "runtime", "nonmonotonic_dynamic",
                    "nonmonotonic_guided", "nonmonotonic_runtime",
                    "maybe_nonmonotonic_runtime")))


class TraceError(PinbenchError, RuntimeError):
    """A tracer cannot be run, or the traced program failed; one-line message."""


def built_tracer(name: str) -> Path:
    """What tracer ``name`` runs with: ``tsan``, the runtime archive; ``valgrind``, the
    VALGRIND_LIB directory holding the tool; ``pin``, the Pin tool. TraceError for an
    unknown name."""
    if name not in TRACERS:
        raise TraceError(f"unknown tracer {name!r} (choose from {', '.join(TRACERS)})")
    return native.built(name)


def pin_root() -> Path:
    """The Intel Pin kit that ``PIN_ROOT`` names; TraceError (one line) when none."""
    try:
        return native.pin_kit()
    except native.Unavailable as exc:
        raise TraceError(str(exc)) from None


def ompt_tool() -> dict[str, str]:
    """What an explained run needs: ``tool`` (the shared library, for
    ``OMP_TOOL_LIBRARIES``), ``libomp`` (the runtime) and ``gomp_dir`` (a folder whose
    ``libgomp.so.1`` is libomp, for ``LD_LIBRARY_PATH``)."""
    tool = native.built("ompt")
    gomp_dir = tool.parent / "gomp-on-libomp"
    return {"tool": str(tool), "libomp": os.readlink(gomp_dir / "libgomp.so.1"),
            "gomp_dir": str(gomp_dir)}


def traced_build_flags() -> tuple[str, str]:
    """(compile flags, link flags) of a program traced by the tsan runtime.

    Compile with the first (``cc $CFLAGS -c x.c``), link with the second
    (``cc x.o $LDFLAGS``). The link flags work wherever a build puts them on its link line,
    as CMake and many makefiles do: before the objects (the runtime, named by absolute
    path, is taken whole, not only for the symbols the objects before it need), and after
    the compile flags (their ``-fno-sanitize=thread`` cancels a ``-fsanitize=thread`` there,
    which would link libtsan). Only a command that compiles and links at once cannot take
    them: there ``-fno-sanitize=thread`` switches the instrumentation off.
    """
    wraps = ",".join(f"--wrap={name}" for name in TSAN_WRAPPED)
    return TSAN_CFLAGS, (f"-fopenmp -fno-sanitize=thread -Wl,--whole-archive "
                         f"{built_tracer('tsan')} -Wl,--no-whole-archive -latomic -Wl,{wraps}")


#: Bytes of the tsan runtime's ``pinbench_tsan_runtime`` symbol (pintools/tsan_rt.c), there
#: in a stripped binary too.
RUNTIME_MARK = b"pinbench-tsan-runtime"
#: Bytes that only a compiler's own ThreadSanitizer runtime holds (its messages).
SANITIZER_MARK = b"ThreadSanitizer: "


def untraceable(binary: Path | str) -> str | None:
    """What makes ``binary`` unusable by the tsan tracer, as found in it (e.g. ``linked with
    libtsan.so.2``); None when it holds the runtime and no other, or is no ELF program (a
    script that starts the traced program)."""
    needed = needed_libraries(binary)
    if needed is None:
        return None
    data = Path(binary).read_bytes()
    found = [f"linked with {name}" for name in needed if name.startswith("libtsan.so")]
    if not found and SANITIZER_MARK in data:
        found.append("the compiler's ThreadSanitizer runtime built in")
    if RUNTIME_MARK not in data:
        found.append("no pinbench tracer symbols (pinbench_tsan_runtime)")
    return ", ".join(found) or None
