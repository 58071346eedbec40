"""Graph strategies: names, valid placements everywhere, determinism, invariances, records with J."""
import json
import math

import numpy as np
import pytest
from conftest import preset

from pinbench.graph.matching import thread_pairs
from pinbench.graph.objective import cost_matrix, objective
from pinbench.cli import main as pinbench
from pinbench.place import registry
from pinbench.place.domains import PlacementError, slots, socket_slots
from pinbench.place.record import make_placement
from pinbench.results.placements import shared_levels
from pinbench.topology import load

GRAPH = list(registry.GRAPH)
BOUND = ["compact", "scatter", *GRAPH]
CORE2_CONSECUTIVE = ("[NUMANode(memory=16GiB)] Package:2 L2Cache:2(size=6MiB) "
                     "L1dCache:2(size=32KiB) Core:1 PU:1")
NEHALEM_CONSECUTIVE = ("Package:2 [NUMANode(memory=12GiB)] L3Cache:1(size=8MiB) "
                       "L2Cache:4(size=256KiB) L1dCache:1(size=32KiB) Core:1 PU:1")
#: Trees beyond the study's: SMT, caches of three cores, no Package, a Die level.
OTHER_TREES = ("Package:2 L3Cache:1 Core:4 PU:2", "Package:2 L2Cache:3 Core:1 PU:1",
               "Group:3 L2Cache:2 Core:1 PU:1", "Package:1 Die:2 L3Cache:1 Core:3 PU:2")


def symmetric(rng, n, high=100):
    upper = np.triu(rng.integers(0, high, (n, n)), 1)
    return upper + upper.T


def degenerate(kind, n, rng):
    if kind == "random":
        return symmetric(rng, n)
    if kind == "zero":
        return np.zeros((n, n))
    if kind == "uniform":
        return np.ones((n, n)) - np.eye(n)
    hub = np.zeros((n, n))  # thread 0 shares with everybody, nobody else shares
    hub[0, 1:] = hub[1:, 0] = 50
    return hub


@pytest.fixture(scope="module")
def machines():
    found = {name: load(preset(name)) for name in ("core2", "nehalem", "ccnuma96")}
    found["auto"] = load("auto")
    found.update((spec, load(spec)) for spec in OTHER_TREES)
    return found


def assert_valid(topo, pus, n):
    assert len(pus) == n and len(set(pus)) == n and set(pus) <= set(topo.placeable)


# --- names -----------------------------------------------------------------------------

def test_every_config_name_is_recognised():
    for name in [*registry.NAMES, *GRAPH, "lpgp-4", "gplp-8", "lpgp-16"]:
        registry.parse_strategy(name)
    for name in ["lpgp-0", "lpgp-", "gp-4", "hierarchical-2", "lpgp-4x", "lpgp-04", "lpgp-²", ""]:
        with pytest.raises(PlacementError, match="unknown strategy"):
            registry.parse_strategy(name)
    assert registry.parse_strategy("lpgp-8") == (registry.STRATEGIES["lpgp"], 8)
    assert registry.parse_strategy("lp-compact") == (registry.STRATEGIES["lp-compact"], None)
    assert [n for n in ["os", "random", "compact", "scatter", "gp", "lpgp-2", "hierarchical"]
            if registry.needs_matrix(n)] == ["gp", "lpgp-2", "hierarchical"]


# --- validity ---------------------------------------------------------------------------

def thread_counts(topo):
    pus = len(topo.placeable)
    return sorted({n for n in (1, 2, 3, pus // 2 + 1, pus - 1, pus) if 1 <= n <= pus})


@pytest.mark.parametrize("name", ["core2", "nehalem", "ccnuma96", "auto", *OTHER_TREES])
@pytest.mark.parametrize("kind", ["random", "zero", "uniform", "hub"])
def test_every_placement_is_valid(machines, name, kind):
    topo = machines[name]
    rng = np.random.default_rng(len(name))
    for n in thread_counts(topo):
        matrix = degenerate(kind, n, rng)
        for strategy in BOUND:
            record = make_placement(topo, strategy, n, matrix=matrix)
            assert_valid(topo, record.pus, n)
            assert record.J == pytest.approx(objective(topo, matrix, record.pus))
            if strategy in GRAPH:  # one thread per core while threads do not outnumber cores
                assert set(record.pus) <= set(slots(topo, n))


def test_degenerate_matrices_give_j_zero_or_the_same_for_every_strategy(machines):
    topo = machines["nehalem"]
    for strategy in GRAPH:
        assert make_placement(topo, strategy, 8, matrix=np.zeros((8, 8))).J == 0
        uniform = make_placement(topo, strategy, 8, matrix=np.ones((8, 8))).J
        assert uniform == 6 * 2 * 1 + 16 * 2  # 2 x 6 pairs inside sockets, 16 across


@pytest.mark.parametrize("strategy", GRAPH)
def test_same_seed_same_placement(machines, strategy):
    topo = machines["ccnuma96"]
    matrix = symmetric(np.random.default_rng(5), 40)
    runs = [make_placement(topo, strategy, 40, seed=s, matrix=matrix).pus
            for s in (3, 3, 4)]
    assert runs[0] == runs[1]


# --- invariances -----------------------------------------------------------------------

@pytest.mark.parametrize("alternating, consecutive", [
    ("nehalem", NEHALEM_CONSECUTIVE), ("core2", CORE2_CONSECUTIVE)])
def test_os_numbering_changes_nothing_but_the_names(machines, alternating, consecutive):
    """Consecutive and alternating numberings: the same tree positions, the same J."""
    trees = [machines[alternating], load(consecutive)]
    rng = np.random.default_rng(11)
    for n in (3, 6, 8):
        matrix = symmetric(rng, n)
        for strategy in [*BOUND, "gplp-2", *(["lpgp-1"] if n <= 4 else [])]:
            records = [make_placement(t, strategy, n, seed=1, matrix=matrix) for t in trees]
            assert [[t.sub_ids(pu) for pu in r.pus] for t, r in zip(trees, records)] == \
                [[trees[0].sub_ids(pu) for pu in records[0].pus]] * 2
            assert records[0].J == records[1].J


def planted(topo, n, rng, noise=0.0):
    """W from a hidden placement: 10^(top cost - cost of the shared level), plus uniform noise.

    Returns W, the hidden PU of each thread and the level each pair shares there.
    """
    pus = slots(topo, n)
    costs = cost_matrix(topo, pus)
    top = costs.max()
    hidden = rng.permutation(n)  # thread hidden[k] sits on pus[k]
    truth = np.empty_like(costs)
    truth[np.ix_(hidden, hidden)] = costs
    matrix = np.where(truth < top, 10.0 ** (top - truth), 0.0)
    noise_upper = np.triu(rng.uniform(0, noise * 10, (n, n)), 1)
    matrix += noise_upper + noise_upper.T
    np.fill_diagonal(matrix, 0)
    where = np.empty(n, dtype=int)
    where[hidden] = pus
    return matrix, where.tolist(), truth


@pytest.mark.parametrize("name, n", [("core2", 8), ("nehalem", 8), ("ccnuma96", 96)])
def test_j_does_not_depend_on_thread_labels(machines, name, n):
    """Relabelling threads (permuting W) leaves the J of lpgp, gplp and hierarchical unchanged on
    planted matrices, where the best placement is unique up to symmetries of the tree. gp places
    each socket's threads in thread order (its J is invariant where sockets are the lowest shared
    level, as on Nehalem); lp-compact and lp-scatter take pairs in thread order, so only the weight
    of their pairs is invariant."""
    topo = machines[name]
    rng = np.random.default_rng(n)
    matrix, _, _ = planted(topo, n, rng)
    for _ in range(3):
        perm = rng.permutation(n)
        relabelled = matrix[np.ix_(perm, perm)]
        for strategy in ("lpgp", "gplp", "hierarchical", *(["gp"] if name == "nehalem" else [])):
            assert make_placement(topo, strategy, n, matrix=relabelled).J == \
                make_placement(topo, strategy, n, matrix=matrix).J
        weight = [sum(m[a, b] for a, b in thread_pairs(m)[0]) for m in (matrix, relabelled)]
        assert weight[0] == weight[1]


def test_hierarchical_j_does_not_depend_on_thread_labels_on_random_matrices(machines):
    rng = np.random.default_rng(8)
    same = []
    for name in ("core2", "nehalem"):
        topo = machines[name]
        for _ in range(20):
            matrix = symmetric(rng, 8)
            perm = rng.permutation(8)
            same.append(make_placement(topo, "hierarchical", 8, matrix=matrix).J ==
                        make_placement(topo, "hierarchical", 8,
                                                 matrix=matrix[np.ix_(perm, perm)]).J)
    assert np.mean(same) >= 0.95


# --- the study's strategies on their machines ---------------------------------------------

@pytest.mark.parametrize("strategy", ["lp-compact", "lp-scatter", "lpgp"])
@pytest.mark.parametrize("name", ["core2", "ccnuma96"])
def test_pairs_share_a_two_core_cache(machines, name, strategy):
    topo = machines[name]
    n = len(topo.placeable)
    matrix = symmetric(np.random.default_rng(2), n)
    record = make_placement(topo, strategy, n, matrix=matrix)
    pairs, _ = thread_pairs(matrix)
    level = shared_levels(topo, record.pus)
    assert {level[a][b] for a, b in pairs} == {"L2Cache"}


def test_lp_compact_fills_sockets_and_lp_scatter_spreads_pairs(machines):
    topo = machines["ccnuma96"]
    matrix = symmetric(np.random.default_rng(3), 16)
    sockets = socket_slots(topo, topo.placeable)

    def sockets_used(pus):
        return sorted({k for k, group in enumerate(sockets) for pu in pus if pu in group})

    compact = make_placement(topo, "lp-compact", 16, matrix=matrix).pus
    spread = make_placement(topo, "lp-scatter", 16, matrix=matrix).pus
    assert sockets_used(compact) == [0, 1, 2]  # 6 cores per socket
    assert len(sockets_used(spread)) == 8      # one pair per socket
    assert {k // 4 for k in sockets_used(spread)} == {0, 1, 2, 3}  # every NUMA group first


@pytest.mark.parametrize("base", ["lpgp", "gplp"])
@pytest.mark.parametrize("sockets", [4, 8, 16])
def test_socket_variants_use_the_first_k_sockets_evenly(machines, base, sockets):
    """16 threads of the 96-core machine on 4, 8 or 16 sockets, as in the study's Table 2."""
    topo = machines["ccnuma96"]
    matrix = symmetric(np.random.default_rng(sockets), 16)
    pus = make_placement(topo, f"{base}-{sockets}", 16, matrix=matrix).pus
    groups = socket_slots(topo, topo.placeable)
    per_socket = [len(set(pus) & set(group)) for group in groups]
    assert sum(per_socket[:sockets]) == 16
    bound = 2 * math.ceil(8 / sockets) if base == "lpgp" else math.ceil(16 / sockets)
    assert max(per_socket) <= bound


def test_socket_counts_that_cannot_work_are_refused(machines):
    topo = machines["ccnuma96"]
    matrix = np.ones((16, 16))
    with pytest.raises(PlacementError, match="17 sockets asked for"):
        make_placement(topo, "lpgp-17", 16, matrix=matrix)
    with pytest.raises(PlacementError, match="16 threads do not fit on 2 socket"):
        make_placement(topo, "gplp-2", 16, matrix=matrix)


def test_lpgp_breaks_a_pair_when_sockets_hold_odd_counts(machines):
    topo = machines["Package:2 L2Cache:3 Core:1 PU:1"]  # two sockets of 3 cores
    matrix = symmetric(np.random.default_rng(1), 6)
    assert_valid(topo, make_placement(topo, "lpgp", 6, matrix=matrix).pus, 6)


# --- records ---------------------------------------------------------------------------

def test_records_carry_j_when_a_matrix_is_given(machines):
    topo = machines["core2"]
    matrix = symmetric(np.random.default_rng(6), 4)
    rnd = make_placement(topo, "random", 4, seed=2, repetitions=3, matrix=matrix)
    assert rnd.J_by_repetition == [objective(topo, matrix, p) for p in rnd.pus_by_repetition]
    assert rnd.J == pytest.approx(np.mean(rnd.J_by_repetition))
    assert make_placement(topo, "os", 4, matrix=matrix).J is None
    bare = make_placement(topo, "compact", 4)
    assert bare.J is None and bare.pus == [0, 4, 2, 6]
    assert make_placement(topo, "random", 4).J_by_repetition is None
    with pytest.raises(PlacementError, match="matrix is 4 x 4, not 3 x 3"):
        make_placement(topo, "compact", 3, matrix=matrix)


def test_placement_files_record_j(tmp_path, capsys):
    from pinbench.graph.matrix import write_matrix
    write_matrix(symmetric(np.random.default_rng(7), 4), tmp_path / "m.csv")
    names = ["os", "random", "compact", "scatter", *GRAPH, "lpgp-1", "gplp-2"]
    code = pinbench(["place", "--topology", preset("nehalem"), "--threads", "4", "--strategies",
                     *names, "--outdir", str(tmp_path / "out"), "--matrix",
                     str(tmp_path / "m.csv")])
    assert code == 0
    records = {n: json.loads((tmp_path / "out" / f"{n}.json").read_text()) for n in names}
    assert records["os"]["J"] is None
    assert all(isinstance(records[n]["J"], float) for n in names if n != "os")
    assert "(J " in capsys.readouterr().out
    assert pinbench(["place", "--topology", preset("nehalem"), "--threads", "5", "--strategies",
                     "gp", "--outdir", str(tmp_path / "x"), "--matrix",
                     str(tmp_path / "m.csv")]) == 2


def test_strategies_placed_with_one_memo_match_once_and_place_as_alone(machines, monkeypatch):
    """``--strategy all`` shares the matching and the socket split (one Memo): the same
    placements as each strategy placed alone, with one matching of all the threads."""
    from pinbench.place import study
    from pinbench.place.study import Memo

    topo = machines["ccnuma96"]
    matrix = np.random.default_rng(9).integers(0, 50, (48, 48))
    matrix = np.triu(matrix, 1) + np.triu(matrix, 1).T
    alone = {name: make_placement(topo, name, 48, seed=3, matrix=matrix).pus for name in GRAPH}
    whole = []
    monkeypatch.setattr(study, "thread_pairs",
                        lambda m, *args: whole.append(len(m)) or thread_pairs(m, *args))
    memo = Memo()
    shared = {name: make_placement(topo, name, 48, seed=3, matrix=matrix, memo=memo).pus
              for name in GRAPH}
    assert shared == alone
    assert whole.count(48) == 1
