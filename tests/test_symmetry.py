"""When placements can differ at all: flat machines, where every placement of a thread count is
one experiment, and the thread counts at which compact and scatter differ (``levels``)."""
import random
from pathlib import Path

import pytest
from conftest import DATA, preset

from pinbench.place.independent import compact, scatter
from pinbench.place.symmetry import experiment_key, flat_machine, interchangeable, level_counts
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
    assert not interchangeable(topo) and flat_machine(topo) == ""
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


def test_a_flat_machine_is_named_with_its_tree():
    assert flat_machine(load("Package:1 L3Cache:1 L2Cache:2 Core:1 PU:1")) == (
        "flat (Package:1 L3Cache:1 L2Cache:2 Core:2 PU:2; 2 of 2 PUs placeable): every pinned "
        "strategy is one placement up to symmetry at every thread count")


def test_a_measured_flat_machine_is_said_with_what_to_do(tmp_path):
    """One line per measured flat machine when the campaign pins with two strategies or more,
    in the closing lines too; none for a planned one, one that is not flat, or a campaign
    that pins with one strategy."""
    from pinbench.results.layout import Layout
    from pinbench.workflow.campaign import Machine
    from pinbench.workflow.outcome import flat_machines, where_and_what

    vm = load("Package:1 L3Cache:1 L2Cache:2 Core:1 PU:1")
    machines = [Machine("local", "auto", vm, True, (2,)),
                Machine("planned", "x", vm, False, (2,)),
                Machine("smt", "auto", load("Package:1 Core:2 PU:2"), True, (4,))]
    config = {"strategies": ["os", "random", "compact", "scatter", "gp"], "placements": {}}
    [line] = flat_machines(machines, config)
    assert line == (
        "machine local is flat (Package:1 L3Cache:1 L2Cache:2 Core:2 PU:2; 2 of 2 PUs "
        "placeable): every pinned strategy is one placement up to symmetry at every thread "
        "count, so this campaign compares os against pinned only; to compare placements, run "
        "on a machine whose PUs share unequally (sockets, SMT, NUMA nodes, caches of some "
        "cores), or plan one: pinbench plan config/campaigns/study-plan.yaml")
    assert flat_machines(machines, config | {"strategies": ["os", "compact", "close-threads"]}) == []
    [line] = flat_machines(machines, config | {"strategies": ["compact", "scatter"]})
    assert ", so this campaign's 2 pinned strategies measure one placement; " in line
    closing = where_and_what(Layout(str(tmp_path / "c")), 0.05, [line]).splitlines()
    assert closing[0].startswith("campaign: ") and closing[1] == line
    assert closing[2].startswith("results: ")


def test_the_report_says_why_a_flat_machine_shows_one_placement(tmp_path):
    """The banner of a machine whose pinned strategies coincide says, when the machine is flat,
    why and what to do."""
    import csv

    from pinbench.report.html_report import build_report
    from pinbench.results.layout import Layout
    from pinbench.stats.analyse import VERDICT_COLUMNS
    from pinbench.topology import topology_xml

    layout = Layout(str(tmp_path / "c"))
    config = {"campaign": "c", "benchmarks": {}, "baseline": "os", "confidence": 0.95,
              "machines": {"flat": {"topology": "auto"}, "smt": {"topology": "auto"}}}
    Path(layout.stats("verdicts")).parent.mkdir(parents=True)
    with open(layout.stats("verdicts"), "w", newline="") as handle:
        writer = csv.DictWriter(handle, VERDICT_COLUMNS)
        writer.writeheader()
        for machine, spec in (("flat", "Package:1 Core:2 PU:1"), ("smt", "Package:1 Core:2 PU:2")):
            Path(layout.topology(machine)).parent.mkdir(parents=True)
            Path(layout.topology(machine)).write_text(topology_xml(spec))
            writer.writerow(dict.fromkeys(VERDICT_COLUMNS, "") | {
                "machine": machine, "benchmark": "b", "threads": 2, "baseline": "os",
                "tests": 1, "tests_report": 2, "coincide": True, "drift": False,
                "noisy_runs": 0, "slower": 0})
    html = build_report(layout, config, ["flat", "smt"]).read_text()
    assert html.count("no winner is named among them") == 2
    assert html.count("It is flat (") == 1
    assert ("It is flat (Package:1 Core:2 PU:2; 2 of 2 PUs placeable): every pinned strategy is "
            "one placement up to symmetry at every thread count; to compare placements, run on a "
            "machine whose PUs share unequally") in html
