rule environment:
    input:
        lambda wildcards: f"{RESULTS}/{wildcards.machine}/bin/{next(iter(config['benchmarks']))}",
    output:
        f"{RESULTS}/{{machine}}/environment.json",
    params:
        compiler=config["compiler"]["cc"],
    log:
        f"{RESULTS}/{{machine}}/logs/environment.log",
    run:
        environment.write(params.compiler, input[0], Path(output[0]))


# The HTML report reads results only: rebuilding it never re-runs a measurement.
rule report:
    input:
        report_inputs(),
    output:
        report(
            directory(f"{RESULTS}/report"),
            htmlindex="index.html",
            category="Campaign report",
        ),
    params:
        measured=[m.name for m in MEASURED],
    log:
        f"{RESULTS}/logs/report.log",
    run:
        html_report.build_report(Path(RESULTS), config, params.measured, Path(output[0]))
