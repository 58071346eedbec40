# Each cell's placements as soon as its trace is done (before builds still waiting), so that
# the first measurement does not wait for them all.
rule placement:
    input:
        unpack(placement_inputs),
    output:
        cell_placements("{machine}", "{bench}", "{n}"),
    priority: 1
    params:
        seed=random_seed,
        repetitions=config["repetitions"],
        strategies=STRATEGIES,
        oversubscribe=config["oversubscribe"],
        placements=config["placements"],
    log:
        LAYOUT.log("{machine}", "placement", "{bench}", "{n}"),
    benchmark:
        LAYOUT.timing("place", "{machine}", "{bench}", "{n}")
    run:
        rule_bodies.place(input, wildcards, params, output, log[0])


rule plan:
    input:
        lambda wildcards: machine_placements(wildcards.machine),
    output:
        LAYOUT.plan("{machine}"),
    log:
        LAYOUT.log("{machine}", "plan"),
    run:
        rule_bodies.write_plan(input, output[0])
