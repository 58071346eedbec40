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
    message:
        "build {wildcards.bench} for tracing: {params.cmd}"
    log:
        LAYOUT.log("{machine}", "build", "{bench}.traced"),
    benchmark:
        LAYOUT.timing("build", "{machine}", "{bench}.traced")
    run:
        with rule_bodies.building(config, wildcards, output[0], traced=True):
            shell("({params.cmd}) > {log} 2>&1 || {{ tail -n 20 {log} >&2; exit 1; }}")


rule trace:
    input:
        traced_binary,
    output:
        matrix=LAYOUT.matrix("{machine}", "{bench}", "{n}"),
        sidecar=LAYOUT.sidecar("{machine}", "{bench}", "{n}"),
    params:
        tracing=config["tracing"],
    message:
        "trace {wildcards.bench} with {wildcards.n} threads ({params.tracing[tracer]})"
    log:
        LAYOUT.log("{machine}", "trace", "{bench}", "{n}"),
    benchmark:
        LAYOUT.timing("trace", "{machine}", "{bench}", "{n}")
    run:
        rule_bodies.trace_cell(config, wildcards, input[0], output.matrix, log[0])
