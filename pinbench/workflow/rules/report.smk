# The measured machine and its toolchain, described where it runs (PLACES).
for place in PLACES:

    rule:
        name:
            f"environment{place.suffix}"
        input:
            lambda wildcards: LAYOUT.binary(wildcards.machine, next(iter(config["benchmarks"]))),
        output:
            LAYOUT.environment("{machine}"),
        wildcard_constraints:
            machine=place.machines,
        localrule: place.local
        resources:
            **place.resources(),
        params:
            # the compiler of the binary described (with compilers: the first's)
            compiler=campaign.compiler_of(config, next(iter(config["benchmarks"])))["cc"],
        log:
            LAYOUT.log("{machine}", "environment"),
        benchmark:
            LAYOUT.timing("topology", "{machine}", "environment")
        run:
            rule_bodies.write_environment(
                MACHINES[wildcards.machine], params.compiler, input[0], output[0], CHECKS_SINCE
            )


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
        left_out=[part.line() for part in LEFT_OUT.values()],
    log:
        LAYOUT.log(None, "report"),
    benchmark:
        LAYOUT.timing("report")
    run:
        from pinbench.report import html_report  # here: matplotlib is slow to import

        html_report.build_report(LAYOUT, config, params.measured, params.left_out)
