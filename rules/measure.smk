# One job per (machine, benchmark, threads): every strategy x repetition, one run at a time.
# It takes every core so that nothing else of the workflow runs beside it; the launcher also
# holds a machine-wide lock and journals each finished run (see affinity/measure.py).
rule measure:
    input:
        binary=f"{RESULTS}/{{machine}}/bin/{{bench}}",
        placements=placement_files,
    output:
        f"{RESULTS}/{{machine}}/runs/{{bench}}/t{{n}}.csv",
    params:
        spec=lambda wildcards, input: workflow_support.measure_spec(
            config, wildcards.machine, wildcards.bench, int(wildcards.n), input.binary
        ),
        journal=f"{RESULTS}/{{machine}}/journal/{{bench}}/t{{n}}.jsonl",
    threads: workflow.cores
    log:
        f"{RESULTS}/{{machine}}/logs/measure/{{bench}}/t{{n}}.log",
    shell:
        "{PY} -m affinity.measure --spec {params.spec:q} --placements {input.placements}"
        " --journal {params.journal} --out {output} --log {log}"
