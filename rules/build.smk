rule build:
    input:
        build_sources,
    output:
        LAYOUT.binary("{machine}", "{bench}"),
    params:
        cmd=lambda wildcards, output: campaign.build_command(config, wildcards.bench, output[0]),
    log:
        LAYOUT.log("{machine}", "build", "{bench}"),
    run:
        shell("({params.cmd}) > {log} 2>&1 || {{ tail -n 20 {log} >&2; exit 1; }}")
