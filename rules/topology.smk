rule topology:
    output:
        f"{RESULTS}/{{machine}}/topology.xml",
    params:
        spec=lambda wildcards: MACHINES[wildcards.machine].spec,
    log:
        f"{RESULTS}/{{machine}}/logs/topology.log",
    shell:
        "{PY} -m affinity.topology {params.spec:q} --out {output} > {log} 2>&1"
