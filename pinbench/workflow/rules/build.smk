# Builds that share a source tree run one at a time (pinbench/workflow/building.py), on the
# measured machine (PLACES).
for place in PLACES:

    rule:
        name:
            f"build{place.suffix}"
        input:
            build_sources,
        output:
            LAYOUT.binary("{machine}", "{bench}"),
        wildcard_constraints:
            machine=place.machines,
        localrule: place.local
        resources:
            **place.resources(),
        params:
            cmd=lambda wildcards, output: campaign.build_command(
                config, wildcards.bench, output[0]
            ),
            settings=lambda wildcards: rule_settings.build(
                config, wildcards.bench, LAYOUT.binary(wildcards.machine, wildcards.bench), PROJECT
            ),
        message:
            "build {wildcards.bench}: {params.cmd}"
        log:
            LAYOUT.log("{machine}", "build", "{bench}"),
        benchmark:
            LAYOUT.timing("build", "{machine}", "{bench}")
        run:
            with rule_bodies.building(
                config, MACHINES[wildcards.machine], wildcards, output[0]
            ):
                shell("({params.cmd}) > {log} 2>&1 || {{ tail -n 20 {log} >&2; exit 1; }}")
