# The campaign's runs table (every measurement job's, concatenated) and a summary per cell.
rule runs_table:
    input:
        measured_runs(),
    output:
        table=LAYOUT.all_runs,
        summary=LAYOUT.cells_summary,
    log:
        LAYOUT.log(None, "runs_table"),
    run:
        rule_bodies.runs_table(input, output.table, output.summary)


# The Speedup-Test of every cell against the baseline, and the study's summary tables.
rule analyse:
    input:
        LAYOUT.all_runs,
    output:
        cells=LAYOUT.stats("cells.csv"),
        summary=LAYOUT.stats("summary.csv"),
        text=LAYOUT.stats("summary.txt"),
        json=LAYOUT.stats("stats.json"),
    params:
        options=lambda wildcards: rule_bodies.analyse_options(config),
    log:
        LAYOUT.log(None, "analyse"),
    run:
        stats_tables.analyse(
            Path(input[0]),
            *(Path(path) for path in (output.cells, output.summary, output.text, output.json)),
            **params.options,
        )
