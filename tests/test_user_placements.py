"""Placements the user gives (pinbench.place.user): PU lists, OMP_PLACES strings, likwid-pin
expressions, checked against the real likwid-pin on faked machines."""
from __future__ import annotations

import csv
import json

import pytest
import yaml
from conftest import DATA, needs_two_cpus, report_text, run_campaign
from likwid_machine import FakedLikwid
from optional_tools import requires

from pinbench.place.domains import PlacementError
from pinbench.place.user import UserPlacement, cpu_list, likwid_domains, likwid_pus, omp_places_pus
from pinbench.results.placements import read_placement
from pinbench.topology import load

#: Faked machines likwid 5.2 reads correctly: its topology file wants dense OS indexes and
#: every PU usable (on sparse or restricted machines likwid-pin itself prints garbage ids).
MACHINES = [
    "Package:2 Core:4 PU:2",
    "Package:2 Core:3 PU:2(indexes=0,6,1,7,2,8,3,9,4,10,5,11)",
    "Package:1 Die:2 L3Cache:1 Core:3 PU:2",
    "Package:4 [NUMANode] Core:4 PU:4",
    "Package:2 [NUMANode] L3Cache:2 Core:4 PU:2",
    "Package:2 Group:2 L2Cache:2 Core:2 PU:1",
    "Core:5 PU:1",
    str(DATA / "topologies" / "snc2.v1.xml"),
]


def _expressions(domains: dict[str, list[int]]) -> list[str]:
    """Expressions of every form over the machine's domains, a few out of range."""
    named = [name for name in domains if name != "N"]
    out = ["N:0-3", "N:1,0", "2,0-1", "N:scatter", "S:scatter", "M:scatter", "C:scatter",
           "D:scatter", "E:N:4", "E:N:4:1:2", "E:N:7:2:3", "E:S0:3:2:3", "S0:0-1@S1:0-1",
           "N:0@N:0", "S0:0-40", "X0:1"]
    for name in named:
        size = len(domains[name])
        out += [f"{name}:0", f"{name}:{size - 1}", f"{name}:0-{min(size, 3) - 1}",
                f"E:{name}:5:2:3"]
    return out


@pytest.mark.slow
@requires("likwid-pin", "unshare")
@pytest.mark.parametrize("spec", MACHINES)
def test_likwid_expressions_select_what_likwid_pin_selects(spec, fake_mask, tmp_path):
    topo = load(spec)
    likwid = FakedLikwid(topo, tmp_path, fake_mask)
    real = likwid.domains()
    ours = likwid_domains(topo)
    assert {name: sorted(pus) for name, pus in real.items()} == \
        {name: sorted(pus) for name, pus in ours.items() if pus}
    checked = refused = 0
    for expr in _expressions(real):
        try:
            theirs = likwid.pus(expr)
        except ValueError:  # likwid refused it, or warned and made up a placement
            with pytest.raises(PlacementError):
                likwid_pus(topo, expr)
            refused += 1
            continue
        assert likwid_pus(topo, expr) == theirs, expr
        checked += 1
    assert checked >= 15 and refused >= 2
    # likwid-pin silently wraps an index past a domain's end (S0:8 is S0:0 on 8 threads);
    # pinbench refuses it.
    for name, pus in real.items():
        assert likwid.pus(f"{name}:{len(pus)}") == likwid.pus(f"{name}:0")
        with pytest.raises(PlacementError, match=f"no index {len(pus)}"):
            likwid_pus(topo, f"{name}:{len(pus)}")


def test_pu_lists_and_places_keep_the_order_given():
    assert cpu_list("3,0-2") == [3, 0, 1, 2]
    assert omp_places_pus("{3},{1}") == [3, 1]
    assert omp_places_pus("{0}:4:2") == [0, 2, 4, 6]
    assert omp_places_pus("{5:1},{2}:3:-1") == [5, 2, 1, 0]


@pytest.mark.parametrize("kind, text, message", [
    ("pus", "0-", "not an index or a range"),
    ("pus", "3-1", "decreases"),
    ("pus", "0,9", "PU 9 is not a placeable PU"),
    ("omp_places", "cores", "abstract name"),
    ("omp_places", "{0,1}", "holds 2 PUs"),
    ("omp_places", "{0:2}", "holds 2 PUs"),
    ("omp_places", "{0},{1", "unbalanced"),
    ("omp_places", "!{0}", "exclusions"),
    ("omp_places", "{0}:0", "length of at least 1"),
    ("omp_places", "{1}:3:-1", "negative PU"),
    ("likwid", "S2:0", "no affinity domain 'S2'"),
    ("likwid", "S0:4", "has 2 hardware threads, no index 4"),
    ("likwid", "E:N:2:1", "E:domain:count"),
    ("likwid", "Q:scatter", "T:scatter"),
    ("likwid", "", "empty"),
])
def test_bad_definitions_are_one_line(kind, text, message):
    topo = load("Package:2 Core:2 PU:1")
    with pytest.raises(PlacementError, match=message) as caught:
        UserPlacement(kind, text).pus(topo)
    assert "\n" not in str(caught.value)


def test_threads_take_the_first_pus_never_two_on_one():
    topo = load("Package:2 Core:2 PU:1")
    mine = UserPlacement.of("mine", {"likwid": "S1:0-1@S0:0"})
    assert mine.place(topo, 2) == [2, 3]
    assert mine.place(topo, 3) == [2, 3, 0]
    with pytest.raises(PlacementError, match="gives 3 PUs, fewer than 4 threads"):
        mine.place(topo, 4)
    twice = UserPlacement.of("twice", {"pus": [1, 1]})
    with pytest.raises(PlacementError, match="two of 2 threads on PU 1"):
        twice.place(topo, 2)
    assert UserPlacement.of("list", {"pus": [3, 0]}) == UserPlacement("pus", "3,0")
    with pytest.raises(PlacementError, match="one of pus, omp_places, likwid"):
        UserPlacement.of("x", {"cores": "0"})


def _campaign(work, placements: dict, strategies: list[str]):
    work.mkdir(parents=True, exist_ok=True)
    (work / "campaign.yaml").write_text(yaml.safe_dump({
        "campaign": "own", "repetitions": 3, "threads": [2], "strategies": strategies,
        "placements": placements,
        "machines": {"here": {"topology": "auto"}, "nehalem": {"topology": "nehalem"},
                     "hybrid": {"topology": str(DATA / "topologies" / "hybrid.v2.xml")}},
        "benchmarks": {"spin": {"source": "tests/data/spin.c", "input": "20",
                                "timeout_s": 20}}}))
    return work


@pytest.mark.slow
@needs_two_cpus
def test_a_campaign_measures_its_own_placements_verified(tmp_path):
    work = _campaign(tmp_path / "work", {"backwards": {"omp_places": "{1},{0}"},
                                         "first-two": {"likwid": "N:0-1"}},
                     ["os", "compact", "backwards", "first-two"])
    run = run_campaign(work)
    assert run.returncode == 0, run.stderr[-3000:]
    results = work / "results" / "own"
    backwards = read_placement(results / "here" / "placements" / "spin" / "t2" / "backwards.json")
    assert backwards.pus == [1, 0]
    planned = read_placement(results / "nehalem" / "placements" / "spin" / "t2" / "first-two.json")
    assert planned.pus == likwid_pus(load(str(results / "nehalem" / "topology.xml")), "N:0-1")
    assert "first-two" in (results / "nehalem" / "plan.txt").read_text()
    with open(results / "runs.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    ran = {name for row in rows for name in [row["strategy"], *row["stands_for"].split()]}
    assert {"backwards", "first-two"} <= ran
    assert {row["verification"] for row in rows if row["strategy"] != "os"} == {"ok"}
    # every run's counters (tests/test_counters.py), shown per experiment in the report
    assert all(json.loads(row["counters"])["page_faults"] > 0 for row in rows)
    report = report_text(results)
    assert "backwards" in report
    # a hybrid machine's kinds, and the kind each placement's threads are on (test_cpu_kinds)
    assert "CPU kinds: IntelCore 12 PUs (most efficient), IntelAtom 8 PUs" in report
    assert "(2 on IntelCore)" in report and "on IntelAtom" not in report
    assert "Counters per run" in report and "page_faults" in report


@pytest.mark.slow
@pytest.mark.parametrize("placements, strategies, message", [
    ({"mine": {"likwid": "S7:0"}}, ["os", "mine"],
     "placements.mine on machine 'here' with 2 threads: likwid 'S7:0': no affinity domain"),
    ({"mine": {"pus": "0"}}, ["os", "mine"],
     "placements.mine on machine 'here' with 2 threads: pus '0' gives 1 PUs, fewer than 2"),
    ({"compact": {"pus": "1,0"}}, ["os", "compact"],
     "placements.compact: the name of one of pinbench's strategies"),
    ({}, ["os", "{1},{0}"], "strategies: unknown strategy '{1},{0}'"),
])
def test_a_bad_own_placement_is_one_line_before_anything_runs(tmp_path, placements,
                                                              strategies, message):
    work = _campaign(tmp_path / "work", placements, strategies)
    run = run_campaign(work, "-n")
    assert run.returncode != 0
    lines = [line for line in run.stderr.splitlines() if message in line]
    assert len(lines) == 1, run.stderr[-2000:]
    assert "Traceback" not in run.stderr
