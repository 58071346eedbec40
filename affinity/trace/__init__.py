"""The trace stage: which threads share which cache lines (``python -m affinity.trace``).

- :mod:`~affinity.trace.build`: building the tracers (tsan runtime, Valgrind tool, Pin tool);
- :mod:`~affinity.trace.run`: running a program under one, checking and annotating its matrix;
- :mod:`~affinity.trace.cli`: the command line.

The tracers themselves are C and C++ in ``pintools/``; see ``pintools/README.md``.
"""
