"""When placements can differ at all: flat machines, where every placement of a thread count is
one experiment, and the thread counts at which compact and scatter differ (``levels``)."""
import random

import pytest
from conftest import DATA, preset

from pinbench.place.independent import compact, scatter
from pinbench.place.symmetry import experiment_key, interchangeable, level_counts
from pinbench.topology import load, parse_xml

FLAT = ["Package:1 Core:16 PU:1", "Package:1 L3Cache:1 L2Cache:2 Core:1 PU:1",  # this VM's shape
        "Package:1 Core:1 PU:2", "Package:4 Core:1 PU:1", "Package:1 Core:1 PU:1"]
NOT_FLAT = ["Package:2 Core:4 PU:2", "Package:1 Core:2 PU:2", "Package:1 L2Cache:2 Core:2 PU:1",
            "Package:2 [NUMANode] Core:2 PU:1", preset("nehalem"), preset("ccnuma96")]


def keys(topo, threads: int, draws: int = 40) -> set:
    """The experiments of random placements of ``threads`` threads on distinct PUs."""
    rng = random.Random(threads)
    return {experiment_key(topo, rng.sample(topo.placeable, threads)) for _ in range(draws)}


@pytest.mark.parametrize("spec", FLAT)
def test_on_a_flat_machine_every_placement_of_a_count_is_one_experiment(spec):
    topo = load(spec)
    assert interchangeable(topo)
    assert all(len(keys(topo, n)) == 1 for n in range(1, len(topo.placeable) + 1))
    assert level_counts(topo) == []


@pytest.mark.parametrize("spec", NOT_FLAT)
def test_elsewhere_two_threads_can_share_more_than_two_others(spec):
    topo = load(spec)
    assert not interchangeable(topo)
    assert len(keys(topo, 2)) > 1


def test_a_machine_of_two_kinds_is_not_flat_though_its_tree_is():
    """A P-core's PU and an E-core's, alone placeable: alike in the tree, not in speed."""
    text = (DATA / "topologies" / "hybrid.v2.xml").read_text()
    topo = parse_xml(text, "hybrid", frozenset({0, 12}))
    assert topo.hybrid and not interchangeable(topo)
    assert interchangeable(parse_xml(text, "hybrid", frozenset({12, 13})))  # two E-cores


@pytest.mark.parametrize("spec, counts", [
    ("Package:2 Core:4 PU:2", [2, 8]),  # an SMT core, a socket
    ("Package:2 [NUMANode] L3Cache:2 Core:4 PU:2", [2, 8, 16]),  # a core, an L3, a socket
    (preset("core2"), [2, 4]),  # two cores' L2, a socket
    (preset("ccnuma96"), [2, 6, 24]),  # two cores' L2, a socket's L3, a NUMA node's group
])
def test_levels_are_the_pus_of_one_object_of_each_sharing_level(spec, counts):
    topo = load(spec)
    assert level_counts(topo) == counts
    for n in counts:  # compact fills one object, scatter spreads over them
        assert experiment_key(topo, compact(topo, n)) != experiment_key(topo, scatter(topo, n))

