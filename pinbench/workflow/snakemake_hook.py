"""Snakemake reads ``--configfile`` with pinbench's loader: a bad campaign file is one line.

Snakemake's command line reads the files given to ``--configfile`` itself,
before any line of the Snakefile runs (``ConfigSettings`` in
``snakemake/settings/types.py`` calls ``snakemake.common.configfile.load_configfile``),
and reports a file it cannot read as a multi-line ``WorkflowError`` or a
traceback. :func:`install` puts :func:`pinbench.workflow.config_file.load`
in its place. ``scripts/pinbench-snakemake.pth``, which ``scripts/setup.sh``
copies into ``.venv``, calls it at the start of every Python process that is
Snakemake (``snakemake ...``, ``python -m snakemake ...``) and of no other, so
that the measuring process imports nothing of it. The loader (and with it
the campaign validation, numpy, scipy...) is imported when a file is read, so
``snakemake --version`` stays as quick as it was.
"""
from __future__ import annotations

import sys


def load_configfile(configpath):
    """Snakemake's ``load_configfile``, done by pinbench: a bad file ends the process in one line."""
    from pinbench.workflow.campaign import ConfigError
    from pinbench.workflow.config_file import load

    try:
        return load(configpath)
    except ConfigError as exc:
        sys.exit(f"config error: {exc}")


def install() -> None:
    """Make Snakemake read config files with :func:`load_configfile` (if it has the function)."""
    try:
        from snakemake.common import configfile
    except ImportError:
        return
    if hasattr(configfile, "load_configfile"):
        configfile.load_configfile = load_configfile
