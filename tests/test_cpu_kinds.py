"""Hybrid CPUs: hwloc's CPU kinds read, the strategies kept on the most efficient kind while the
threads fit there, and placements ranked by the threads they put on the others."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import DATA

from pinbench.place.record import make_placement, ranked
from pinbench.place.user import UserPlacement
from pinbench.topology import load

HYBRID = str(DATA / "topologies" / "hybrid.v2.xml")  # 6 P-cores x 2 (PUs 0-11), 8 E-cores
P_CORES, E_CORES = set(range(12)), set(range(12, 20))


@pytest.fixture(scope="module")
def hybrid():
    return load(HYBRID)


def test_the_kinds_are_read_least_efficient_first(hybrid):
    assert [(kind.name, set(kind.pus)) for kind in hybrid.kinds] == [
        ("IntelAtom", E_CORES), ("IntelCore", P_CORES)]
    assert hybrid.hybrid and hybrid.kind_of(3) == "IntelCore" and hybrid.kind_of(15) == "IntelAtom"
    assert hybrid.kinds_line() == "CPU kinds: IntelCore 12 PUs (most efficient), IntelAtom 8 PUs"
    assert hybrid.summary().endswith(hybrid.kinds_line())
    plain = load("Package:2 Core:2 PU:2")
    assert not plain.hybrid and plain.kinds_line() == "" and plain.off_best_kind([0, 1]) == 0


@pytest.mark.parametrize("strategy", ["compact", "scatter", "random", "lp-compact", "lp-scatter",
                                      "gp", "lpgp", "gplp", "hierarchical"])
@pytest.mark.parametrize("threads", [2, 8, 12])
def test_strategies_stay_on_the_p_cores_while_the_threads_fit(hybrid, strategy, threads):
    matrix = np.ones((threads, threads)) - np.eye(threads)
    placement = make_placement(hybrid, strategy, threads, seed=1, repetitions=3, matrix=matrix)
    for pus in placement.pus_by_repetition or [placement.pus]:
        assert set(pus) <= P_CORES and len(set(pus)) == threads
    assert placement.placeable == hybrid.placeable  # the record keeps the whole machine's


def test_scatter_uses_p_core_hardware_threads_before_an_e_core(hybrid):
    # hwloc-distrib-like spreading would put 2 of 8 threads on E-cores; scatter fills the
    # P-cores first, one thread per core, then their second hardware threads
    pus = make_placement(hybrid, "scatter", 8).pus
    assert {pu // 2 for pu in pus[:6]} == set(range(6)) and set(pus[6:]) <= P_CORES


def test_more_threads_than_p_core_pus_span_the_kinds_and_rank_below(hybrid):
    spanning = make_placement(hybrid, "compact", 14, matrix=np.ones((14, 14)))
    assert sum(pu in E_CORES for pu in spanning.pus) == 2
    assert hybrid.off_best_kind(spanning.pus) == 2
    # a placement the user puts on E-cores ranks below one on P-cores, whatever its J
    e_first = make_placement(hybrid, "mine", 4, matrix=np.zeros((4, 4)),
                             placements={"mine": UserPlacement("pus", "12-15")})
    p_cores = make_placement(hybrid, "scatter", 4, matrix=np.ones((4, 4)))
    assert set(e_first.pus) <= E_CORES and e_first.J < p_cores.J
    assert [p.strategy for p, _ in ranked(hybrid, [e_first, p_cores])] == ["scatter", "mine"]
