# A measured machine's placements cell by cell, each as soon as its trace is done (before builds
# still waiting), so that the first measurement does not wait for them all.
rule placement:
    input:
        unpack(placement_inputs),
    output:
        cell_placements("{machine}", "{bench}", "{n}"),
    wildcard_constraints:
        machine=rule_bodies.alternatives(m.name for m in MEASURED),
    priority: 1
    params:
        seed=random_seed,
        repetitions=config["repetitions"],
        strategies=STRATEGIES,
        oversubscribe=config["oversubscribe"],
        placements=config["placements"],
        untraced=UNTRACED,
    log:
        LAYOUT.log("{machine}", "placement", "{bench}", "{n}"),
    benchmark:
        LAYOUT.timing("place", "{machine}", "{bench}", "{n}")
    run:
        rule_bodies.place(input, wildcards, params, output, log[0])


# A measured machine's placements, readable (`pinbench plan`).
rule plan:
    input:
        lambda wildcards: machine_placements(wildcards.machine),
    output:
        LAYOUT.plan("{machine}"),
    wildcard_constraints:
        machine=rule_bodies.alternatives(m.name for m in MEASURED),
    log:
        LAYOUT.log("{machine}", "plan"),
    run:
        rule_bodies.write_plan(input, output[0])


# A planned machine's placements, every cell in one job, and its plan: a job per cell would
# make Snakemake's scheduling grow with the square of the cells (each round weighs every
# ready job), and a plan job with one input per placement file re-checked every round.
rule place_planned:
    input:
        unpack(planned_inputs),
    output:
        plan=LAYOUT.plan("{machine}"),
        placements=directory(LAYOUT.placements("{machine}")),
    wildcard_constraints:
        machine=rule_bodies.alternatives(m.name for m in PLANNED),
    priority: 1
    params:
        cells=planned_cells,
        repetitions=config["repetitions"],
        strategies=STRATEGIES,
        oversubscribe=config["oversubscribe"],
        placements=config["placements"],
        traced=TRACING,
        untraced=UNTRACED,
    log:
        LAYOUT.log("{machine}", "placement"),
    benchmark:
        LAYOUT.timing("place", "{machine}")
    run:
        rule_bodies.place_planned(input.topology, wildcards.machine, params, LAYOUT, output.plan)
