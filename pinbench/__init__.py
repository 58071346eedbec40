"""pinbench: thread-placement campaigns on OpenMP programs, with rigorous statistics.

Subpackages by stage, from the machine's tree to the report:

- :mod:`pinbench.topology`: the machine's processing-unit tree, from hwloc (every stage reads it);
- :mod:`pinbench.trace`: which threads share which cache lines (the tracers, ``trace/pintools``);
- :mod:`pinbench.graph`: affinity matrices and the algorithms on them (no strategy knowledge);
- :mod:`pinbench.place`: every placement strategy, and the placement records;
- :mod:`pinbench.measure`: the measuring process: runs, verification, journal, machine lock;
- :mod:`pinbench.results`: where each file lives, and the files two stages share;
- :mod:`pinbench.stats`: the Speedup-Test, verdicts, the study's tables, explanations, models;
- :mod:`pinbench.report`: the HTML campaign report and its exports;
- :mod:`pinbench.workflow`: the campaign file, the Snakemake workflow and what its rules call;
- :mod:`pinbench.cli`: the ``pinbench`` command; :mod:`pinbench.commands`: each of its commands;
- :mod:`pinbench.errors`: the user-facing errors, one family.
"""
__version__ = "0.5.0"
