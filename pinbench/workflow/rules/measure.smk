# One job per (machine, benchmark, threads): every strategy x repetition, one run at a time.
# It takes every core (here) or the whole node (SLURM, --exclusive), so that nothing else of
# the workflow runs beside it. The launcher is a process of its own: it holds a machine-wide
# lock and journals each finished run, so a killed Snakemake (or a cancelled SLURM job)
# neither loses runs nor lets a second measurement overlap an orphaned one.
for place in PLACES:

    rule:
        name:
            f"measure{place.suffix}"
        input:
            binary=LAYOUT.binary("{machine}", "{bench}"),
            placements=placement_files,
            topology=LAYOUT.topology("{machine}"),
            report=report_placements,
        output:
            runs=LAYOUT.runs("{machine}", "{bench}", "{n}"),
            **EXPLAINED_OUTPUT,
        wildcard_constraints:
            machine=place.machines,
        localrule: place.local
        resources:
            **place.resources(exclusive=True),
        params:
            spec=lambda wildcards, input: jobsettings.measure_spec(
                config,
                wildcards.machine,
                wildcards.bench,
                int(wildcards.n),
                input.binary,
                input.placements,
                input.topology,
                MACHINES[wildcards.machine].threads,
                report_cells(),
            ),
            settings=lambda wildcards: rule_settings.measure(
                config,
                wildcards.machine,
                wildcards.bench,
                int(wildcards.n),
                LAYOUT.binary(wildcards.machine, wildcards.bench),
                MACHINES[wildcards.machine].threads,
            ),
            explained=explained_option,
            command=lambda wildcards, input: jobsettings.run_command(
                config, wildcards.bench, input.binary, int(wildcards.n)
            ),
            journal=LAYOUT.journal("{machine}", "{bench}", "{n}"),
            outputs=LAYOUT.outputs("{machine}", "{bench}", "{n}"),
            account=LAYOUT.account("{machine}", "{bench}", "{n}"),
        threads: place.threads()
        message:
            "measure {wildcards.bench} with {wildcards.n} threads: {params.command}"
        log:
            LAYOUT.log("{machine}", "measure", "{bench}", "{n}"),
        run:
            spec = jobsettings.with_ompt_tool(params.spec, MACHINES[wildcards.machine])
            cells = jobsettings.cell_names(measure_jobs())  # for the campaign's time left
            # the stop signals ignored until the measuring process handles them: Python's own
            # start-up would end it with a traceback (SIGINT) or silently (SIGTERM); Snakemake
            # passes a stop on once it is handled (pinbench.measure.interrupt)
            shell(
                "trap '' INT TERM HUP; exec {PY} -m pinbench.measure --spec {spec:q}"
                " --placements {input.placements}"
                " --journal {params.journal} --out {output.runs} --log {log}"
                " --outputs {params.outputs} {params.explained}"
                " --campaign-root {LAYOUT.root} --cells {cells}"
                " --account {params.account}"
            )
