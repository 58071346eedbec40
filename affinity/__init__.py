"""pinbench affinity: hwloc topology, placement strategies, the pinned launcher."""
