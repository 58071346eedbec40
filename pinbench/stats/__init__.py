"""pinbench statistics: per-cell descriptions, the Speedup-Test, the study's summary tables.

- :mod:`pinbench.stats.cells`: one cell's runs described (the one per-cell description);
- :mod:`pinbench.stats.speeduptest`: the Speedup-Test of Touati, Worms and Briais;
- :mod:`pinbench.stats.proportion`: the interval of "a of b benchmarks are faster";
- :mod:`pinbench.stats.tables`: every cell against the baseline, and Tables 1-3 of the pinning
  study;
- :mod:`pinbench.stats.verdicts`: the headline verdict of each cell and over the whole report,
  by :mod:`pinbench.stats.location`'s test; what a comparison could detect
  (:mod:`pinbench.stats.detectable`) and reach (:mod:`pinbench.stats.attainable`); drift along
  the run order (:mod:`pinbench.stats.drift`); their error rates, simulated
  (:mod:`pinbench.stats.simulate`).
"""
