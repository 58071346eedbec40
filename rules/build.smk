rule build:
    input:
        build_sources,
    output:
        f"{RESULTS}/{{machine}}/bin/{{bench}}",
    params:
        cmd=lambda wildcards, output: campaign.build_command(config, wildcards.bench, output[0]),
    log:
        f"{RESULTS}/{{machine}}/logs/build/{{bench}}.log",
    run:
        shell("({params.cmd}) > {log} 2>&1 || {{ tail -n 20 {log} >&2; exit 1; }}")
