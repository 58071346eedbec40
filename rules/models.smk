# Scalability models of run time against threads per strategy, by Extra-P's command line in
# its own environment (.venv-extrap); only when a measured machine has enough thread counts.
rule models:
    input:
        LAYOUT.all_runs,
    output:
        table=LAYOUT.models,
        summary=LAYOUT.models_text,
    params:
        horizon=max(n for m in MACHINES.values() for n in m.threads),
        pus={m.name: m.pus for m in MEASURED},
        extrap=str(stats_models.extrap_path(Path(workflow.basedir))),
    log:
        LAYOUT.log(None, "models"),
    run:
        rule_bodies.models(input[0], output.table, output.summary, params.extrap,
                           params.horizon, params.pus, log[0])
