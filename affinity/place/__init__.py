"""The place stage: where each thread runs, for every strategy (``python -m affinity.place``).

- :mod:`~affinity.place.registry`: every strategy name and the function that places for it;
- :mod:`~affinity.place.domains`: placeable PUs, scatter order, slots, sockets, sharing domains;
- :mod:`~affinity.place.independent`: ``compact``, ``scatter``, ``random`` (no matrix needed);
- :mod:`~affinity.place.study`: the pinning study's ``lp-compact``, ``lp-scatter``, ``gp``,
  ``lpgp``, ``gplp`` (Mazouz, Touati, Barthou, section 3.2);
- :mod:`~affinity.place.hierarchical`: every sharing level of the tree, refined on J;
- :mod:`~affinity.place.record`: a strategy's placement record, with its J; writing them;
- :mod:`~affinity.place.cli`: the command line.
"""
