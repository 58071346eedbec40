# Affinity matrices for the graph-based strategies: the traced variant of each benchmark runs
# once per thread count under the campaign's tracer. Tracing is not a measurement: it may run
# beside builds, never beside a measurement (which takes every core).
rule build_traced:
    input:
        build_sources,
    output:
        f"{RESULTS}/{{machine}}/bin/{{bench}}.traced",
    params:
        cmd=lambda wildcards, output: workflow_support.traced_build_command(
            config, wildcards.bench, output[0]
        ),
    log:
        f"{RESULTS}/{{machine}}/logs/build/{{bench}}.traced.log",
    run:
        shell("({params.cmd}) > {log} 2>&1 || {{ tail -n 20 {log} >&2; exit 1; }}")


rule trace:
    input:
        traced_binary,
    output:
        matrix=f"{RESULTS}/{{machine}}/affinity/{{bench}}/t{{n}}.csv",
        sidecar=f"{RESULTS}/{{machine}}/affinity/{{bench}}/t{{n}}.json",
    params:
        tracing=config["tracing"],
    log:
        f"{RESULTS}/{{machine}}/logs/trace/{{bench}}/t{{n}}.log",
    run:
        workflow_support.trace_cell(config, wildcards, input[0], output.matrix, log[0])
