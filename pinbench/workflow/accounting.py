"""Where a campaign call's time went: each job's wall time by stage, and the call's overhead.

Read at the end of a call from the jobs' timing files (Snakemake's ``benchmark:`` files and the
measuring processes' accounts, :meth:`pinbench.results.layout.Layout.timing_files`).
"""
from __future__ import annotations

import json
from pathlib import Path

from pinbench.results import formats
from pinbench.results.layout import Layout


def job_timings(layout: Layout, since: float) -> list[tuple[str, Path, float, float]]:
    """(stage, timing file, seconds, end time stamp) of each job of this call: the timing
    files (Snakemake's ``benchmark:`` directive, :meth:`Layout.timing`; a measurement job's
    account, :meth:`Layout.account`) written since ``since`` (a time stamp), each when its
    job ends."""
    found = []
    for stage, path in layout.timing_files():
        try:
            ended = path.stat().st_mtime
            if ended < since:
                continue
            text = path.read_text()
            seconds = float(read_account(path)["process_s"] if path.suffix == ".json"
                            else text.splitlines()[1].split("\t")[0])
        except (OSError, IndexError, KeyError, ValueError):
            continue
        found.append((stage, path, seconds, ended))
    return found


def read_account(path: Path) -> dict:
    """A measuring process's account (:meth:`Layout.account`), in the current version."""
    return formats.read("account", json.loads(path.read_text()), path)


def time_breakdown(layout: Layout, since: float, wall_s: float | None = None) -> str:
    """The wall time of this call's jobs by stage (:func:`job_timings`, written since
    ``since``); with ``wall_s``, the call's wall time so far, a second line too: where the
    call's time went (:func:`where_time_went`)."""
    jobs = job_timings(layout, since)
    spent: dict[str, float] = {}
    for stage, _, seconds, _ in jobs:
        spent[stage] = spent.get(stage, 0.0) + seconds
    if not spent:
        return "time: no job ran"
    order = [s for s in TIMED_STAGES if s in spent] + sorted(set(spent) - set(TIMED_STAGES))
    line = ("time by stage (jobs' wall time, this call): "
            + ", ".join(f"{stage} {_duration(spent[stage])}" for stage in order)
            + f"; total {_duration(sum(spent.values()))}")
    return line if wall_s is None else line + "\n" + where_time_went(jobs, since, wall_s)


def where_time_went(jobs: list[tuple[str, Path, float, float]], since: float,
                    wall_s: float) -> str:
    """The call's wall time ``wall_s`` split into what the campaign is for and what it costs
    around that, and the ratio of the call's wall time to the runs' recorded time plus
    builds and tracing (the target: 1.05x).

    - measuring: the recorded wall time of the runs measured by this call (and of the
      explained runs), from each measuring process's account (:meth:`Layout.account`);
    - waiting for quiet (the quiet policy) and for the machine lock (another measurement);
    - launcher: the rest of the measurement jobs' time: starting the measuring process and
      setting the job up (``start-up``), and its own work around each run (``per run``:
      spawning, verifying, journaling);
    - builds, tracing, placement (topology and placements), analysis (and models), report:
      their jobs' wall time;
    - Snakemake: the call's wall time less the time some job ran (its start-up, the DAG,
      scheduling and the gaps between jobs).
    """
    by_stage: dict[str, float] = {}
    measure = {"runs": 0, "measuring_s": 0.0, "explained_s": 0.0, "quiet_wait_s": 0.0,
               "lock_wait_s": 0.0, "start_s": 0.0, "per_run_s": 0.0}
    for stage, path, seconds, _ in jobs:
        by_stage[stage] = by_stage.get(stage, 0.0) + seconds
        if stage != "measure":
            continue
        account = read_account(path)
        for key in ("runs", "measuring_s", "explained_s", "quiet_wait_s", "lock_wait_s"):
            measure[key] += account.get(key, 0)
        loop = account.get("loop_s", 0.0)
        measure["per_run_s"] += loop - account.get("measuring_s", 0.0) \
            - account.get("quiet_wait_s", 0.0) - account.get("explained_s", 0.0)
        measure["start_s"] += seconds - loop - account.get("lock_wait_s", 0.0)
    busy = _union([(end - seconds, end) for _, _, seconds, end in jobs])
    parts = {
        "measuring": measure["measuring_s"] + measure["explained_s"],
        "waiting for quiet": measure["quiet_wait_s"],
        "waiting for the machine lock": measure["lock_wait_s"],
        "launcher": measure["start_s"] + measure["per_run_s"],
        "builds": by_stage.get("build", 0.0),
        "tracing": by_stage.get("trace", 0.0),
        "placement": by_stage.get("topology", 0.0) + by_stage.get("place", 0.0),
        "analysis": sum(v for k, v in by_stage.items()
                        if k not in ("measure", "build", "trace", "topology", "place",
                                     "report")),
        "report": by_stage.get("report", 0.0),
        "Snakemake": wall_s - busy,
    }
    text = [f"{name} {_duration(seconds)}" for name, seconds in parts.items()
            if seconds >= 0.05 or name in ("measuring", "Snakemake")]
    if measure["runs"]:
        text[0] += f" ({measure['runs']} runs)"
    launcher = f"launcher {_duration(parts['launcher'])}"
    if launcher in text:
        text[text.index(launcher)] += (f" (start-up {_duration(measure['start_s'])}, "
                                       f"per run {_duration(measure['per_run_s'])})")
    line = f"where the call's {_duration(wall_s)} went: " + ", ".join(text)
    useful = parts["measuring"] + parts["builds"] + parts["tracing"]
    if measure["runs"] and useful > 0:
        waits = parts["waiting for quiet"] + parts["waiting for the machine lock"]
        line += (f"; the call took {wall_s / useful:.3f}x the runs' time plus builds and "
                 f"tracing ({(wall_s - waits) / useful:.3f}x without the waits)")
    return line


def _union(intervals: list[tuple[float, float]]) -> float:
    """The total length of the union of (start, end) intervals.

    >>> _union([(0, 2), (1, 3), (5, 6)])
    4.0
    """
    total, reach = 0.0, float("-inf")
    for start, end in sorted(intervals):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


#: The stages whose jobs are timed, in the order a campaign runs them.
TIMED_STAGES = ("topology", "build", "trace", "place", "measure", "analyse", "report")


def _duration(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 60 else f"{int(seconds // 60)} min {seconds % 60:.0f} s"
