"""The typed records on both sides of a process boundary: a placement (place stage -> its file
-> measure, plan, report) and a measurement job's settings (workflow -> JSON -> the measuring
process), each read back as it was made."""
import dataclasses
import itertools
import json

import numpy as np
import pytest
from conftest import DATA, ROOT, preset

from pinbench.measure.job import Job
from pinbench.measure.settings import Explain, JobSettings
from pinbench.graph.matrix import write_matrix
from pinbench.place.record import make_placement, write_placements
from pinbench.place.registry import NAMES
from pinbench.results import traces
from pinbench.results.placements import (Placement, read_placement, shared_levels,
                                         write_placement)
from pinbench.results.regions import Region, Regions
from pinbench.topology import load
from pinbench.workflow import jobsettings
from pinbench.workflow.campaign import load_campaign

TOOL = {"tool": "/lib/pinbench_ompt.so", "libomp": "/lib/libomp.so", "gomp_dir": "/lib/gomp"}


@pytest.mark.parametrize("oversubscribe", [False, True])
def test_every_strategy_s_placement_reads_back_from_its_file(tmp_path, oversubscribe):
    topo = load(preset("nehalem"))
    threads = len(topo.placeable) + 2 if oversubscribe else 4
    rng = np.random.default_rng(3)
    upper = np.triu(rng.integers(0, 50, (threads, threads)), 1)
    names = [n for n in NAMES if not oversubscribe or n in ("os", "random", "compact")]
    # nehalem's 2 sockets are 2 places: 4 threads only under the primary policy
    names = [n for n in names if not n.endswith("-sockets") or n.startswith("primary")]
    # the per-region strategies' trace: two regions, each with half of the accesses and time
    halves = Regions(threads, [Region(f"p+0x{k}", f"p.c:{k} (main)", 1, 0.5, 0.5, 9.0,
                                      (upper + upper.T if k else np.eye(threads)).tolist())
                               for k in range(2)])
    for name in names:
        made = make_placement(topo, name, threads, seed=5, repetitions=3,
                              matrix=upper + upper.T, oversubscribe=oversubscribe,
                              regions=halves)
        assert Placement.from_json(json.loads(json.dumps(made.to_json()))) == made
        write_placement(made, tmp_path / f"{name}.json")
        assert read_placement(tmp_path / f"{name}.json") == made
        assert made.oversubscribed == oversubscribe
        assert made.per_repetition == (name == "random")
        pus = made.pus_for(2)
        assert pus == (made.pus_by_repetition[2] if name == "random" else made.pus)
        assert (pus is None) == (name == "os")
    with pytest.raises(TypeError):
        Placement.from_json(made.to_json() | {"objective": 1.0})  # not a field of the files


@pytest.mark.parametrize("name", ["core2", "ccnuma96"])
def test_the_pairs_shared_levels_are_the_topology_s(name):
    """Derived, not stored: for each pair of threads (two on one PU too, as an oversubscribed
    placement has them), the type of the lowest object holding both PUs."""
    topo = load(preset(name))
    pus = [int(pu) for pu in np.random.default_rng(3).permutation(topo.placeable)[:20]]
    pus += pus[:3]
    levels = shared_levels(topo, pus)
    for a, b in itertools.product(range(len(pus)), repeat=2):
        assert levels[a][b] == topo.lowest_shared(pus[a], pus[b]).type


@pytest.mark.slow
def test_a_cell_of_2048_threads_writes_under_10_mb(tmp_path):
    """Issue 29: a placement cell of 2,048 threads (six strategies, 30 repetitions) wrote
    236 MB in 10 s when the files stored the pairs' shared levels; PU lists are 0.7 MB."""
    threads = 2048
    ring = np.arange(threads)
    neighbours = np.zeros((threads, threads))
    neighbours[ring, (ring + 1) % threads] = 10.0
    write_matrix(neighbours + neighbours.T, tmp_path / "m.csv")
    names = ["os", "random", "compact", "scatter", "lp-compact", "lp-scatter"]
    outputs = [tmp_path / "cell" / f"{name}.json" for name in names]
    made = write_placements("Package:4 Core:256 PU:2", threads, names, outputs, seed=1,
                            repetitions=30, matrix=tmp_path / "m.csv")
    assert sum(path.stat().st_size for path in outputs) < 10_000_000
    assert [read_placement(path) for path in outputs] == made


def test_a_job_s_settings_are_one_text_for_the_measuring_process(tmp_path):
    """Made from the campaign, passed as JSON, read back equal; the same settings make the
    same text (the measure rule's parameter); the OMPT tool is a typed replace."""
    config, machines = load_campaign({
        "campaign": "c", "machines": {"m": {"topology": "nehalem"}}, "threads": [4],
        "strategies": ["os", "random", "compact", "scatter"], "explain": {"repetitions": 6},
        "benchmarks": {"spin": {"source": str(DATA / "spin.c"), "input": "20"}}}, ROOT)
    topo = machines["m"].topology
    xml = tmp_path / "topology.xml"
    xml.write_text(topo.xml)
    files = []
    for strategy in config["strategies"]:
        files.append(str(tmp_path / f"{strategy}.json"))
        write_placement(make_placement(topo, strategy, 4, repetitions=3), files[-1])
    text = jobsettings.measure_spec(config, "m", "spin", 4, "bin/spin", files, str(xml), (4,))
    settings = JobSettings.from_json(json.loads(text))
    assert jobsettings.measure_spec(config, "m", "spin", 4, "bin/spin", files, str(xml),
                                    (4,)) == text
    assert json.dumps(settings.to_json(), sort_keys=True) == text
    assert settings.strategies == config["strategies"] and settings.threads == 4
    assert settings.explain == Explain(repetitions=6, t1_argv=[settings.binary, "20"],
                                       sequential_argv=None)
    assert "tool" not in json.loads(text)["explain"]  # added on the measured machine
    tooled = settings.with_ompt_tool(TOOL)
    assert tooled.explain.tool == TOOL and settings.explain.tool is None
    assert JobSettings.from_json(json.loads(json.dumps(tooled.to_json()))) == tooled
    assert settings.with_ompt_tool(None).explain is None  # no tool: no explained runs
    plain = dataclasses.replace(settings, explain=None)
    assert plain.with_ompt_tool(TOOL) is plain
    job = Job.of(settings, map(read_placement, reversed(files)))
    assert list(job.placements) == config["strategies"]  # the campaign's order
    assert job.placements["random"].per_repetition
    with pytest.raises(KeyError):
        Job.of(settings, map(read_placement, files[1:]))
    with pytest.raises(TypeError):
        JobSettings.from_json(json.loads(text) | {"placements": {}})


def test_a_cell_whose_trace_failed_places_and_measures_the_strategies_needing_no_matrix(
        tmp_path):
    """The trace's failure, recorded in the matrix's place, read back; the graph strategies'
    placements say they are left out and why, and the job's settings measure the others."""
    strategies = ["os", "compact", "lp-compact", "gp"]
    config, machines = load_campaign({
        "campaign": "c", "machines": {"m": {"topology": "nehalem"}}, "threads": [4],
        "strategies": strategies, "explain": None,
        "benchmarks": {"spin": {"source": str(DATA / "spin.c"), "input": "20"}}}, ROOT)
    xml = tmp_path / "topology.xml"
    xml.write_text(machines["m"].topology.xml)
    matrix = tmp_path / "affinity" / "t4.csv"
    assert traces.failure(matrix) is None  # not traced yet
    traces.record_failure(matrix, "the traced build failed: ld returned 1 exit status")
    why = traces.failure(matrix)
    assert why == "the traced build failed: ld returned 1 exit status"
    files = [tmp_path / f"{strategy}.json" for strategy in strategies]
    made = write_placements(machines["m"].topology, 4, strategies, files, repetitions=3,
                            no_matrix=why)
    assert [placement.left_out for placement in made] == [None, None, why, why]
    assert [read_placement(path) for path in files] == made
    assert made[2].pus is None and made[2].line() == f"lp-compact: left out ({why})"
    text = jobsettings.measure_spec(config, "m", "spin", 4, "bin/spin", [str(f) for f in files],
                                    str(xml), (4,))
    assert JobSettings.from_json(json.loads(text)).strategies == ["os", "compact"]
