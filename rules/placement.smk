rule placement:
    input:
        unpack(placement_inputs),
    output:
        expand(
            f"{RESULTS}/{{{{machine}}}}/placements/{{{{bench}}}}/t{{{{n}}}}/{{strategy}}.json",
            strategy=STRATEGIES,
        ),
    params:
        seed=random_seed,
        repetitions=config["repetitions"],
        strategies=STRATEGIES,
    log:
        f"{RESULTS}/{{machine}}/logs/placement/{{bench}}/t{{n}}.log",
    run:
        workflow_support.place(input, wildcards, params, output[0], log[0])


rule plan:
    input:
        lambda wildcards: [f for f in all_placements() if f.startswith(f"{RESULTS}/{wildcards.machine}/")],
    output:
        f"{RESULTS}/{{machine}}/plan.txt",
    log:
        f"{RESULTS}/{{machine}}/logs/plan.log",
    run:
        workflow_support.write_plan(input, output[0])
