"""Topology parsing on the real machine, on XML files (hwloc 1.x and 2.x) and on synthetic
trees; cpusets decoded as hwloc decodes them; restricted trees; one clear error per bad input."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import preset, run_campaign

from pinbench.topology import TopologyError, load, parse_cpuset, parse_xml, topology_xml


def hwloc_calc(*args: str) -> list[int]:
    """The OS indexes hwloc-calc prints (``--po -I pu``), in its order."""
    out = subprocess.run(["hwloc-calc", *args], capture_output=True, text=True, check=True).stdout
    return [int(pu) for pu in out.split(",")] if out.strip() else []


def exported(tmp_path: Path, spec: str, *flags: str, name: str = "machine.xml") -> str:
    """The path of an XML file lstopo writes from a synthetic description, with ``flags``."""
    path = tmp_path / name
    path.write_text(subprocess.run(
        ["lstopo-no-graphics", "-i", spec, *flags, "--of", "xml", "-"],
        capture_output=True, text=True, check=True).stdout)
    return str(path)


def test_real_machine_matches_the_cpus_this_process_may_use():
    topo = load("auto")
    assert topo.placeable == sorted(os.sched_getaffinity(0))
    assert topo.root.type == "Machine"
    assert topo.level_names[-1] == "PU"


def test_only_pus_of_the_cpuset_are_placeable():
    """Under taskset (a cpuset restriction), only the allowed PU is placeable."""
    code = "from pinbench.topology import load; print(load('auto').placeable)"
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


@pytest.mark.parametrize("text", [
    "0x00000003", "0x00000001,0x80000000", "0x00000303,0x03030000,,0x03030303",
    "0x1,,,", "0xffffffff,,,0xffffffff", "0x0", "0x1,,,,,,,0x0", "ff,,0x10", "",
])
def test_parse_cpuset_decodes_as_hwloc_does(text):
    """Empty words are 32 zero bits (hwloc_bitmap_sscanf); checked against hwloc-calc."""
    assert sorted(parse_cpuset(text)) == hwloc_calc("-i", "pu:256", "--po", "-I", "pu", text)


@pytest.mark.parametrize("text", ["0xzz", "-1", "0x123456789", "0x1,0x2 3", "0xf...f,0x1"])
def test_bad_cpusets_are_refused(text):
    with pytest.raises(TopologyError, match="cpuset"):
        parse_cpuset(text)


def test_cpusets_with_empty_words_keep_every_pu(tmp_path):
    """A POWER8-like export whose cpusets have an empty word: every PU stays placeable."""
    pus = "0,1,8,9,16,17,24,25,80,81,88,89,96,97,104,105"
    path = exported(tmp_path, f"Package:2 Core:4 PU:2(indexes={pus})")
    assert 'cpuset="0x00000303,0x03030000,,0x03030303"' in Path(path).read_text()
    assert load(path).placeable == [int(pu) for pu in pus.split(",")] == \
        hwloc_calc("-i", path, "--po", "-I", "pu", "all")


def test_hwloc_1x_xml_gives_the_tree_of_its_2x_export(tmp_path):
    """hwloc 1.x XML (NUMA nodes as parents, Socket) is converted by hwloc itself."""
    spec = "Package:2 [NUMANode(memory=8GiB)] L3Cache:1 Core:2 PU:2(indexes=Package:Core)"
    old = exported(tmp_path, spec, "--export-xml-flags", "v1", name="v1.xml")
    text = Path(old).read_text()
    assert "<topology>" in text and 'type="Socket"' in text
    v1, v2 = load(old), load(spec)
    assert v1.placeable == v2.placeable == hwloc_calc("-i", old, "--po", "-I", "pu", "all")
    assert [v1.sub_ids(pu) for pu in v1.pus] == [v2.sub_ids(pu) for pu in v2.pus]
    assert v1.level_names == v2.level_names
    assert [p.numa for p in v1.root.children] == [True, True]
    assert "<topology version=\"2.0\">" in v1.xml  # what save() writes, for later stages


def test_parse_xml_refuses_1x_xml_with_one_line(tmp_path):
    old = exported(tmp_path, "Package:2 [NUMANode] Core:2 PU:1", "--export-xml-flags", "v1")
    with pytest.raises(TopologyError, match="hwloc XML version 1.x, not 2.x"):
        parse_xml(Path(old).read_text(), old)


def test_disallowed_pus_leave_the_restricted_tree(tmp_path):
    """PUs outside allowed_cpuset are in ``whole`` and ``pus``, not in ``root``."""
    path = exported(tmp_path, "Package:3 Core:2 PU:1", "--allow", "0x2d")
    topo = load(path)
    assert topo.placeable == [0, 2, 3, 5] == hwloc_calc("-i", path, "--po", "-I", "pu", "all")
    assert topo.pus == list(range(6))
    assert [len(package.children) for package in topo.root.children] == [1, 2, 1]
    assert [len(package.children) for package in topo.whole.children] == [2, 2, 2]
    assert [topo.sub_ids(pu) for pu in topo.placeable] == [(0, 0, 0), (1, 0, 0), (1, 1, 0),
                                                         (2, 0, 0)]
    assert topo.summary() == "Package:3 Core:6 PU:6; 4 of 6 PUs placeable"


def test_process_affinity_restricts_like_an_allowed_cpuset(tmp_path):
    """``auto``'s restriction (restrict_to) and a file's allowed_cpuset give one tree."""
    spec = "Package:2 Core:2 PU:2"
    by_file = load(exported(tmp_path, spec, "--allow", "0x000000e5"))
    by_affinity = parse_xml(topology_xml(spec), spec, frozenset({0, 2, 5, 6, 7}))
    assert by_file.placeable == by_affinity.placeable == [0, 2, 5, 6, 7]
    assert [by_file.sub_ids(p) for p in by_file.placeable] == \
        [by_affinity.sub_ids(p) for p in by_affinity.placeable]


def test_offline_pus_are_not_placeable(tmp_path):
    """Offline PUs: in the root's complete_cpuset, no PU object (as Linux exports them)."""
    path = Path(exported(tmp_path, "Package:2 Core:2 PU:2", "--restrict", "0xbd"))  # no PU 1, 6
    path.write_text(path.read_text().replace('complete_cpuset="0x000000bd"',
                                             'complete_cpuset="0x000000ff"', 1))
    topo = load(str(path))
    assert topo.placeable == topo.pus == [0, 2, 3, 4, 5, 7] == \
        hwloc_calc("-i", str(path), "--po", "-I", "pu", "all")
    assert [len(core.children) for package in topo.root.children for core in package.children] \
        == [1, 2, 2, 1]


def newer_format(xml: str) -> str:
    """``xml`` as a format no hwloc reads (hwloc 2.9 refuses version 3.0 and more, 2.10 and
    2.11 read 3.0 and refuse more): an hwloc newer than this one wrote it."""
    return xml.replace('version="2.0"', 'version="99.0"')


#: Files hwloc cannot load, or that hold nothing to place: a part of their one-line error.
BAD_FILES = {
    "newer.xml": "cannot import XML version 99.0 > ",
    "html.xml": "XML component discovery failed",
    "text.xml": "parser error : Start tag expected",
    "binary.xml": "is binary data, not hwloc XML text (a NUL byte at offset 0)",
    "empty.xml": "Document is empty",
    "no-pu.xml": "hwloc_topology_load",
    "cores-without-pu.xml": "no PU in the tree",
    "none-allowed.xml": "no PU may be used",
}


def bad_file(name: str) -> str | bytes:
    """The content of one of BAD_FILES."""
    xml = topology_xml("Package:2 Core:2 PU:1")
    return {
        "newer.xml": newer_format(xml),
        "html.xml": "<html/>",
        "text.xml": "just text\n",
        "binary.xml": bytes(range(256)) * 4,
        "empty.xml": "",
        "no-pu.xml": re.sub(r"<object type=\"(?!Machine).*", "", xml, flags=re.S).replace(
            'cpuset="0x0000000f"', 'cpuset="0x0"') + "</object></topology>",
        "cores-without-pu.xml": re.sub(r'\s*<object type="PU"[^>]*/>', "", xml),
        "none-allowed.xml": xml.replace('allowed_cpuset="0x0000000f"', 'allowed_cpuset="0x0"'),
    }[name]


@pytest.mark.parametrize("name", BAD_FILES)
def test_bad_files_give_one_line_naming_the_file(tmp_path, name):
    path = tmp_path / name
    content = bad_file(name)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    with pytest.raises(TopologyError, match=re.escape(BAD_FILES[name])) as info:
        load(str(path))
    assert str(path) in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("spec, message", [
    ("Package:2 Bogus:3", "failed on synthetic topology 'Package:2 Bogus:3' .*unknown object type"),
    ("Package:2 Core:0 PU:1", "lstopo-no-graphics failed on synthetic topology"),
    ("/nonexistent/machine.xml", "topology file /nonexistent/machine.xml does not exist"),
])
def test_bad_specs_give_one_clear_error(spec, message):
    with pytest.raises(TopologyError, match=message) as info:
        load(spec)
    assert "\n" not in str(info.value)


def test_the_command_prints_one_error_line(tmp_path):
    path = tmp_path / "newer.xml"
    path.write_text(newer_format(topology_xml("Package:1 Core:2 PU:1")))
    proc = subprocess.run([sys.executable, "-m", "pinbench", "topology", str(path)],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert re.fullmatch("pinbench topology: error: lstopo-no-graphics failed on topology file "
                        f"{re.escape(str(path))} "
                        r"\(hwloc [^)]+\): cannot import XML version 99.0 > [0-9.]+\n",
                        proc.stderr)


@pytest.mark.parametrize("spec, pus", [("Package:100000 PU:1", "100,000"),
                                       ("pu:10000000000", "10,000,000,000")])
def test_a_too_large_synthetic_machine_stops_planning_in_one_line(tmp_path, spec, pus):
    """Refused from its arities before hwloc builds it (10^10 PUs would hang, 100k take
    minutes), on ``pinbench run -n`` too."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "campaign.yaml").write_text(
        f"campaign: big\nmachines: {{big: {{topology: '{spec}'}}}}\n"
        "benchmarks: {spin: {source: tests/data/spin.c, input: '10'}}\nthreads: [1]\n")
    proc = run_campaign(work, "-n", timeout=60)
    assert proc.returncode == 2
    assert (proc.stdout + proc.stderr).splitlines() == [
        f"pinbench run: error: machines.big.topology: synthetic topology {spec!r} has {pus} PUs, "
        "more than pinbench reads (8,192 PUs; PINBENCH_MAX_PUS sets another limit)"]


def test_pinbench_max_pus_sets_the_limit_of_every_source(tmp_path, monkeypatch):
    """At the limit a topology loads; one PU more is refused, for a synthetic string, a file
    (counted before hwloc reads it: a file hwloc would refuse is refused for its size) and
    ``auto``."""
    spec = preset("nehalem")
    newer = tmp_path / "newer.xml"
    newer.write_text(newer_format(topology_xml(spec)))
    monkeypatch.setenv("PINBENCH_MAX_PUS", "8")
    assert len(load(spec).pus) == 8
    monkeypatch.setenv("PINBENCH_MAX_PUS", "7")
    for source, subject in [(spec, f"synthetic topology {spec!r}"),
                            (str(newer), f"topology file {newer}")]:
        with pytest.raises(TopologyError) as info:
            load(source)
        assert str(info.value) == (f"{subject} has 8 PUs, more than pinbench reads (7 PUs; "
                                   "PINBENCH_MAX_PUS sets another limit)")
    cpus = len(os.sched_getaffinity(0))
    monkeypatch.setenv("PINBENCH_MAX_PUS", str(cpus))
    assert len(load("auto").placeable) == cpus
    if cpus > 1:
        monkeypatch.setenv("PINBENCH_MAX_PUS", str(cpus - 1))
        with pytest.raises(TopologyError, match=f"^this machine has {cpus} PUs, more than"):
            load("auto")


def test_a_topology_file_too_large_for_the_limit_is_refused_unread(tmp_path, monkeypatch):
    """8 KiB per PU of the limit: a larger file is refused from its size alone."""
    path = tmp_path / "padded.xml"
    xml = topology_xml("pu:1")
    path.write_text(xml.replace("</topology>", f"<!-- {'x' * 8192} --></topology>"))
    monkeypatch.setenv("PINBENCH_MAX_PUS", "1")
    with pytest.raises(TopologyError) as info:
        load(str(path))
    assert str(info.value) == (f"topology file {path} has {path.stat().st_size:,} bytes, more "
                               "than pinbench reads (8,192 bytes for 1 PUs; PINBENCH_MAX_PUS "
                               "sets another limit)")
    monkeypatch.setenv("PINBENCH_MAX_PUS", "2")
    assert load(str(path)).pus == [0]


@pytest.mark.parametrize("value", ["0", "many", "-5", "1e4"])
def test_a_bad_pinbench_max_pus_is_one_line(monkeypatch, value):
    monkeypatch.setenv("PINBENCH_MAX_PUS", value)
    with pytest.raises(TopologyError, match=re.escape(f"PINBENCH_MAX_PUS={value!r} is not a "
                                                      "positive whole number")):
        load("auto")
