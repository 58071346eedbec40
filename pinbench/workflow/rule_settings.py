"""What the jobs of each rule depend on in the campaign, as Snakemake params: a change re-runs them.

Snakemake re-runs a job whose params changed (the profiles' ``rerun-triggers: [mtime,
input, params]``), but it compares only the params that are not computed from the job's
input, output, threads or resources: the build rule's command (it names the output) and the
measure rule's settings (they read the placement files) are never compared. So each rule
also takes ``settings``, made here from the wildcards alone: the campaign's settings its jobs
depend on and no others (a benchmark's ``description``, another benchmark or the ``quiet``
policy change none), as sorted JSON text (Snakemake compares the params' ``repr()``). Paths
of the project are written relative to it and a benchmark's binary as ``{binary}``: the
settings do not say where the project lies.

What a job does once re-run is its own business: a rebuild that makes the same bytes
leaves the traces (:mod:`pinbench.workflow.tracecache`) and the measurements (their journals
hold the binary's hash) as they were; a measurement whose settings changed sets its journal
aside, with a note of what changed (:mod:`pinbench.measure.journal`).
"""
from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from pinbench.measure.settings import located, portable
from pinbench.workflow import campaign, jobsettings, rule_bodies

#: Settings of a measurement job that define no measurement: how it waits for a quiet
#: machine, which strategies are one experiment (read from its placement files, its
#: inputs), and the share of the wall time its printed times are expected to be (the
#: analysis judges them).
NOT_MEASURED = ("quiet", "same_as", "time_share_expected")


def _text(settings: dict) -> str:
    return json.dumps(settings, sort_keys=True)


def _relative(path: str, root: Path) -> str:
    """An absolute path relative to the project ``root``; any other value as it is."""
    return os.path.relpath(path, root) if os.path.isabs(path) else path


def build(config: dict, bench: str, output: str, root: Path,
          traced_flags: tuple[str, str] | None = None) -> str:
    """The build rule's: the command that builds ``output``, with the paths relative to the
    project ``root`` (with ``traced_flags``, the traced variant's command)."""
    fields = campaign.build_fields(config, bench, output, traced_flags)
    fields.update({name: _relative(fields[name], root) for name in campaign.PATH_FIELDS})
    template = campaign.build_template(config, bench, traced_flags is not None)
    return _text({"command": template.format(**fields)})


def traced_build(config: dict, bench: str, output: str, root: Path) -> str:
    """The traced build rule's: its command (:func:`build`) with the tsan tracer's flags."""
    return build(config, bench, output, root, rule_bodies.tsan_flags())


def trace(config: dict, bench: str, threads: int, binary: str) -> str:
    """The trace rule's: what its trace cache keys a trace by, but the binary's bytes (an
    input): the traced command, its environment, the exit statuses that mean success and
    the tracer's settings."""
    argv = campaign.run_argv(config, bench, binary, threads, traced=True)
    return _text({"argv": located(argv, os.path.abspath(binary)),
                  "env": campaign.run_env(config, bench),
                  "exit_status": config["benchmarks"][bench]["exit_status"],
                  "tracing": config["tracing"]})


def measure(config: dict, machine: str, bench: str, threads: int, binary: str,
            thread_counts: tuple[int, ...]) -> str:
    """The measure rule's: the job's settings (:func:`pinbench.workflow.jobsettings.job_settings`)
    but those of :data:`NOT_MEASURED`."""
    settings = jobsettings.job_settings(config, machine, bench, threads, binary, thread_counts)
    where = os.path.abspath(binary)
    explain = settings.explain and dataclasses.replace(
        settings.explain, t1_argv=located(settings.explain.t1_argv, where),
        sequential_argv=located(settings.explain.sequential_argv, where))
    found = dataclasses.replace(settings, argv=located(settings.argv, where), binary="{binary}",
                                explain=explain, cwd=portable(settings.cwd)).to_json()
    return _text({name: value for name, value in found.items() if name not in NOT_MEASURED})
