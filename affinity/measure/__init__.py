"""The measure stage: one job runs every strategy x repetition of a cell (``python -m affinity.measure``).

- :mod:`~affinity.measure.job`: the job, its run order, one run judged and recorded, resumption;
- :mod:`~affinity.measure.spawn`: start one run in a fixed environment and time it;
- :mod:`~affinity.measure.launcher`: the C launcher (``launcher.c``, built on demand) that
  starts and times each run in a vfork-style child, beside the measuring process;
- :mod:`~affinity.measure.verify`: each thread's reported binding (at one thread, also the
  kernel's at exit) against the plan;
- :mod:`~affinity.measure.journal`: the fsynced journal, so a killed job loses nothing;
- :mod:`~affinity.measure.lock`: the machine-wide lock, one measurement at a time;
- :mod:`~affinity.measure.environment`: the machine and toolchain, recorded for the report;
- :mod:`~affinity.measure.cli`: the measuring process's command line.

The measuring process imports nothing from :mod:`affinity.graph` or :mod:`affinity.place`:
it reads placement files and writes runs through :mod:`affinity.results`.
"""
