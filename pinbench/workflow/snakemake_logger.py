"""Snakemake's log, as a campaign call's terminal hears it: a logger plugin
(``snakemake-interface-logger-plugins``) that ``pinbench run`` and ``pinbench plan`` give
Snakemake unless the call is verbose (:func:`pinbench.workflow.snakemake_adapter.use_logger`).

A plugin that writes to the stream takes the place of Snakemake's own listing: the jobs'
events (the call's jobs by rule, each job started, the count done) go to the display
(:mod:`pinbench.workflow.terminal`), errors and warnings are printed in Snakemake's words,
and its other lines (the DAG being built, the jobs' details) are left out.
"""
from __future__ import annotations

import logging

from snakemake_interface_logger_plugins.base import LogHandlerBase
from snakemake_interface_logger_plugins.common import LogEvent

from pinbench.workflow import terminal

#: The plugin's name (``--logger pinbench``).
NAME = "pinbench"
#: Snakemake's events that are errors: printed whatever the verbosity.
ERRORS = (LogEvent.JOB_ERROR, LogEvent.GROUP_ERROR, LogEvent.ERROR)


class LogHandler(LogHandlerBase):
    """Snakemake's log records, to the call's :class:`~pinbench.workflow.terminal.Terminal`."""

    def emit(self, record: logging.LogRecord) -> None:
        """One record: a job's event to the display; an error or a warning printed."""
        shown = terminal.current()
        event = getattr(record, "event", None)
        if event == LogEvent.RUN_INFO:
            shown.planned(dict(getattr(record, "stats", {})))
        elif event == LogEvent.PROGRESS:
            shown.step(record.done, record.total)
        elif event == LogEvent.JOB_INFO:
            shown.job_started(record.rule_name)
        elif event in ERRORS or (event is None and record.levelno >= logging.WARNING):
            shown.error(self.format(record))

    @property
    def writes_to_stream(self) -> bool:
        """It prints: Snakemake adds no listing of its own."""
        return True

    @property
    def writes_to_file(self) -> bool:
        return False

    @property
    def has_filter(self) -> bool:
        """It hears every record (Snakemake's filter would drop the progress of a quiet
        call)."""
        return True

    @property
    def has_formatter(self) -> bool:
        """Errors in Snakemake's own words: its formatter."""
        return False

    @property
    def needs_rulegraph(self) -> bool:
        return False
