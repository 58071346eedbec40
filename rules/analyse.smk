rule runs_table:
    input:
        measured_runs(),
    output:
        table=f"{RESULTS}/runs.csv",
        summary=f"{RESULTS}/summary.txt",
    log:
        f"{RESULTS}/logs/runs_table.log",
    run:
        stats_runs.collect(input, Path(output.table), Path(output.summary))


# The Speedup-Test of every cell against the baseline, and the study's summary tables.
rule analyse:
    input:
        f"{RESULTS}/runs.csv",
    output:
        cells=f"{RESULTS}/stats/cells.csv",
        summary=f"{RESULTS}/stats/summary.csv",
        text=f"{RESULTS}/stats/summary.txt",
        json=f"{RESULTS}/stats/stats.json",
    params:
        options=lambda wildcards: workflow_support.analyse_options(config),
    log:
        f"{RESULTS}/logs/analyse.log",
    run:
        stats_tables.analyse(Path(input[0]), Path(output.cells).parent, **params.options)
