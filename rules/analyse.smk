rule runs_table:
    input:
        measured_runs(),
    output:
        table=f"{RESULTS}/runs.csv",
        summary=f"{RESULTS}/summary.txt",
    log:
        f"{RESULTS}/logs/runs_table.log",
    run:
        from stats.runs import collect

        collect(input, Path(output.table), Path(output.summary))
