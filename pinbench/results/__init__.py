"""The results folder: where every file of a campaign lives, and the files two stages share.

- :mod:`~pinbench.results.layout`: the paths, ``results/<campaign>/...`` (the one home of
  the layout: the rules, the plan and the report take their paths from it);
- :mod:`~pinbench.results.placements`: placement files and their typed record (place ->
  measure, plan, report);
- :mod:`~pinbench.results.runs`: the runs table and its typed record (measure -> stats, report);
- :mod:`~pinbench.results.explained`: the explained runs table (measure -> stats);
- :mod:`~pinbench.results.journals`: a measurement job's journal read back (the progress
  lines, the journals set aside, ``pinbench remeasure``);
- :mod:`~pinbench.results.rows`: a table's rows as typed records, one dataclass per table;
- :mod:`~pinbench.results.formats`: the version of every file written and read back, and the
  migration of each older version;
- :mod:`~pinbench.results.stale`: how a file set aside (a journal of another measurement) and
  its note are named.

Nothing here imports numpy or any placement algorithm: the measuring process reads
placement files and writes runs through these modules alone.
"""
