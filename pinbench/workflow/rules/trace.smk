# Affinity matrices for the graph-based strategies: the traced variant of each benchmark runs
# once per thread count under the campaign's tracer, on the measured machine (PLACES). Tracing
# is not a measurement: it may run beside builds, never beside a measurement (which takes every
# core). A traced build or a trace that fails is recorded, not failed (pinbench/results/traces.py):
# the strategies that need no matrix are still placed and measured.
for place in PLACES:

    rule:
        name:
            f"build_traced{place.suffix}"
        input:
            build_sources,
        output:
            LAYOUT.binary("{machine}", "{bench}", traced=True),
        wildcard_constraints:
            machine=place.machines,
        localrule: place.local
        resources:
            **place.resources(),
        params:
            cmd=lambda wildcards, output: rule_bodies.traced_build_command(
                config, wildcards.bench, output[0]
            ),
            settings=lambda wildcards: rule_settings.traced_build(
                config,
                wildcards.bench,
                LAYOUT.binary(wildcards.machine, wildcards.bench, traced=True),
                PROJECT,
            ),
        message:
            "build {wildcards.bench} for tracing: {params.cmd}"
        log:
            LAYOUT.log("{machine}", "build", "{bench}.traced"),
        benchmark:
            LAYOUT.timing("build", "{machine}", "{bench}.traced")
        run:
            with rule_bodies.building(
                config, MACHINES[wildcards.machine], wildcards, output[0], traced=True
            ):
                shell("({params.cmd}) > {log} 2>&1 || rm -f {output}")

    rule:
        name:
            f"trace{place.suffix}"
        input:
            traced_binary,
        output:
            matrix=LAYOUT.matrix("{machine}", "{bench}", "{n}"),
            sidecar=LAYOUT.sidecar("{machine}", "{bench}", "{n}"),
        wildcard_constraints:
            machine=place.machines,
        localrule: place.local
        resources:
            **place.resources(),
        params:
            tracing=config["tracing"],
            settings=lambda wildcards: rule_settings.trace(
                config, wildcards.bench, int(wildcards.n), traced_binary(wildcards)
            ),
        message:
            "trace {wildcards.bench} with {wildcards.n} threads ({params.tracing[tracer]})"
        log:
            LAYOUT.log("{machine}", "trace", "{bench}", "{n}"),
        benchmark:
            LAYOUT.timing("trace", "{machine}", "{bench}", "{n}")
        run:
            places.check_on_node(MACHINES[wildcards.machine])
            tracecache.trace_cell(config, wildcards, input[0], output.matrix, log[0])
