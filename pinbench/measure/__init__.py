"""The measure stage: one job runs every strategy x repetition of a cell (``python -m pinbench.measure``).

- :mod:`~pinbench.measure.settings`: a job's settings, as the workflow hands them over (JSON);
- :mod:`~pinbench.measure.job`: the job, its run order, one run judged and recorded, resumption;
- :mod:`~pinbench.measure.spawn`: start one run in a fixed environment and time it;
- :mod:`~pinbench.measure.launcher`: the C launcher (``launcher.c``, built by ``pinbench
  setup``: :mod:`pinbench.native`) that starts and times each run in a vfork-style child,
  beside the measuring process;
- :mod:`~pinbench.measure.verify`: each thread's reported binding (at one thread, also the
  kernel's at exit) against the plan, of the program or of the OpenMP processes below a wrapper;
- :mod:`~pinbench.measure.rebind`: a placement per parallel region: the re-binding shim's
  plan (``rebind.c``, preloaded), its record checked against the plan, the cost of a re-binding;
- :mod:`~pinbench.measure.tool_files`: the files a library loaded into a run writes for it;
- :mod:`~pinbench.measure.workdir`: the folder each run starts in (a job's scratch folder);
- :mod:`~pinbench.measure.journal`: the fsynced journal, so a killed job loses nothing;
- :mod:`~pinbench.measure.legacy`: journals of format 1, matched against the job that opens them;
- :mod:`~pinbench.measure.lock`: the machine-wide lock, one measurement at a time;
- :mod:`~pinbench.measure.environment`: the machine and toolchain, recorded for the report;
- :mod:`~pinbench.measure.cli`: the measuring process (its arguments:
  :mod:`pinbench.commands.measure`).

The measuring process imports nothing from :mod:`pinbench.graph` or :mod:`pinbench.place`:
it reads placement files and writes runs through :mod:`pinbench.results`.
"""
