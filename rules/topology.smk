rule topology:
    output:
        f"{RESULTS}/{{machine}}/topology.xml",
    log:
        f"{RESULTS}/{{machine}}/logs/topology.log",
    run:
        topology.save(MACHINES[wildcards.machine].topology, Path(output[0]), Path(log[0]))
