rule topology:
    output:
        LAYOUT.topology("{machine}"),
    log:
        LAYOUT.log("{machine}", "topology"),
    benchmark:
        LAYOUT.timing("topology", "{machine}")
    run:
        topology.save(MACHINES[wildcards.machine].topology, Path(output[0]), Path(log[0]))
