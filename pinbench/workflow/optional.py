"""The optional parts of a campaign, detected once per call, and what a missing one leaves out.

A campaign needs hwloc, a C compiler with OpenMP and Python; every other tool enables one
part of it. When the campaign asks for a part whose tool is missing here, that part alone is
left out, said in one line (before measuring, in the closing lines and on the report's
first page), and everything else runs:

- ``explain`` (OMPT explanations): the OMPT tool that ``pinbench setup`` builds with clang
  and libomp; without it the cells are measured without explained runs;
- ``tracing`` (the affinity matrices of the graph strategies): the campaign's tracer built
  by ``pinbench setup`` (the Valgrind tool needs Valgrind, the Pin tool ``PIN_ROOT``);
  without it the strategies that need a matrix are neither placed nor measured, the others
  are;
- ``per-region`` (a placement per parallel region, re-bound at run time): the re-binding
  shim that ``pinbench setup`` builds (:mod:`pinbench.measure.rebind`); without it the
  strategies that need it (:func:`~pinbench.place.registry.rebound`) are neither
  placed nor measured, the others are;
- a SLURM machine whose cluster cannot be asked (no ``sinfo``, no controller): its work is
  left out of the call (:func:`pinbench.workflow.places.unreachable` finds it);
- ``metric`` on a counter (``cycles``...) that the kernel here does not count (a virtual
  machine, ``perf_event_paranoid``): asked of the launcher once, on ``/bin/true``; the
  verdicts are then on the run time, as without ``metric``.

The other counters the kernel does not count are said by each measurement job (the runs
record what was counted). Without Extra-P (``.venv-extrap``, or ``PINBENCH_EXTRAP``) the
models' job writes no model and says why in its summary's first line, which the closing
lines and the report show (:func:`pinbench.stats.models.models`): it runs again when
``PINBENCH_EXTRAP`` changes. The report's browser check and likwid serve the tests only.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pinbench import native
from pinbench.place.registry import rebound as rebinds
from pinbench.workflow.campaign import traces


@dataclass(frozen=True)
class LeftOut:
    """One part of a campaign left out of this call: ``part`` (``explain``, ``tracing``,
    the per-region strategies, ``metric NAME``, ``machine NAME``), ``why`` (the missing tool, in one line) and ``effect``
    (what the campaign does without it)."""

    part: str
    why: str
    effect: str

    def line(self) -> str:
        """One line, e.g. ``explain left out: the OMPT tool is not built: ... (the cells are
        measured without explained runs)``.

        >>> LeftOut("explain", "clang not found", "no explained runs").line()
        'explain left out: clang not found (no explained runs)'
        """
        return f"{self.part} left out: {self.why} ({self.effect})"


def helper_missing(name: str) -> str | None:
    """Why pinbench's C helper ``name`` could not be built on this machine (``pinbench
    setup`` found a tool missing), or None when it is built. A helper never built, or out of
    date, is no missing tool but a set-up to do: None too, and the job that needs it stops in
    the one line of :class:`pinbench.native.NotBuilt` (``run pinbench setup``)."""
    try:
        native.built(name)
    except native.NotBuilt as exc:
        return str(exc) if "not_built" in native.read_manifest(native.native_dir()).get(
            name, {}) else None
    return None


def uncounted(counter: str) -> str | None:
    """Why the kernel here does not count ``counter`` in a run (the launcher's reply for one
    run of ``/bin/true``), or None when it does, or when the launcher cannot tell (it is not
    built: the campaign stops on that anyway)."""
    from pinbench.measure.launcher import Launcher, LauncherError  # only when asked

    try:
        with Launcher() as launcher:
            reply = launcher.run("/bin/true", ["true"], {}, 10.0, 4096)
    except (native.NotBuilt, LauncherError, OSError):
        return None
    return reply.uncounted.get(counter)


def left_out(config: dict, machines: Iterable) -> dict[str, LeftOut]:
    """The parts that the campaign ``config`` asks for and this machine lacks, by part.

    ``machines``: the campaign's (:class:`pinbench.workflow.campaign.Machine`), explanations
    and counters coming with the measured ones.
    """
    machines = list(machines)
    measured = [m for m in machines if m.measure]
    found: dict[str, LeftOut] = {}
    if config.get("explain") and measured:
        why = helper_missing("ompt")
        if why:
            found["explain"] = LeftOut("explain", why,
                                       "the cells are measured without explained runs")
    if traces(config):
        tracer = config["tracing"]["tracer"]
        why = helper_missing(tracer)  # each tracer is the C helper of its name
        if why:
            found["tracing"] = LeftOut(
                "tracing", f"the {tracer} tracer: {why}",
                "the strategies that need an affinity matrix are neither placed nor measured; "
                "the others are")
    rebound = [s for s in config.get("strategies", []) if rebinds(s)]
    why = helper_missing("rebind") if rebound and measured else None
    if why:
        found["rebind"] = LeftOut(", ".join(rebound), why,
                                  "neither placed nor measured; the other strategies are")
    metric = config.get("metric", "time")
    here = [m for m in measured if m.slurm is None]
    why = uncounted(metric) if metric != "time" and here else None
    if why:
        found["metric"] = LeftOut(f"metric {metric}", f"this machine's kernel does not count "
                                  f"{metric} ({why})", "the verdicts, tables and report are on "
                                  "the run time instead")
    return found
