"""The workflow's side of the packages: the campaign file and what the Snakefile calls.

- :mod:`~pinbench.workflow.campaign`: a campaign file validated, its machines resolved,
  its build and run commands;
- :mod:`~pinbench.workflow.config_file`: a campaign file read strictly (YAML syntax, size,
  encoding, duplicate keys), each problem one line;
- :mod:`~pinbench.workflow.rule_bodies`: the body of each rule of ``rules/*.smk``;
- :mod:`~pinbench.workflow.rule_settings`: what the jobs of each rule depend on in the
  campaign, as params Snakemake compares (a change re-runs them);
- :mod:`~pinbench.workflow.snakemake_adapter`: what the Snakefile relies on inside Snakemake
  (stale locks cleared, the exit not kept waiting, a call that had nothing to do).
"""
