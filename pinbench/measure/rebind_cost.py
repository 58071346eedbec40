"""The cost of one re-binding with the shim (:mod:`pinbench.measure.rebind`), measured by
``pinbench setup`` once per build of the shim (:func:`calibrate`, which :mod:`pinbench.native`
calls after building it) and kept beside the helpers' manifest, in :data:`COST_FILE`; read
back by :func:`pinbench.measure.rebind.rebind_cost_s`, :data:`DEFAULT_COST_S` without it.
Apart from :mod:`pinbench.measure.rebind`, which needs :mod:`pinbench.native` for the shim's
path: the builder calls this module, and this module imports nothing of pinbench. ctypes and
statistics are imported by :func:`calibrate` alone (the measuring process never calibrates).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

#: Where ``pinbench setup`` keeps the measured cost, in the helpers' folder.
COST_FILE = "rebind_cost.json"
#: Seconds per ``sched_setaffinity`` when not calibrated: an assumption, a system call and a
#: switch to an idle CPU; under load a call that moves the thread costs far more (21-170 us
#: measured on a loaded 2-core VM: docs/performance.md), which is why setup measures it.
DEFAULT_COST_S = 5e-6
#: Calibration: calls per batch, batches (the median is kept).
CALLS, BATCHES = 200, 5


def calibrate(shim: Path, folder: Path, say=print) -> dict | None:
    """Measure, with the built ``shim``, the seconds of one ``sched_setaffinity`` that moves
    a thread, and of one re-binding of a team as large as this process's CPUs; write them to
    ``folder``/:data:`COST_FILE` unless it holds this shim's already. One line says them."""
    import ctypes  # the measuring process never calibrates: it imports neither
    import statistics

    path = folder / COST_FILE
    try:
        known = json.loads(path.read_text())
        if known.get("shim") == str(shim):
            return known
    except (OSError, ValueError):
        pass
    cpus = sorted(os.sched_getaffinity(0))
    array = (ctypes.c_int * len(cpus))(*cpus)
    library = ctypes.CDLL(str(shim))
    per_call, per_team = [], []
    for _ in range(BATCHES):
        out = (ctypes.c_double * 2)()
        if library.pinbench_rebind_calibrate(array, len(cpus), len(cpus), CALLS, out):
            say("pinbench setup: the re-binding cost cannot be measured here: "
                f"using {DEFAULT_COST_S * 1e6:g} us per call")
            return None
        per_call.append(out[0])
        per_team.append(out[1])
    cost = {"shim": str(shim), "per_call_s": statistics.median(per_call),
            "threads": len(cpus), "per_instance_s": max(0.0, statistics.median(per_team)),
            "calls": CALLS * BATCHES}
    written = path.with_name(f".{COST_FILE}.{os.getpid()}")
    written.write_text(json.dumps(cost, indent=1) + "\n")
    os.replace(written, path)
    say(f"pinbench setup: re-binding cost {cost['per_call_s'] * 1e6:.2f} us per call, "
        f"{cost['per_instance_s'] * 1e6:.2f} us per region instance at {len(cpus)} threads")
    return cost
