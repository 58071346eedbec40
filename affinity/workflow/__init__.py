"""The workflow's side of the packages: the campaign file and what the Snakefile calls.

- :mod:`~affinity.workflow.campaign`: a campaign file validated, its machines resolved,
  its build and run commands;
- :mod:`~affinity.workflow.config_file`: a campaign file read strictly (YAML syntax, size,
  encoding, duplicate keys), each problem one line;
- :mod:`~affinity.workflow.snakemake_hook`: Snakemake reads ``--configfile`` with that reader;
- :mod:`~affinity.workflow.rules`: the body of each rule of ``rules/*.smk``;
- :mod:`~affinity.workflow.session`: one pinbench Snakemake per folder, stale locks cleared.
"""
