# Each machine's tree: read here (auto, XML, synthetic), or by its SLURM node (PLACES). First
# of the jobs ready at the start (Snakemake would take it last: it has no input), so that each
# cell's placements can follow its trace while the other builds and traces run.
for place in PLACES:

    rule:
        name:
            f"topology{place.suffix}"
        output:
            LAYOUT.topology("{machine}"),
        wildcard_constraints:
            machine=place.machines,
        localrule: place.local
        priority: 1
        resources:
            **place.resources(),
        log:
            LAYOUT.log("{machine}", "topology"),
        benchmark:
            LAYOUT.timing("topology", "{machine}")
        run:
            rule_bodies.save_topology(MACHINES[wildcards.machine], output[0], log[0])
