rule placement:
    input:
        f"{RESULTS}/{{machine}}/topology.xml",
    output:
        expand(
            f"{RESULTS}/{{{{machine}}}}/placements/{{{{bench}}}}/t{{{{n}}}}/{{strategy}}.json",
            strategy=STRATEGIES,
        ),
    params:
        strategies=STRATEGIES,
        seed=random_seed,
        repetitions=config["repetitions"],
        outdir=lambda wildcards: f"{RESULTS}/{wildcards.machine}/placements/{wildcards.bench}/t{wildcards.n}",
    log:
        f"{RESULTS}/{{machine}}/logs/placement/{{bench}}/t{{n}}.log",
    shell:
        "{PY} -m affinity.placement --topology {input} --threads {wildcards.n}"
        " --strategies {params.strategies} --seed {params.seed}"
        " --repetitions {params.repetitions} --outdir {params.outdir} > {log} 2>&1"


rule plan:
    input:
        lambda wildcards: [
            f
            for bench in config["benchmarks"]
            for n in MACHINES[wildcards.machine].threads
            for f in expand(
                f"{RESULTS}/{wildcards.machine}/placements/{bench}/t{n}/{{strategy}}.json",
                strategy=STRATEGIES,
            )
        ],
    output:
        f"{RESULTS}/{{machine}}/plan.txt",
    log:
        f"{RESULTS}/{{machine}}/logs/plan.log",
    run:
        workflow_support.write_plan(input, output[0])
