"""pinbench statistics: run tables, per-cell summaries (and, later, the Speedup-Test)."""
