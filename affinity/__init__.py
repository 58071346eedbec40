"""pinbench's stages from the machine's tree to the runs table; see the README's design section.

- :mod:`affinity.topology`: the machine's processing-unit tree, from hwloc (every stage reads it);
- :mod:`affinity.trace`: which threads share which cache lines (the tracers);
- :mod:`affinity.graph`: affinity matrices and the algorithms on them (no strategy knowledge);
- :mod:`affinity.place`: every placement strategy, and the placement records;
- :mod:`affinity.measure`: the measuring process: runs, verification, journal, machine lock;
- :mod:`affinity.results`: where each file lives, and the files two stages share;
- :mod:`affinity.workflow`: the campaign file and what the Snakefile's rules call;
- :mod:`affinity.seeding`: reproducible seeds derived from the campaign's.
"""
