"""Journals written before versions (format 1), matched against the job that opens them.

A journal's header of version 1 held the fingerprint of the release before versions
(:func:`legacy_fingerprint`), or, for the explained runs, a plan naming the binary by its
absolute path. Only the job that opens the journal can say whether it is that job's
measurement: :func:`read_header` reads a header through :func:`pinbench.results.formats.read`
with :func:`migrate_journal_1` as its step from version 1, so the results stage, which reads
journals for what they hold, knows nothing of jobs.
"""
from __future__ import annotations

import hashlib
import json
import os
from functools import partial
from typing import TYPE_CHECKING

from pinbench.measure.settings import LAUNCHED
from pinbench.results import formats
from pinbench.results.placements import shared_levels
from pinbench.topology import TopologyError, load

if TYPE_CHECKING:  # the job module imports this one
    from pinbench.measure.job import Job


def read_header(header: dict, source, job: Job, timing: str | None = None) -> dict:
    """The header of a journal that ``job`` opens, in the current version (``timing``: the
    timing journal's fingerprint, for an explained runs' journal: :func:`migrate_journal_1`)."""
    return formats.read("journal", header, source,
                        steps={1: partial(migrate_journal_1, job=job, timing=timing)})


def migrate_journal_1(header: dict, job: Job, timing: str | None = None) -> dict:
    """Version 1 to 2 of a journal's header, matched against the ``job`` that opens it.

    - A timing journal (``timing`` None) of the release before versions has the job's
      fingerprint (:meth:`Job.fingerprint`) when it holds its measurement. One written before
      :meth:`Job.fingerprint_parts` has a :func:`legacy_fingerprint`: when it is the job's, the
      header takes the job's fingerprint, and ``merged: false`` when it was written before
      identical placements were merged (the job then measures every strategy).
    - An explained runs' journal (``timing``: the timing journal's fingerprint) held the
      binary's absolute path in its plan: when its plan is the job's once the binary is
      named ``{binary}`` (:meth:`Job.explained_plan`), wherever the project lay, the header
      takes the plan and fingerprint of version 2.

    Another measurement's header is left as it is: its fingerprint is not the job's, and
    the journal is set aside.
    """
    found = header.get("fingerprint")
    if timing is not None:
        old_plan = header.get("explain")
        plan = job.explained_plan()
        if (isinstance(old_plan, dict) and found == formats.digest([timing, old_plan])
                and _relocated(old_plan, job.binary_path) == plan):
            return header | {"fingerprint": formats.digest([timing, plan]), "explain": plan}
        return header
    current = job.fingerprint()
    if found == current or sorted(job.exit_status) != [0] or job.metrics or \
            job.cwd is not None or job.verify != LAUNCHED or isinstance(job.time, dict):
        return header  # legacy journals knew no exit statuses, metrics, cwd, verify or time
    for merged in (True, False):
        if found == legacy_fingerprint(job, merged):
            return header | {"fingerprint": current} | ({} if merged else {"merged": False})
    return header


#: The fields of a job that defined what it measured in :func:`legacy_fingerprint`.
LEGACY_FIELDS = ("machine", "benchmark", "threads", "argv", "env", "validate", "time_regex",
                 "timeout_s", "repetitions", "seed", "order", "placements")
#: Fields of :data:`LEGACY_FIELDS` a job holds under another name now.
RENAMED = {"time_regex": "time"}


def legacy_fingerprint(job: Job, merged: bool = True) -> str:
    """The hash journals were written with before :meth:`Job.fingerprint_parts` (the whole
    placement records, the command as given with a relative binary path). ``merged=False``:
    as written before identical placements were merged."""
    binary = job.binary_path
    fields = {name: getattr(job, RENAMED.get(name, name)) for name in LEGACY_FIELDS}
    fields["placements"] = {strategy: _legacy_record(placement)
                            for strategy, placement in job.placements.items()}
    fields["argv"] = [os.path.relpath(arg) if os.path.isabs(arg) and arg == binary else arg
                      for arg in job.argv]
    if merged and job.same_as:
        fields["same_as"] = job.same_as
    if job.stopping:
        fields["stopping"] = job.stopping
    blob = json.dumps([fields, job.binary_digest], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def _legacy_record(placement) -> dict:
    """A placement's record as the release before versions held it: with the thread pairs'
    lowest shared objects when it has one list, derived from its topology (none when the
    topology cannot be read: the hash is then another one, and the journal is set aside)."""
    record = placement.to_json()
    if placement.pus is not None:
        try:
            record["shared_level"] = shared_levels(load(placement.topology), placement.pus)
        except TopologyError:
            pass
    return record


def _relocated(plan: dict, binary: str) -> dict:
    """A version 1 explained plan with the binary named ``{binary}``: an absolute path that
    ends as the job's binary does below the project (``results/...``), wherever the project
    lay when it was written."""
    below = os.sep + os.path.relpath(binary)

    def named(argv):
        return None if argv is None else [
            "{binary}" if os.path.isabs(arg) and (arg == binary or arg.endswith(below))
            else arg for arg in argv]

    return plan | {"t1_argv": named(plan.get("t1_argv")),
                   "sequential_argv": named(plan.get("sequential_argv"))}
