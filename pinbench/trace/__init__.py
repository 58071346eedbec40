"""The trace stage: which threads share which cache lines (``pinbench trace``).

- :mod:`~pinbench.trace.build`: a traced build's flags, the tracers ``pinbench setup`` built;
- :mod:`~pinbench.trace.run`: running a program under one, checking and annotating its matrix.

The tracers themselves are C and C++ in ``pintools/``; see ``pintools/README.md``.
"""
