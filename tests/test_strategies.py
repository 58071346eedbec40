"""compact and scatter against hand-worked placements on the study's machines and on restricted
machines; random."""
import json

import pytest
from conftest import preset

from pinbench.cli import main as pinbench
from pinbench.place import independent
from pinbench.place.domains import PlacementError
from pinbench.place.record import make_placement
from pinbench.results.placements import Placement, shared_levels
from pinbench.topology import load, parse_xml, topology_xml

NEHALEM_CONSECUTIVE = ("Package:2 [NUMANode(memory=12GiB)] L3Cache:1(size=8MiB) "
                       "L2Cache:4(size=256KiB) L1dCache:1(size=32KiB) Core:1 PU:1")


@pytest.fixture(scope="module")
def machines():
    return {name: load(preset(name)) for name in ("core2", "nehalem", "ccnuma96")}


# Core2 numbering (lstopo -p): socket 0 holds L2 {0,4} and L2 {2,6}; socket 1 L2 {1,5} and {3,7}.
# Nehalem: socket 0 holds PUs 0 2 4 6, socket 1 holds 1 3 5 7.
@pytest.mark.parametrize("name, strategy, threads, expected", [
    ("core2", "compact", 8, [0, 4, 2, 6, 1, 5, 3, 7]),
    ("core2", "compact", 2, [0, 4]),            # two cores under one L2
    ("core2", "scatter", 8, [0, 1, 2, 3, 4, 5, 6, 7]),
    ("core2", "scatter", 4, [0, 1, 2, 3]),      # socket 0 L2 a, socket 1 L2 a, socket 0 L2 b, ...
    ("nehalem", "compact", 8, [0, 2, 4, 6, 1, 3, 5, 7]),
    ("nehalem", "compact", 4, [0, 2, 4, 6]),    # one whole socket
    ("nehalem", "scatter", 8, [0, 1, 2, 3, 4, 5, 6, 7]),
    ("nehalem", "scatter", 3, [0, 1, 2]),
    ("ccnuma96", "compact", 16, list(range(16))),
    # group i mod 4 (24 PUs each), then socket (6 PUs each), then L2 pair, then core
    ("ccnuma96", "scatter", 16, [0, 24, 48, 72, 6, 30, 54, 78, 12, 36, 60, 84, 18, 42, 66, 90]),
])
def test_hand_worked_placements(machines, name, strategy, threads, expected):
    assert getattr(independent, strategy)(machines[name], threads) == expected


def test_scatter_on_96_cores_follows_the_tree(machines):
    expected = [(i % 4) * 24 + (i // 4 % 4) * 6 + (i // 16 % 3) * 2 + (i // 48) for i in range(96)]
    assert independent.scatter(machines["ccnuma96"], 96) == expected


# Restricted machines (PUs disallowed, as by a cgroup or taskset): PUs are ranked among the
# placeable ones, as libomp does (tests/test_kmp_libomp.py runs libomp itself on these).
@pytest.mark.parametrize("spec, allowed, strategy, expected", [
    ("Package:3 Core:2 PU:1", {0, 2, 3, 5}, "compact", [0, 2, 3, 5]),
    ("Package:3 Core:2 PU:1", {0, 2, 3, 5}, "scatter", [0, 2, 5, 3]),  # no package left empty
    ("Package:2 Core:2 PU:2", {0, 1, 2, 5, 7}, "compact", [0, 1, 2, 5, 7]),
    ("Package:2 Core:2 PU:2", {0, 1, 2, 5, 7}, "scatter", [0, 5, 2, 7, 1]),  # hyperthread last
    # Nehalem without PU 0's core: socket 0 keeps cores 2 4 6, socket 1 all four
    ("Package:2 Core:4 PU:1(indexes=Package:Core)", {1, 2, 3, 4, 5, 6, 7}, "scatter",
     [2, 1, 4, 3, 6, 5, 7]),
])
def test_restricted_machines(spec, allowed, strategy, expected):
    topo = parse_xml(topology_xml(spec), spec, frozenset(allowed))
    assert getattr(independent, strategy)(topo, len(allowed)) == expected


def test_consecutive_numbering_gives_the_same_tree_positions(machines):
    alternating, consecutive = machines["nehalem"], load(NEHALEM_CONSECUTIVE)
    assert independent.compact(consecutive, 8) == list(range(8))
    assert independent.scatter(consecutive, 8) == [0, 4, 1, 5, 2, 6, 3, 7]
    for strategy in (independent.compact, independent.scatter):
        for n in range(1, 9):
            positions = [[t.sub_ids(pu) for pu in strategy(t, n)] for t in (alternating, consecutive)]
            assert positions[0] == positions[1]


def test_shared_levels_of_compact_and_scatter(machines):
    core2 = machines["core2"]
    compact = shared_levels(core2, make_placement(core2, "compact", 8).pus)
    scatter = shared_levels(core2, make_placement(core2, "scatter", 8).pus)
    assert (compact[0][1], compact[0][2], compact[0][4], compact[0][0]) == (
        "L2Cache", "Package", "Machine", "PU")
    assert (scatter[0][1], scatter[0][2], scatter[0][4]) == ("Machine", "Package", "L2Cache")
    assert all(compact[i][j] == compact[j][i] for i in range(8) for j in range(8))


def test_random_is_seeded_fresh_per_repetition_and_valid(machines):
    topo = machines["ccnuma96"]
    one = make_placement(topo, "random", 16, seed=7, repetitions=5)
    again = make_placement(topo, "random", 16, seed=7, repetitions=5)
    other = make_placement(topo, "random", 16, seed=8, repetitions=5)
    reps = one.pus_by_repetition
    assert reps == again.pus_by_repetition != other.pus_by_repetition
    assert len({tuple(r) for r in reps}) == 5
    for pus in reps:
        assert len(set(pus)) == 16 and set(pus) <= set(topo.placeable)
    assert one.per_repetition and one.pus_for(3) == reps[3] and one.example_pus == reps[0]


def test_os_has_no_binding_and_every_placement_is_json(machines):
    placement = make_placement(machines["core2"], "os", 4)
    assert placement.pus is None and placement.pus_for(0) is None
    assert not placement.per_repetition
    for strategy in ("os", "random", "compact"):
        made = make_placement(machines["core2"], strategy, 4, repetitions=2)
        assert Placement.from_json(json.loads(json.dumps(made.to_json()))) == made


@pytest.mark.parametrize("strategy", ["os", "random", "compact", "scatter"])
def test_too_many_threads_are_refused(machines, strategy):
    with pytest.raises(PlacementError, match="9 threads do not fit on 8"):
        make_placement(machines["nehalem"], strategy, 9)


@pytest.mark.parametrize("name", ["treematch", "lpgp-0", "lpgp-x", "gp-4", "lp-compact-2", "LPGP"])
def test_unknown_strategy(machines, name):
    with pytest.raises(PlacementError, match=f"unknown strategy '{name}'"):
        make_placement(machines["nehalem"], name, 2)


def test_graph_strategies_need_a_matrix(machines):
    with pytest.raises(PlacementError, match="'lpgp-2' needs an affinity matrix"):
        make_placement(machines["nehalem"], "lpgp-2", 2)


def test_placement_command_writes_one_file_per_strategy(tmp_path, capsys):
    code = pinbench(["place", "--topology", preset("core2"), "--threads", "4", "--strategies",
                     "os", "compact", "scatter", "random", "--outdir", str(tmp_path),
                     "--repetitions", "3", "--seed", "1"])
    assert code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "compact.json", "os.json", "random.json", "scatter.json"]
    assert json.loads((tmp_path / "compact.json").read_text())["omp_places"] == "{0},{4},{2},{6}"
    assert "compact: 0 4 2 6" in capsys.readouterr().out
