"""A traced build's parallel regions carried over to the measured build of the same program.

The tsan tracer traces another build than the one measured (compiled with
``-fsanitize=thread``), so a region's key (:func:`pinbench.results.regions.region_key`: the
return address of its call into ``GOMP_parallel`` and friends) names an address of the traced
binary. Both builds call the OpenMP runtime's parallel entry points from the same functions
in the same order, so a region is the k-th such call site of its function in either binary:
:func:`carry` finds each region's call site in the traced binary and gives it the key of the
k-th call site of the same function in the measured one (both read with ``objdump -d``, which
needs the functions' symbols, not debug information). A region whose function has another
number of call sites in the measured binary is not carried (it cannot be re-bound there).
"""
from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

from pinbench.results.regions import Regions, region_key
from pinbench.trace.build import TraceError

#: a call into a parallel entry point, by the PLT or (a traced build) to the tsan runtime's
#: wrapper of it (pintools/tsan_rt.c, "PB_FORK")
_FORK_CALL = re.compile(r"\scall\w*\s+[0-9a-f]+ <(__wrap_)?GOMP_parallel\w*(@plt)?>")
_FUNCTION = re.compile(r"^([0-9a-f]+) <(.+)>:$")
_INSTRUCTION = re.compile(r"^\s+([0-9a-f]+):")


def fork_calls(binary: Path | str) -> dict[str, list[int]]:
    """Per function of ``binary``, the return addresses of its calls into the parallel entry
    points, in address order. TraceError (one line) when objdump is missing or fails."""
    tool = shutil.which("objdump")
    if tool is None:
        raise TraceError("objdump not found (install the Debian package binutils)")
    proc = subprocess.run([tool, "-d", "--no-show-raw-insn", str(binary)], capture_output=True,
                          text=True)
    if proc.returncode != 0:
        raise TraceError(f"objdump cannot read {binary}: {proc.stderr.strip()[:200]}")
    calls: dict[str, list[int]] = defaultdict(list)
    function, pending = "?", False
    for line in proc.stdout.splitlines():
        if found := _FUNCTION.match(line):
            function, pending = found.group(2), False
        elif found := _INSTRUCTION.match(line):
            if pending:  # the instruction after the call: its return address
                calls[function].append(int(found.group(1), 16))
            pending = bool(_FORK_CALL.search(line))
    return dict(calls)


def carry(regions: Regions, traced: Path | str, measured: Path | str) -> tuple[Regions, list[str]]:
    """``regions``, traced in ``traced``, with the keys of ``measured``'s call sites; the
    regions that cannot be carried are left out, each named in the list returned."""
    before, after = fork_calls(traced), fork_calls(measured)
    site = {region_key(str(traced), address): (function, k)
            for function, addresses in before.items() for k, address in enumerate(addresses)}
    kept, lost = [], []
    for region in regions.regions:
        function, k = site.get(region.key, (None, -1))
        if function is None or len(after.get(function, [])) != len(before[function]):
            lost.append(f"{region.where}: no matching call site in {Path(measured).name}")
            continue
        kept.append(dataclasses.replace(region, key=region_key(str(measured),
                                                               after[function][k])))
    return dataclasses.replace(regions, regions=kept), lost
