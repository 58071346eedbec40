"""pinbench reports: the self-contained HTML campaign report and its figures."""
