"""Is this machine quiet and stable enough to measure? Checks in the spirit of pyperf's
``system show`` (V. Stinner, pyperf documentation, "Tune the system for benchmarks").

``pinbench system``  prints one line per check with
a plain advice line for each problem; the workflow stores the checks in each measured
machine's ``environment.json`` and the report shows them. Nothing here changes the system.

Each check reads the kernel's files: the CPU frequency governor and turbo boost (frequency
that moves with load and temperature), SMT, isolated CPUs (``isolcpus``, ``nohz_full``),
address-space randomisation (the launcher switches it off for the runs anyway), the share of
CPU time other processes take right now (from ``/proc/stat``, over a short window, with the
busiest processes named), the load average, and whether a clock-synchronisation daemon runs
(it may slew the monotonic clock by up to 500 ppm, negligible for runs of seconds).
A value the kernel does not expose (a virtual machine without cpufreq) is "unavailable", not
a problem.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

CPU = Path("/sys/devices/system/cpu")
#: Share of all CPUs' time used by other processes above which the machine is called busy.
BUSY_SHARE = 0.05
CLOCK_DAEMONS = ("chronyd", "ntpd", "systemd-timesyncd", "openntpd", "timesyncd")


@dataclass
class Check:
    """One check: what was found, whether it is a problem, and what to do about it."""

    name: str
    value: str
    ok: bool
    advice: str = ""


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


@dataclass(frozen=True)
class CpuTimes:
    """The machine's CPU time so far, from the first line of /proc/stat (clock ticks)."""

    busy: int
    total: int

    @classmethod
    def now(cls) -> "CpuTimes":
        fields = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
        total = sum(fields[:8])  # guest time is already in user time
        return cls(total - idle, total)

    def busy_share_since(self, earlier: "CpuTimes") -> float:
        """The share of all CPUs' time spent busy between ``earlier`` and this sample."""
        elapsed = self.total - earlier.total
        return (self.busy - earlier.busy) / elapsed if elapsed > 0 else 0.0


def process_age_s(pid: int | str = "self") -> float | None:
    """Seconds since process ``pid`` started (the kernel's start time, to a clock tick:
    10 ms), interpreter start-up included; None when /proc cannot say."""
    stat = _read(Path(f"/proc/{pid}/stat"))
    if stat is None:
        return None
    started = int(stat[stat.rindex(")") + 2:].split()[19]) / os.sysconf("SC_CLK_TCK")
    return time.clock_gettime(time.CLOCK_BOOTTIME) - started


#: Below this many clock ticks of all CPUs (0.2 s on one CPU) a share is too coarse to tell.
MIN_TICKS = 20


def shortest_share_s() -> float:
    """The shortest run whose share of others' CPU time is told: one that lasts
    :data:`MIN_TICKS` clock ticks of all online CPUs (0.1 s on two). The launcher does not
    sample the CPU time again after a shorter run (its share is None)."""
    return MIN_TICKS / ((os.cpu_count() or 1) * os.sysconf("SC_CLK_TCK"))


def other_share(before: CpuTimes, after: CpuTimes, ours_s: float) -> float | None:
    """The share of all CPUs' time that others used between two samples, given the CPU
    seconds ``ours_s`` that we (the launcher and the run) used; None over too short a time."""
    elapsed = after.total - before.total
    if elapsed < MIN_TICKS:
        return None
    ours = ours_s * os.sysconf("SC_CLK_TCK")
    return max(0.0, (after.busy - before.busy - ours) / elapsed)


def wait_until_quiet(threshold: float, max_wait_s: float, window_s: float = 0.1,
                     check: Callable[[], None] = lambda: None) -> tuple[float, bool]:
    """Sleep in windows of ``window_s`` until the CPUs are less than ``threshold`` busy (this
    process sleeps meanwhile, so the busy time is others'), at most ``max_wait_s``; ``check``
    is called before each window (it raises to end the wait).

    Returns the seconds waited and whether the machine was found busy all along (False
    when a window was quiet, or when ``max_wait_s`` allowed no window at all).
    """
    start, busy = time.monotonic(), False
    while time.monotonic() - start < max_wait_s:
        check()
        before = CpuTimes.now()
        time.sleep(window_s)
        busy = CpuTimes.now().busy_share_since(before) >= threshold
        if not busy:
            break
    return time.monotonic() - start, busy


@dataclass(frozen=True)
class Process:
    """A process's CPU time so far (clock ticks): its own, and its reaped children's."""

    name: str
    parent: int
    ticks: int
    children_ticks: int


def _processes() -> dict[int, Process]:
    """Every readable process, from /proc/PID/stat (utime, stime, cutime, cstime)."""
    found = {}
    for entry in Path("/proc").iterdir():
        stat = _read(entry / "stat") if entry.name.isdigit() else None
        if stat is None:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        found[int(entry.name)] = Process(stat[stat.index("(") + 1:stat.rindex(")")],
                                         int(fields[1]), int(fields[11]) + int(fields[12]),
                                         int(fields[13]) + int(fields[14]))
    return found


def _own_tree(processes: dict[int, Process]) -> set[int]:
    """This process and its descendants."""
    tree, grew = {os.getpid()}, True
    while grew:
        more = {pid for pid, proc in processes.items() if proc.parent in tree} - tree
        tree |= more
        grew = bool(more)
    return tree


@dataclass(frozen=True)
class Snapshot:
    """Every process's CPU time and the machine's at one moment: where a window of
    :func:`busy_processes` starts."""

    processes: dict[int, Process]
    cpu: CpuTimes
    at: float  # time.monotonic()

    @classmethod
    def now(cls) -> "Snapshot":
        return cls(_processes(), CpuTimes.now(), time.monotonic())


def busy_processes(window_s: float = 0.5, since: Snapshot | None = None
                   ) -> tuple[float, list[tuple[str, float]]]:
    """The share of all CPUs' time that processes other than this one and its descendants
    used over a window of at least ``window_s`` (from ``since``, or from now: this process
    sleeps for what is left of it), and the busiest of them with their share of one CPU.

    Children that end within the window count as ours through their parent's reaped time.
    """
    ticks = os.sysconf("SC_CLK_TCK")
    before = since or Snapshot.now()
    time.sleep(max(0.0, window_s - (time.monotonic() - before.at)))
    after = Snapshot.now()
    ours = _own_tree(after.processes)

    def used(pid: int, proc: Process, reaped: bool) -> int:
        old = before.processes.get(pid)
        now = proc.ticks + (proc.children_ticks if reaped else 0)
        return now - (old.ticks + (old.children_ticks if reaped else 0) if old else 0)

    own_ticks = sum(used(pid, after.processes[pid], True) for pid in ours)
    elapsed = after.cpu.total - before.cpu.total
    share = max(0.0, after.cpu.busy_share_since(before.cpu) - own_ticks / max(elapsed, 1))
    others = [(proc.name, used(pid, proc, False) / (ticks * (after.at - before.at)))
              for pid, proc in after.processes.items()
              if pid not in ours and pid in before.processes]
    return share, sorted((o for o in others if o[1] > 0), key=lambda o: -o[1])[:5]


def _governors() -> Check:
    found = {_read(p) for p in CPU.glob("cpu[0-9]*/cpufreq/scaling_governor")} - {None}
    if not found:
        return Check("CPU frequency governor", "unavailable", True)
    ok = found == {"performance"}
    return Check("CPU frequency governor", ", ".join(sorted(found)), ok,
                 "" if ok else "set the 'performance' governor (cpupower frequency-set "
                 "-g performance), or the frequency follows the load")


def _turbo() -> Check:
    no_turbo, boost = _read(CPU / "intel_pstate/no_turbo"), _read(CPU / "cpufreq/boost")
    if no_turbo is None and boost is None:
        return Check("turbo boost", "unavailable", True)
    on = no_turbo == "0" if no_turbo is not None else boost == "1"
    return Check("turbo boost", "on" if on else "off", not on,
                 "switch turbo boost off (echo 1 > /sys/devices/system/cpu/intel_pstate/"
                 "no_turbo): the frequency then varies with temperature and active cores"
                 if on else "")


def _smt() -> Check:
    active = _read(CPU / "smt/active")
    value = {"1": "on", "0": "off"}.get(active or "", "unavailable")
    return Check("SMT (hyperthreads)", value, True,
                 "SMT is on: placements decide which threads share a core" if active == "1"
                 else "")


def _isolated() -> Check:
    isolated = _read(CPU / "isolated") or ""
    cmdline = _read(Path("/proc/cmdline")) or ""
    nohz = next((w.split("=", 1)[1] for w in cmdline.split() if w.startswith("nohz_full=")), "")
    value = f"isolated {isolated or 'none'}; nohz_full {nohz or 'none'}"
    return Check("isolated CPUs", value, True)


def _aslr() -> Check:
    value = _read(Path("/proc/sys/kernel/randomize_va_space")) or "unavailable"
    return Check("address-space randomisation", value, True,
                 "on for the system; the launcher switches it off for every run" if value == "2"
                 else "")


def _load() -> Check:
    one, five, _ = os.getloadavg()
    cpus = os.cpu_count() or 1
    ok = five < 0.5 * cpus
    return Check("load average (1, 5 min)", f"{one:.2f}, {five:.2f} on {cpus} CPUs", ok,
                 "" if ok else "the machine has been busy: wait, or stop the other work")


def _busy(window_s: float, since: Snapshot | None) -> Check:
    share, busiest = busy_processes(window_s, since)
    names = ", ".join(f"{name} {cpu:.0%}" for name, cpu in busiest if cpu >= 0.01)
    ok = share < BUSY_SHARE
    return Check("CPU used by other processes", f"{share:.1%}" + (f" ({names})" if names else ""),
                 ok, "" if ok else "other processes use the CPUs now: stop them before "
                 "measuring, or the runs measure them too")


def _clock() -> Check:
    running = sorted({proc.name for proc in _processes().values()} & set(CLOCK_DAEMONS))
    return Check("clock synchronisation", ", ".join(running) or "no daemon found", True,
                 "it may slew the monotonic clock by up to 500 ppm: negligible for runs of "
                 "seconds" if running else "")


def system_checks(window_s: float = 0.5, since: Snapshot | None = None) -> list[Check]:
    """Every check, in the order printed; other processes' CPU use over at least
    ``window_s`` (from ``since``, a :class:`Snapshot` taken earlier, or from now)."""
    return [_governors(), _turbo(), _smt(), _isolated(), _aslr(), _load(),
            _busy(window_s, since), _clock()]


def as_dicts(checks: list[Check]) -> list[dict]:
    """The checks as JSON-ready objects (for environment.json)."""
    return [asdict(check) for check in checks]


def format_checks(checks: list[Check]) -> str:
    """One line per check, ``ok`` or ``BAD``, each advice on a line of its own."""
    width = max(len(check.name) for check in checks)
    lines = []
    for check in checks:
        lines.append(f"{'ok ' if check.ok else 'BAD'} {check.name:<{width}}  {check.value}")
        if check.advice:
            lines.append(f"    {' ' * width}  -> {check.advice}")
    return "\n".join(lines) + "\n"
