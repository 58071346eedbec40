"""Check that every OpenMP thread ran where the placement said.

The launcher asks the runtime to print each thread's binding with
``OMP_DISPLAY_AFFINITY=TRUE`` and ``OMP_AFFINITY_FORMAT`` (OpenMP 5.0). libgomp
writes those lines to stderr as CPU ranges (``0-3``), LLVM's libomp to stdout
as lists (``0,1,2,3``); both are read. A runtime that silently drops an
invalid place (and runs the thread on CPU 0) shows up as a mismatch.

libgomp prints no such line for a one-thread team, so at one thread the set the
kernel gave the program's initial thread at exit (read by the launcher from the
exited process, :attr:`pinbench.measure.spawn.RunResult.exit_cpus`) is added to
thread 0's: it covers both runtimes, static programs and programs that run no
parallel region, and costs the program nothing. A bound run's thread 0 gets it at every
thread count.

The runtime reports the place it gave a thread, not where the thread runs: a program that
moves its own threads (``sched_setaffinity``) is seen by thread 0's CPUs at exit, and by
the launcher's looks at the other threads' CPUs while it runs (:func:`with_threads`), once
a thread has run 1 ms (a thread just created has its creator's CPUs until it is bound). A
move of thread 0 undone before it exits, and a move of another thread in a run shorter than
the first look (10 ms) or undone between two looks, are not seen.

A run command may start the OpenMP program through a wrapper (a shell script that runs it
and greps its time, ``perf stat``): the process started is then not the one whose binding
matters. A benchmark with ``verify: openmp`` (:data:`~pinbench.measure.settings.OPENMP`) has
its runtime print each line with its process id (:data:`PROCESS_FORMAT`), and the launcher
looks at every process below the one it started (:func:`run_binding`): each process that
printed lines, or whose executable loads or holds an OpenMP runtime (:func:`runs_openmp`:
libgomp prints no line at one thread), is checked as a program started directly is, its
initial thread's CPUs at exit being those of the last look at it (a process the launcher
did not start is reaped by its parent: its CPUs at exit cannot be asked).
"""
from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from pinbench.measure.settings import LAUNCHED
from pinbench.results.runs import MISMATCH, MISSING, NOT_BOUND, THREADS, VERIFIED

if TYPE_CHECKING:
    from pinbench.measure.spawn import RunResult

TOKEN = "pinbench-affinity"
#: The format given to the runtime: thread number, then its affinity set.
AFFINITY_FORMAT = f"{TOKEN} %n %A"
#: The format with the process id, for the processes below a wrapper.
PROCESS_FORMAT = f"{AFFINITY_FORMAT} %P"
_LINE = re.compile(rf"^{TOKEN} (\d+) ([0-9,\-]+)(?: (\d+))?\s*$", re.MULTILINE)
#: What an executable that runs OpenMP holds: the name of a runtime it loads (GCC's, LLVM's,
#: Intel's), or, linked statically, a variable the runtime reads.
OPENMP_MARKS = (b"libgomp.so", b"libomp.so", b"libiomp5.so", b"OMP_PROC_BIND")


def parse_cpu_list(text: str) -> frozenset[int]:
    """``"0-2,5"`` -> {0, 1, 2, 5}."""
    cpus: set[int] = set()
    for part in text.split(","):
        if not part:
            continue
        low, _, high = part.partition("-")
        cpus.update(range(int(low), int(high or low) + 1))
    return frozenset(cpus)


def observed_by_process(output: str) -> dict[int | None, dict[int, frozenset[int]]]:
    """Process id (None: not printed) -> thread number -> set of CPUs, from the runtime's
    affinity display lines.

    A thread reported twice keeps the union of its sets, so a change of
    binding during the run cannot pass for a correct one.

    >>> observed_by_process("pinbench-affinity 0 1 71\\npinbench-affinity 0 2-3\\n")
    {71: {0: frozenset({1})}, None: {0: frozenset({2, 3})}}
    """
    seen: dict[int | None, dict[int, frozenset[int]]] = {}
    for match in _LINE.finditer(output):
        thread, cpus = int(match.group(1)), parse_cpu_list(match.group(2))
        process = seen.setdefault(int(match.group(3)) if match.group(3) else None, {})
        process[thread] = process.get(thread, frozenset()) | cpus
    return seen


def _union(*bindings: dict[int, frozenset[int]]) -> dict[int, frozenset[int]]:
    """Each thread's CPUs in any of ``bindings``."""
    seen: dict[int, frozenset[int]] = {}
    for binding in bindings:
        for thread, cpus in binding.items():
            seen[thread] = seen.get(thread, frozenset()) | cpus
    return seen


def observed_binding(output: str) -> dict[int, frozenset[int]]:
    """Thread number -> set of CPUs, from the runtime's affinity display lines, whichever
    process printed them (:func:`observed_by_process`)."""
    return _union(*observed_by_process(output).values())


def with_initial_thread(observed: dict[int, frozenset[int]],
                        exit_cpus: str) -> dict[int, frozenset[int]]:
    """``observed`` with the initial thread's CPUs at exit (a kernel CPU list) added to thread 0's.

    >>> with_initial_thread({}, "2")
    {0: frozenset({2})}
    >>> with_initial_thread({0: frozenset({2})}, "0-1") == {0: {0, 1, 2}}
    True
    >>> with_initial_thread({0: frozenset({2})}, "")
    {0: frozenset({2})}
    """
    if not exit_cpus:
        return observed
    return observed | {0: observed.get(0, frozenset()) | parse_cpu_list(exit_cpus)}


@functools.cache
def pid_max() -> int:
    """The kernel's largest process id plus one, where task ids wrap around
    (``/proc/sys/kernel/pid_max``; Linux's default, 32768, when unreadable)."""
    try:
        with open("/proc/sys/kernel/pid_max") as handle:
            return int(handle.read())
    except (OSError, ValueError):
        return 32768


def with_threads(observed: dict[int, frozenset[int]], thread_cpus: dict[int, str], pid: int,
                 threads: int, wrap: int | None = None) -> dict[int, frozenset[int]]:
    """``observed`` with the CPUs the kernel allowed each thread but the initial one while the
    program ran (the launcher's looks, task id -> CPU list) added to that thread's: a thread
    the program moved (``sched_setaffinity``) is then seen on more than its place.

    The initial thread (task id ``pid``) is thread 0; the others are threads 1, 2, ... in the
    order they were created (as both runtimes start a team) when the program had exactly
    ``threads`` of them; otherwise (threads of the program's own) none is added. Task ids
    are handed out ascending from ``pid`` and wrap around at ``wrap`` (:func:`pid_max`), so
    the order of creation is that of the ids' distance from ``pid`` modulo ``wrap``: the
    ids of a team created across the wrap are not in ascending order (a team of 8 on 16
    cores was once seen as moved, each thread on its own place and on the place of the
    thread two after it). Only threads the runtime reported are added to. The initial thread's looks are
    not: until its runtime binds it, it runs on all the launcher's CPUs, and LLVM's libomp
    may take more than the first look to get there; its CPUs at exit count instead
    (:func:`with_initial_thread`).

    >>> with_threads({0: frozenset({2}), 1: frozenset({3})}, {7: "0-3", 9: "2", 8: "2"}, 7, 3)
    {0: frozenset({2}), 1: frozenset({2, 3})}
    >>> with_threads({0: frozenset({2}), 1: frozenset({3})}, {7: "1", 9: "2"}, 7, 3)
    {0: frozenset({2}), 1: frozenset({3})}
    >>> with_threads({0: frozenset({0}), 1: frozenset({1}), 2: frozenset({2})},
    ...              {32760: "0", 32767: "1", 301: "2"}, 32760, 3, wrap=32768)
    {0: frozenset({0}), 1: frozenset({1}), 2: frozenset({2})}
    """
    wrap = wrap or pid_max()
    others = sorted((tid for tid in thread_cpus if tid != pid), key=lambda tid: (tid - pid) % wrap)
    if pid not in thread_cpus or len(others) != threads - 1:
        return observed
    added = dict(observed)
    for number, tid in enumerate(others, start=1):
        if number in observed:
            added[number] = observed[number] | parse_cpu_list(thread_cpus[tid])
    return added


def process_binding(observed: dict[int, frozenset[int]], exit_cpus: str,
                    tasks: dict[int, str], pid: int, threads: int,
                    bound: bool) -> dict[int, frozenset[int]]:
    """Where the threads of one process ran: what its runtime reported (``observed``), with
    its initial thread's CPUs at exit (:func:`with_initial_thread`) at one thread (libgomp
    reports no one-thread team) or when it is ``bound`` and thread 0 reported, and with the
    looks at its other threads (``tasks``: task id -> CPUs; :func:`with_threads`) when bound."""
    if threads == 1 or (bound and 0 in observed):
        observed = with_initial_thread(observed, exit_cpus)
    if bound:
        observed = with_threads(observed, tasks, pid, threads)
    return observed


@functools.lru_cache(maxsize=256)
def runs_openmp(executable: str) -> bool:
    """Whether an executable loads or holds an OpenMP runtime (:data:`OPENMP_MARKS` in its
    bytes; an unreadable file: False). Asked once per file and process."""
    try:
        with open(executable, "rb") as handle:
            data = handle.read(64 << 20)
    except OSError:
        return False
    return any(mark in data for mark in OPENMP_MARKS)


def run_binding(result: RunResult, threads: int, bound: bool,
                verify: str = LAUNCHED) -> dict[int, frozenset[int]]:
    """Where a run's threads ran (:func:`process_binding`): those of the process the launcher
    started (``verify`` :data:`~pinbench.measure.settings.LAUNCHED`), or those of every
    process of the run that printed affinity lines or runs OpenMP (:func:`runs_openmp`), each
    thread number's CPUs in any of them (``openmp``: see the top)."""
    output = result.stdout + "\n" + result.stderr
    if verify == LAUNCHED:
        return process_binding(observed_binding(output), result.exit_cpus,
                               result.thread_cpus.get(result.pid, {}), result.pid, threads,
                               bound)
    by_process = observed_by_process(output)
    found = {pid for pid in by_process if pid is not None} | {
        pid for pid, executable in result.executables.items() if runs_openmp(executable)}
    processes = []
    for pid in sorted(found):
        tasks = result.thread_cpus.get(pid, {})
        at_exit = result.exit_cpus if pid == result.pid else tasks.get(pid, "")
        processes.append(process_binding(by_process.get(pid, {}), at_exit, tasks, pid,
                                         threads, bound))
    return _union(by_process.get(None, {}), *processes)


def _cpus(entry: int | list[int]) -> frozenset[int]:
    return frozenset([entry] if isinstance(entry, int) else entry)


def format_planned(planned: list[int] | list[list[int]]) -> str:
    """A run's plan as text: thread i's PU, or the PUs of its place under a runtime's policy.

    >>> format_planned([1, 0]), format_planned([[0, 8], [1, 9]])
    ('1 0', '0,8 1,9')
    """
    return " ".join(",".join(map(str, sorted(_cpus(entry)))) for entry in planned)


def verify(planned: list[int] | list[list[int]] | None, observed: dict[int, frozenset[int]],
           threads: int | None = None) -> str:
    """``ok`` when thread i ran on exactly ``planned[i]`` for every i (a PU, or the PUs of
    the place a runtime's policy binds it to).

    ``threads`` when the runtime reported a whole team of another size than ``threads``
    (default: the planned count), bound or not: the program chose its own thread count;
    ``n/a`` for an unbound run that reported its team, ``missing`` when some thread reported
    nothing (the runtime ignored the request, or the program ran no parallel region of more
    than one thread, bound or not: libgomp reports no one-thread team; at one thread, also
    the kernel said nothing), ``mismatch`` otherwise.

    >>> verify(None, {0: {0}, 1: {1}}, 4), verify(None, {0: {0}, 1: {1}}, 2), verify(None, {}, 2)
    ('threads', 'n/a', 'missing')
    """
    if threads is None:
        threads = len(planned) if planned is not None else None
    team = set(range(len(observed)))
    if threads is not None and observed and set(observed) == team and len(team) != threads:
        return THREADS
    if planned is None:
        return MISSING if threads is not None and threads > 1 and not observed else NOT_BOUND
    if any(i not in observed for i in range(len(planned))):
        return MISSING
    if set(observed) != set(range(len(planned))):
        return MISMATCH
    good = all(observed[i] == _cpus(entry) for i, entry in enumerate(planned))
    return VERIFIED if good else MISMATCH


def format_binding(observed: dict[int, frozenset[int]]) -> str:
    """Compact text of an observed binding: ``0:1 1:0`` or ``0:0-1 1:0-1``."""
    def cpus(s: frozenset[int]) -> str:
        items = sorted(s)
        if len(items) > 1 and items == list(range(items[0], items[-1] + 1)):
            return f"{items[0]}-{items[-1]}"
        return ",".join(map(str, items))
    return " ".join(f"{t}:{cpus(observed[t])}" for t in sorted(observed))
