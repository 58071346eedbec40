# Scalability models of run time against threads per strategy, by Extra-P's command line in
# its own environment (.venv-extrap); only when a measured machine has enough thread counts.
# With explained runs, the idle time, work inflation and waits of the explain table too.
rule models:
    input:
        runs=LAYOUT.all_runs,
        **({"explain": LAYOUT.explain_table} if EXPLAIN else {}),
    output:
        table=LAYOUT.models,
        summary=LAYOUT.models_text,
    params:
        horizon=max(n for m in MACHINES.values() for n in m.threads),
        pus={m.name: m.pus for m in MEASURED},
        extrap=str(stats_models.extrap_path(PROJECT)),
        format=stats_models.FORMAT,
    log:
        LAYOUT.log(None, "models"),
    benchmark:
        LAYOUT.timing("analyse", "models")
    run:
        rule_bodies.models(input.runs, output.table, output.summary, params.extrap,
                           params.horizon, params.pus, log[0],
                           input.explain if EXPLAIN else None)
