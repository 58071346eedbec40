"""One home for each fact: what cannot import it (the campaign schema, read by Snakemake too)
agrees with it, and the stages that decide one fact decide it alike."""
import yaml
from conftest import run_record

from pinbench.measure.settings import LAUNCHED, MATCHES, OPENMP, QUIET, SHORTHAND, STREAMS, UNITS
from pinbench.results.placements import Placement, read_placement, write_placement
from pinbench.stats.analyse import verdict_tables
from pinbench.stats.sample_size import MIN_N
from pinbench.stats.sequential import POWER
from pinbench.topology import load
from pinbench.workflow.campaign import SCHEMA
from pinbench.workflow.jobsettings import report_tests, same_experiments

PROPERTIES = yaml.safe_load(SCHEMA.read_text())["properties"]


def test_the_schema_defaults_of_quiet_are_the_measuring_process_defaults():
    schema = PROPERTIES["quiet"]["properties"]
    assert {name: schema[name]["default"] for name in QUIET} == QUIET


def test_the_schema_knows_whose_binding_the_measuring_process_verifies():
    verify = PROPERTIES["benchmarks"]["additionalProperties"]["properties"]["verify"]
    assert verify["enum"] == [LAUNCHED, OPENMP] and verify["default"] == LAUNCHED


def test_the_schema_reads_a_printed_time_as_the_measuring_process_does():
    time = PROPERTIES["benchmarks"]["additionalProperties"]["properties"]["time"]["properties"]
    assert time["unit"]["enum"] == list(UNITS) and time["stream"]["enum"] == list(STREAMS)
    assert time["match"]["enum"] == list(MATCHES)
    assert {name: time[name]["default"] for name in SHORTHAND} == SHORTHAND


def test_the_schema_default_of_power_is_the_sequential_design_default():
    assert PROPERTIES["power"]["default"] == POWER


def test_the_schema_refuses_fewer_repetitions_than_the_statistics_need():
    assert PROPERTIES["repetitions"]["minimum"] == MIN_N


def test_the_workflow_and_the_analysis_merge_the_same_placements(tmp_path):
    """Compact and its mirror image on the other package are one experiment, measured once
    (the workflow's ``same_as``) and tested once (the analysis' grouping of the runs)."""
    topo = load("Package:2 Core:2 PU:1")
    xml = tmp_path / "topology.xml"
    xml.write_text(topo.xml)
    plans = {"os": None, "compact": [0, 1], "scatter": [0, 2], "mirror": [3, 2],
             "random": [[0, 1], [1, 2], [2, 3]]}
    files = []
    for strategy, pus in plans.items():
        draws = strategy == "random"
        files.append(tmp_path / f"{strategy}.json")
        write_placement(Placement(strategy=strategy, threads=2, topology="auto",
                                  placeable=[0, 1, 2, 3], pus=None if draws else pus, J=None,
                                  pus_by_repetition=pus if draws else None), files[-1])
    measured_once = same_experiments(list(plans), {path.stem: read_placement(path)
                                                   for path in files}, str(xml))
    assert measured_once == {"mirror": "compact"}

    runs = [run_record(machine="m", strategy=strategy, repetition=k, time_s=1.0 + k / 10,
                       pus=" ".join(map(str, pus[k] if strategy == "random" else pus or [])))
            for strategy, pus in plans.items() for k in range(MIN_N)]
    verdicts, comparisons = verdict_tables(runs, "os", 0.05, {"m": topo}, list(plans))
    assert {row["strategy"]: row["experiment"] for row in comparisons} == {
        strategy: measured_once.get(strategy, strategy) for strategy in plans}
    # the report's tests: as many as the sequential design's jobs count before measuring
    # (compact, scatter, random: 3 of the 4 strategies tested)
    assert verdicts[0]["tests_report"] == 3 == report_tests(
        {"strategies": list(plans), "baseline": "os"}, [(list(map(str, files)), str(xml))])
