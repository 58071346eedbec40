# Affinity matrices for the graph-based strategies: the traced variant of each benchmark runs
# once per thread count under the campaign's tracer. Tracing is not a measurement: it may run
# beside builds, never beside a measurement (which takes every core).
rule build_traced:
    input:
        build_sources,
    output:
        LAYOUT.binary("{machine}", "{bench}", traced=True),
    params:
        cmd=lambda wildcards, output: rule_bodies.traced_build_command(
            config, wildcards.bench, output[0]
        ),
    log:
        LAYOUT.log("{machine}", "build", "{bench}.traced"),
    run:
        shell("({params.cmd}) > {log} 2>&1 || {{ tail -n 20 {log} >&2; exit 1; }}")


rule trace:
    input:
        traced_binary,
    output:
        matrix=LAYOUT.matrix("{machine}", "{bench}", "{n}"),
        sidecar=LAYOUT.sidecar("{machine}", "{bench}", "{n}"),
    params:
        tracing=config["tracing"],
    log:
        LAYOUT.log("{machine}", "trace", "{bench}", "{n}"),
    run:
        rule_bodies.trace_cell(config, wildcards, input[0], output.matrix, log[0])
