"""Topology parsing on the real machine, on XML files and on synthetic trees."""
import os
import subprocess
import sys

import pytest
from conftest import preset

from affinity.topology import TopologyError, load, parse_cpuset, topology_xml


def test_real_machine_matches_the_cpus_this_process_may_use():
    topo = load("auto")
    assert topo.placeable == sorted(os.sched_getaffinity(0))
    assert topo.root.type == "Machine"
    assert topo.level_names[-1] == "PU"


def test_only_pus_of_the_cpuset_are_placeable():
    """Under taskset (a cpuset restriction), only the allowed PU is placeable."""
    code = "from affinity.topology import load; print(load('auto').placeable)"
    out = subprocess.run(["taskset", "-c", "0", sys.executable, "-c", code],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[0]"


@pytest.mark.parametrize("name, pus, levels", [
    ("core2", 8, ["Machine", "Package", "L2Cache", "L1Cache", "Core", "PU"]),
    ("nehalem", 8, ["Machine", "Package", "L3Cache", "L2Cache", "L1Cache", "Core", "PU"]),
    ("ccnuma96", 96, ["Machine", "Group", "Package", "L3Cache", "L2Cache", "L1Cache", "Core", "PU"]),
])
def test_study_presets(name, pus, levels):
    topo = load(preset(name))
    assert len(topo.pus) == pus
    assert topo.placeable == topo.pus
    assert topo.level_names == levels


def test_numa_nodes_are_flags_on_their_parent():
    topo = load(preset("ccnuma96"))
    groups = topo.root.children
    assert [g.type for g in groups] == ["Group"] * 4
    assert all(g.numa for g in groups)
    assert not topo.root.numa


def test_alternating_os_numbering_is_read_from_the_tree():
    topo = load(preset("nehalem"))
    first_socket = topo.root.children[0]
    assert sorted(topo.placeable)[:2] == [0, 1]
    assert topo.lowest_shared(0, 2) is first_socket.children[0]  # the socket's L3
    assert topo.lowest_shared(0, 1).type == "Machine"


def test_xml_file_gives_the_same_tree_as_its_synthetic_string(tmp_path):
    path = tmp_path / "nehalem.xml"
    path.write_text(topology_xml(preset("nehalem")))
    from_file, synthetic = load(str(path)), load(preset("nehalem"))
    assert from_file.pus == synthetic.pus
    assert [from_file.sub_ids(p) for p in from_file.pus] == [synthetic.sub_ids(p) for p in synthetic.pus]


def test_allowed_cpuset_of_an_xml_file_restricts_placement(tmp_path):
    xml = topology_xml("Package:1 Core:4 PU:1").replace(
        'allowed_cpuset="0x0000000f"', 'allowed_cpuset="0x00000005"', 1)
    path = tmp_path / "restricted.xml"
    path.write_text(xml)
    assert load(str(path)).placeable == [0, 2]


def test_parse_cpuset_words():
    assert parse_cpuset("0x00000003") == {0, 1}
    assert parse_cpuset("0x00000001,0x80000000") == {31, 32}


@pytest.mark.parametrize("spec, message", [
    ("Package:2 Bogus:3", "lstopo-no-graphics failed"),
    ("/nonexistent/machine.xml", "does not exist"),
])
def test_bad_topologies_give_one_clear_error(spec, message):
    with pytest.raises(TopologyError, match=message):
        load(spec)


def test_a_file_that_is_not_hwloc_xml(tmp_path):
    path = tmp_path / "bad.xml"
    path.write_text("<html/>")
    with pytest.raises(TopologyError, match="not an hwloc topology XML"):
        load(str(path))
