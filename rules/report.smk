rule environment:
    input:
        lambda wildcards: LAYOUT.binary(wildcards.machine, next(iter(config["benchmarks"]))),
    output:
        LAYOUT.environment("{machine}"),
    params:
        compiler=config["compiler"]["cc"],
    log:
        LAYOUT.log("{machine}", "environment"),
    benchmark:
        LAYOUT.timing("topology", "{machine}", "environment")
    run:
        environment.write(params.compiler, input[0], Path(output[0]))


# The HTML report reads results only: rebuilding it never re-runs a measurement.
rule report:
    input:
        report_inputs(),
    output:
        report(
            directory(LAYOUT.report),
            htmlindex="index.html",
            category="Campaign report",
        ),
    params:
        measured=[m.name for m in MEASURED],
    log:
        LAYOUT.log(None, "report"),
    benchmark:
        LAYOUT.timing("report")
    run:
        html_report.build_report(LAYOUT, config, params.measured)
