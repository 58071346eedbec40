# Each machine's tree: read here (auto, XML, synthetic), or by its SLURM node (PLACES).
for place in PLACES:

    rule:
        name:
            f"topology{place.suffix}"
        output:
            LAYOUT.topology("{machine}"),
        wildcard_constraints:
            machine=place.machines,
        localrule: place.local
        resources:
            **place.resources(),
        log:
            LAYOUT.log("{machine}", "topology"),
        benchmark:
            LAYOUT.timing("topology", "{machine}")
        run:
            rule_bodies.save_topology(MACHINES[wildcards.machine], output[0], log[0])
