"""The place stage: where each thread runs, for every strategy (``pinbench place``).

- :mod:`~pinbench.place.registry`: every strategy name and the function that places for it;
- :mod:`~pinbench.place.domains`: placeable PUs, scatter order, slots, sockets, sharing domains;
- :mod:`~pinbench.place.independent`: ``compact``, ``scatter``, ``random`` (no matrix needed);
- :mod:`~pinbench.place.study`: the pinning study's ``lp-compact``, ``lp-scatter``, ``gp``,
  ``lpgp``, ``gplp`` (Mazouz, Touati, Barthou, section 3.2);
- :mod:`~pinbench.place.hierarchical`: every sharing level of the tree, refined on J;
- :mod:`~pinbench.place.record`: a strategy's placement record, with its J; writing them.
"""
