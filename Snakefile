# Plain `snakemake` in this repository runs pinbench's workflow, which lives in the package
# (pinbench/workflow/Snakefile) so that an installed pinbench carries it; `pinbench run` is the
# usual way in. Relative paths of a campaign are read from this directory.
include: "pinbench/workflow/Snakefile"


# An included file's default target is not the caller's: this one is all of it.
rule campaign:
    input:
        rules.all.input,
    localrule: True
    default_target: True
