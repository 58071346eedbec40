"""Every strategy on a corpus of machines (tests/data/topologies/, made by its make_corpus.sh):
hwloc 1.x and 2.x XML, Groups, sub-NUMA clusters, offline and disallowed PUs, cpusets with
empty words, 128 PUs, SMT, synthetic strings and the presets. The placeable PUs are those
hwloc-calc lists, the restricted tree is the one hwloc itself makes, and every strategy
places N threads on N distinct placeable PUs."""
import subprocess
import xml.etree.ElementTree as ET
from functools import cache

import numpy as np
import pytest
from conftest import DATA, ROOT, preset

from pinbench.place.domains import PlacementError
from pinbench.place import registry
from pinbench.place.independent import compact, scatter
from pinbench.place.policies import NAMES as POLICY_NAMES, predict
from pinbench.place.record import make_placement
from pinbench.topology import Topology, is_synthetic, load, parse_cpuset, parse_xml

CORPUS = DATA / "topologies"
FILES = sorted(str(path) for path in CORPUS.glob("*.xml"))
SYNTHETIC = [line for line in (CORPUS / "synthetic.txt").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
PRESETS = [preset(path.stem) for path in sorted((ROOT / "pinbench" / "workflow" / "presets").glob("*.yaml"))]
SPECS = FILES + SYNTHETIC + PRESETS
#: pinbench's own strategies that bind threads (os places nothing; the runtimes' policies are
#: the runtimes' own: test_policies_bind_to_allowed_places below; the per-region strategies
#: place by a per-region trace, on top of these: tests/test_regions.py)
BINDING = [strategy for strategy in registry.NAMES if strategy != "os"
           and not registry.STRATEGIES[strategy].policy and strategy not in registry.BY_REGION]


def name(spec: str) -> str:
    return spec.rsplit("/", 1)[-1]


@cache
def tree(spec: str) -> Topology:
    return load(spec)


def input_flags(spec: str) -> list[str]:
    return ["--if", "synthetic" if is_synthetic(spec) else "xml", "-i", spec]


def hwloc_pus(spec: str, *flags: str) -> list[int]:
    """The PUs (OS indexes) hwloc-calc lists for the machine, in its (logical) order."""
    out = subprocess.run(["hwloc-calc", *input_flags(spec), *flags, "--po", "-I", "pu", "all"],
                         capture_output=True, text=True, check=True).stdout
    return [int(pu) for pu in out.split(",")]


def thread_counts(n: int) -> list[int]:
    return sorted({k for k in (1, 2, 3, n // 2 + 1, n - 1, n) if 1 <= k <= n})


def test_the_corpus_holds_the_cases_it_claims():
    texts = {path: open(path).read() for path in FILES}
    roots = {path: ET.parse(path).getroot().find("object").attrib for path in FILES}

    def cpuset(path: str, attr: str) -> frozenset[int]:
        return parse_cpuset(roots[path][attr])

    assert any("<topology>" in text for text in texts.values())  # hwloc 1.x
    assert any('<topology version="2.0">' in text for text in texts.values())
    assert any(",," in roots[path]["cpuset"] for path in FILES)  # empty cpuset words
    assert any(",," in roots[path]["allowed_cpuset"] for path in FILES)
    assert any(text.count('type="PU"') >= 100 for text in texts.values())
    assert any('type="Group"' in text and text.count('type="NUMANode"') > text.count(
        'type="Package"') for text in texts.values())  # sub-NUMA clusters
    assert any(cpuset(path, "allowed_cpuset") < cpuset(path, "cpuset") for path in FILES)
    assert any(cpuset(path, "cpuset") < cpuset(path, "complete_cpuset") for path in FILES)


@pytest.mark.parametrize("spec", SPECS, ids=name)
def test_placeable_pus_are_those_hwloc_lists(spec):
    topo = tree(spec)
    assert topo.placeable == hwloc_pus(spec)
    assert topo.pus == hwloc_pus(spec, "--disallowed")


@pytest.mark.parametrize("spec", SPECS, ids=name)
def test_the_restricted_tree_is_the_one_hwloc_makes(spec):
    """hwloc loading without --disallowed drops disallowed PUs and the objects left empty:
    compact and scatter on its tree are ours."""
    own_xml = subprocess.run(["lstopo-no-graphics", *input_flags(spec), "--of", "xml", "-"],
                             capture_output=True, text=True, check=True).stdout
    topo, own = tree(spec), parse_xml(own_xml, spec)
    assert own.pus == own.placeable == topo.placeable
    for n in thread_counts(len(topo.placeable)):
        assert compact(topo, n) == compact(own, n)
        assert scatter(topo, n) == scatter(own, n)


@pytest.mark.parametrize("spec", SPECS, ids=name)
def test_every_strategy_places_threads_on_distinct_placeable_pus(spec):
    topo = tree(spec)
    rng = np.random.default_rng(len(topo.pus))
    for n in thread_counts(len(topo.placeable)):
        upper = np.triu(rng.integers(0, 100, (n, n)), 1)
        matrix = upper + upper.T
        for strategy in BINDING:
            placement = make_placement(topo, strategy, n, seed=n, repetitions=2, matrix=matrix)
            for pus in placement.pus_by_repetition or [placement.pus]:
                assert len(pus) == len(set(pus)) == n, (strategy, n, pus)
                assert set(pus) <= topo.allowed, (strategy, n, pus)


@pytest.mark.parametrize("spec", SPECS, ids=name)
def test_policies_bind_to_allowed_places(spec):
    """Every runtime's policy predicts places of allowed PUs, a distinct place per thread but
    under ``primary``, or refuses more threads than places in one line."""
    topo = tree(spec)
    for n in thread_counts(len(topo.placeable)):
        for policy in POLICY_NAMES:
            try:
                found = predict(topo, policy, n)
            except PlacementError as exc:
                assert "more threads than places" in str(exc) and "\n" not in str(exc)
                continue
            for runtime, places in found.items():
                assert len(places) == n and all(set(p) <= topo.allowed for p in places)
                distinct = {tuple(p) for p in places}
                assert len(distinct) == (1 if policy.startswith("primary") else n), (runtime,
                                                                                    policy, n)
