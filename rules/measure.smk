# One job per (machine, benchmark, threads): every strategy x repetition, one run at a time.
# It takes every core so that nothing else of the workflow runs beside it. The launcher is a
# process of its own: it holds a machine-wide lock and journals each finished run, so a killed
# Snakemake neither loses runs nor lets a second measurement overlap an orphaned one.
rule measure:
    input:
        binary=LAYOUT.binary("{machine}", "{bench}"),
        placements=placement_files,
        topology=LAYOUT.topology("{machine}"),
    output:
        LAYOUT.runs("{machine}", "{bench}", "{n}"),
    params:
        spec=lambda wildcards, input: rule_bodies.measure_spec(
            config,
            wildcards.machine,
            wildcards.bench,
            int(wildcards.n),
            input.binary,
            input.placements,
            input.topology,
        ),
        command=lambda wildcards, input: rule_bodies.run_command(
            config, wildcards.bench, input.binary, int(wildcards.n)
        ),
        journal=LAYOUT.journal("{machine}", "{bench}", "{n}"),
        outputs=LAYOUT.outputs("{machine}", "{bench}", "{n}"),
    threads: workflow.cores
    message:
        "measure {wildcards.bench} with {wildcards.n} threads: {params.command}"
    log:
        LAYOUT.log("{machine}", "measure", "{bench}", "{n}"),
    benchmark:
        LAYOUT.timing("measure", "{machine}", "{bench}", "{n}")
    run:
        cells = rule_bodies.cell_names(measure_jobs())  # for the campaign's time left
        shell(
            "{PY} -m affinity.measure --spec {params.spec:q} --placements {input.placements}"
            " --journal {params.journal} --out {output} --log {log} --outputs {params.outputs}"
            " --campaign-root {LAYOUT.root} --cells {cells}"
        )
