"""The workflow's side of the packages: the campaign file and what the Snakefile calls.

- :mod:`~affinity.workflow.campaign`: a campaign file validated, its machines resolved,
  its build and run commands;
- :mod:`~affinity.workflow.rules`: the body of each rule of ``rules/*.smk``;
- :mod:`~affinity.workflow.session`: one pinbench Snakemake per folder, stale locks cleared.
"""
