# pinbench: thread-placement campaigns with rigorous statistics.
# This file is a table of contents; the stages live in rules/, the logic in affinity/ and stats/.
from snakemake.utils import min_version

min_version("9.0")


include: "rules/common.smk"


# Placements, statistics and the report run where Snakemake runs, also on a cluster.
localrules:
    all,
    placement,
    plan,
    runs_table,
    analyse,
    explain,
    models,
    report,


include: "rules/topology.smk"
include: "rules/build.smk"
include: "rules/trace.smk"
include: "rules/placement.smk"
include: "rules/measure.smk"
include: "rules/analyse.smk"
include: "rules/models.smk"
include: "rules/report.smk"


rule all:
    input:
        all_targets(),
    default_target: True


onstart:
    print_system_checks()


onsuccess:
    print_summaries()
