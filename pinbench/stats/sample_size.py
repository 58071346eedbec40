"""The smallest sample the statistics take: a module of its own, without SciPy, so that
reading a campaign (which refuses fewer repetitions) does not import the Speedup-Test."""

#: The least run times per sample of the Speedup-Test (:mod:`pinbench.stats.speeduptest`): its
#: Shapiro-Wilk test of normality is not defined on fewer.
MIN_N = 3
