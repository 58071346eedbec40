# The campaign's runs table (every measurement job's, concatenated) and a summary per cell.
rule runs_table:
    input:
        measured_runs(),
    output:
        table=LAYOUT.all_runs,
        summary=LAYOUT.cells_summary,
    log:
        LAYOUT.log(None, "runs_table"),
    benchmark:
        LAYOUT.timing("analyse", "runs_table")
    run:
        rule_bodies.runs_table(input, output.table, output.summary)


# The study's Speedup-Test of every cell and its Tables 1-3; the headline verdicts with
# family-wise error control, identical placements merged by the machines' symmetries; drift.
rule analyse:
    input:
        runs=LAYOUT.all_runs,
        topologies=[LAYOUT.topology(m.name) for m in MEASURED],
    output:
        **{kind: LAYOUT.stats(kind) for kind in STATS_FILES},
    params:
        options=lambda wildcards: rule_bodies.analyse_options(config),
        format=stats_analysis.FORMAT,
    log:
        LAYOUT.log(None, "analyse"),
    benchmark:
        LAYOUT.timing("analyse", "stats")
    run:
        rule_bodies.analyse(input, output, params.options, [m.name for m in MEASURED])


# Idle time, work inflation and runtime waits per strategy, from the explained runs (OMPT),
# and the reading of each timing verdict they give (or why they give none).
rule explain:
    input:
        explained=explained_runs(),
        runs=LAYOUT.all_runs,
        verdicts=LAYOUT.stats("verdicts"),
    output:
        table=LAYOUT.explain_table,
        readings=LAYOUT.explain_text,
    params:
        baseline=config["baseline"],
        confidence=config["confidence"],
        format=stats_explain.FORMAT,
    log:
        LAYOUT.log(None, "explain"),
    benchmark:
        LAYOUT.timing("analyse", "explain")
    run:
        rule_bodies.explain(input, output, params.baseline, params.confidence)


# Compilers side by side (a campaign's compilers): each compiler's cells against the first's.
rule runtimes:
    input:
        LAYOUT.all_runs,
    output:
        table=LAYOUT.stats("runtimes"),
        text=LAYOUT.runtimes_text,
    params:
        compiled=campaign.compiled(config),
        compilers=list(config["compilers"]),
        alpha=1 - config["confidence"],
    log:
        LAYOUT.log(None, "runtimes"),
    benchmark:
        LAYOUT.timing("analyse", "runtimes")
    run:
        rule_bodies.runtimes(input[0], output, params)
