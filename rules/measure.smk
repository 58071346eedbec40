# One job per (machine, benchmark, threads): every strategy x repetition, one run at a time.
# It takes every core so that nothing else of the workflow runs beside it. The launcher is a
# process of its own: it holds a machine-wide lock and journals each finished run, so a killed
# Snakemake neither loses runs nor lets a second measurement overlap an orphaned one.
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
    run:
        shell(
            "{PY} -m affinity.measure --spec {params.spec:q} --placements {input.placements}"
            " --journal {params.journal} --out {output} --log {log}"
        )
