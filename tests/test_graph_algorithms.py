"""Building blocks of the graph strategies: weights, objective, domains, matching, partition, refinement."""
import itertools

import numpy as np
import pytest
from conftest import preset

from pinbench.graph.edges import MATCHING_BOUND, METIS_BOUND, edges, integer_matrix
from pinbench.graph.matching import max_weight_matching, thread_pairs
from pinbench.graph.objective import cost_matrix, lowest_shared_matrix, node_costs, objective
from pinbench.graph.partition import PartitionError, cut, fits, partition
from pinbench.graph.refinement import Refinement
from pinbench.place import domains
from pinbench.place.domains import PlacementError
from pinbench.topology import load


def symmetric(rng, n, high=100, density=1.0):
    upper = np.triu(rng.integers(0, high, (n, n)) * (rng.random((n, n)) < density), 1)
    return upper + upper.T


@pytest.fixture(scope="module")
def machines():
    return {name: load(preset(name)) for name in ("core2", "nehalem", "ccnuma96")}


# --- weights ---------------------------------------------------------------------------

def test_integer_weights_are_exact_when_whole_and_scaled_otherwise():
    whole = np.array([[7, 3], [3, 7]])
    assert integer_matrix(whole, METIS_BOUND).tolist() == [[0, 3], [3, 0]]
    huge = np.array([[0, 2**40, 1], [2**40, 0, 2**33], [1, 2**33, 0]], dtype=float)
    scaled = integer_matrix(huge, METIS_BOUND)
    assert scaled.sum() <= METIS_BOUND and scaled[0, 1] > scaled[1, 2] > 0 and scaled[0, 2] == 0
    rows, cols, weights = edges(scaled)
    assert list(zip(rows, cols)) == [(0, 1), (1, 2)]  # the edge that rounds to 0 is dropped
    assert integer_matrix(np.array([[0, 0.25], [0.25, 0]]), 100).tolist() == [[0, 50], [50, 0]]


# --- objective -------------------------------------------------------------------------

@pytest.mark.parametrize("name, costs", [
    ("core2", {"L2Cache": 1, "Package": 2, "Machine": 3}),
    ("nehalem", {"L3Cache": 1, "Package": 1, "Machine": 2}),
    ("ccnuma96", {"L2Cache": 1, "L3Cache": 2, "Package": 2, "Group": 3, "Machine": 4}),
])
def test_cost_scale_on_the_study_machines(machines, name, costs):
    found = {node.type: cost for node, cost in node_costs(machines[name]).items()}
    assert {t: found[t] for t in costs} == costs
    assert found["PU"] == found["Core"] == 0


def test_smt_siblings_are_the_cheapest_pair():
    topo = load("Package:2 L2Cache:2 Core:2 PU:2")
    found = {node.type: cost for node, cost in node_costs(topo).items()}
    assert (found["Core"], found["L2Cache"], found["Package"], found["Machine"]) == (1, 2, 3, 4)


@pytest.mark.parametrize("name", ["core2", "ccnuma96"])
def test_lowest_shared_matrix_matches_the_topology(machines, name):
    topo = machines[name]
    pus = list(np.random.default_rng(3).permutation(topo.placeable)[:24])
    index, nodes = lowest_shared_matrix(topo, pus)
    costs = node_costs(topo)
    cost = cost_matrix(topo, pus)
    for a, b in itertools.product(range(len(pus)), repeat=2):
        assert nodes[index[a][b]] is topo.lowest_shared(pus[a], pus[b])
        assert cost[a][b] == (0 if a == b else costs[topo.lowest_shared(pus[a], pus[b])])


def test_objective_counts_each_pair_once_and_ignores_the_diagonal(machines):
    core2 = machines["core2"]  # PUs 0, 4 share an L2; 0, 2 a socket; 0, 1 nothing
    matrix = np.array([[9, 5, 1, 2], [5, 9, 0, 0], [1, 0, 9, 0], [2, 0, 0, 9]])
    assert objective(core2, matrix, [0, 4, 2, 1]) == 5 * 1 + 1 * 2 + 2 * 3


def test_objective_is_invariant_under_thread_relabelling(machines):
    rng = np.random.default_rng(1)
    for topo in machines.values():
        n = min(16, len(topo.placeable))
        matrix = symmetric(rng, n)
        pus = list(rng.permutation(topo.placeable)[:n])
        perm = rng.permutation(n)  # new thread k is old thread perm[k]
        assert objective(topo, matrix[np.ix_(perm, perm)], [pus[p] for p in perm]) == \
            objective(topo, matrix, pus)


# --- domains ---------------------------------------------------------------------------

def test_slots_give_each_thread_a_core_before_sharing_one():
    topo = load("Package:2 Core:2 PU:2")  # cores {0,1} {2,3} | {4,5} {6,7}
    assert domains.slots(topo, 3) == [0, 2, 4, 6]
    assert domains.slots(topo, 4) == [0, 2, 4, 6]
    assert domains.slots(topo, 5) == [0, 1, 2, 4, 6]  # the first second PU
    assert domains.slots(topo, 6) == [0, 1, 2, 4, 5, 6]  # then one in the other socket
    assert domains.slots(topo, 8) == list(range(8))
    with pytest.raises(PlacementError, match="9 threads do not fit on 8"):
        domains.slots(topo, 9)


def test_sockets_are_packages_or_the_first_branching_level(machines):
    ccnuma = machines["ccnuma96"]
    assert [len(s) for s in domains.socket_slots(ccnuma, ccnuma.placeable)] == [6] * 16
    assert domains.socket_slots(machines["nehalem"], machines["nehalem"].placeable) == \
        [[0, 2, 4, 6], [1, 3, 5, 7]]
    no_package = load("Group:3 L2Cache:2 Core:1 PU:1")
    assert domains.socket_slots(no_package, no_package.placeable) == [[0, 1], [2, 3], [4, 5]]
    flat = load("PU:3")
    assert domains.socket_slots(flat, flat.placeable) == [[0, 1, 2]]


def test_sharing_groups_are_the_cores_under_one_cache(machines):
    def groups(topo, pus):
        return [(d.node.type, g) for d, g in domains.sharing_groups(domains.domain_tree(topo, pus))]

    assert groups(machines["core2"], machines["core2"].placeable) == [
        ("L2Cache", [0, 4]), ("L2Cache", [2, 6]), ("L2Cache", [1, 5]), ("L2Cache", [3, 7])]
    assert groups(machines["nehalem"], machines["nehalem"].placeable) == [
        ("L3Cache", [0, 2, 4, 6]), ("L3Cache", [1, 3, 5, 7])]
    smt = load("Package:1 L2Cache:2 Core:2 PU:2")
    assert groups(smt, domains.slots(smt, 4)) == [("L2Cache", [0, 2]), ("L2Cache", [4, 6])]
    assert groups(smt, domains.slots(smt, 8))[:2] == [("Core", [0, 1]), ("Core", [2, 3])]


# --- matching --------------------------------------------------------------------------

def best_perfect_pairing(matrix):
    """Brute force: the largest total weight of a pairing of all threads (one single if odd)."""
    def best(rest):
        if len(rest) < 2:
            return 0
        first, others = rest[0], rest[1:]
        options = [matrix[first][o] + best([x for x in others if x != o]) for o in others]
        if len(rest) % 2:
            options.append(best(others))
        return max(options)
    return best(list(range(len(matrix))))


def pairing_weight(matrix, pairs):
    return sum(matrix[a][b] for a, b in pairs)


def test_the_heavy_middle_edge_is_kept():
    path = np.array([[0, 1, 0, 0], [1, 0, 10, 0], [0, 10, 0, 1], [0, 0, 1, 0]])
    assert thread_pairs(path) == ([(0, 3), (1, 2)], None)


@pytest.mark.parametrize("n", [2, 5, 6, 7, 8, 9])
@pytest.mark.parametrize("density", [1.0, 0.3])
def test_pairs_reach_the_brute_force_optimum(n, density):
    rng = np.random.default_rng(100 * n + int(10 * density))
    for _ in range(10):
        matrix = symmetric(rng, n, density=density)
        pairs, single = thread_pairs(matrix)
        assert sorted([t for p in pairs for t in p] + ([] if single is None else [single])) == \
            list(range(n))
        assert (single is None) == (n % 2 == 0)
        assert pairing_weight(matrix, pairs) == best_perfect_pairing(matrix)


@pytest.mark.parametrize("n, density", [(20, 1.0), (33, 0.2), (64, 0.05), (80, 1.0), (200, 0.02)])
def test_networkx_and_rustworkx_reach_the_same_total_weight(n, density):
    rng = np.random.default_rng(n)
    for _ in range(3):
        matrix = symmetric(rng, n, high=10**6, density=density)
        reference = max_weight_matching(matrix, "networkx")
        fast = max_weight_matching(matrix, "rustworkx")
        assert pairing_weight(matrix, reference) == pairing_weight(matrix, fast)
        assert all(matrix[a][b] > 0 for a, b in fast)


@pytest.mark.parametrize("n", [2, 3, 5, 6, 7, 8, 9])
@pytest.mark.parametrize("density", [1.0, 0.3])
def test_reduced_matching_reaches_the_brute_force_optimum(n, density):
    rng = np.random.default_rng(1000 * n + int(10 * density))
    for _ in range(10):
        matrix = symmetric(rng, n, density=density)
        assert pairing_weight(matrix, max_weight_matching(matrix, "reduced")) == \
            best_perfect_pairing(matrix)


def reduced_cases(rng):
    """Dense, heavy-tailed, block-planted and sparse matrices, even and odd N, whole numbers."""
    for n in (40, 41, 120, 257, 400):
        yield symmetric(rng, n, high=1000)
        yield symmetric(rng, n, high=10**9)
        heavy = np.triu(np.round(rng.exponential(1, (n, n)) ** 3 * 100), 1)
        yield heavy + heavy.T
        blocks = rng.integers(0, 8, n)
        planted = np.where(blocks[:, None] == blocks, 50, 1) + symmetric(rng, n, high=5)
        np.fill_diagonal(planted, 0)
        yield planted
        yield symmetric(rng, n, high=100, density=0.1)


@pytest.mark.slow
def test_reduced_matching_reaches_the_same_total_weight_as_the_whole_graph():
    """Reduced-cost elimination keeps the matching exact: the same weight as rustworkx on every
    edge, on dense, heavy-tailed, planted and sparse matrices, odd N included."""
    rng = np.random.default_rng(16)
    for matrix in reduced_cases(rng):
        reduced = max_weight_matching(matrix, "reduced")
        assert pairing_weight(matrix, reduced) == \
            pairing_weight(matrix, max_weight_matching(matrix, "rustworkx"))
        assert all(matrix[a][b] > 0 for a, b in reduced)
        assert len({t for pair in reduced for t in pair}) == 2 * len(reduced)


def test_reduced_matching_is_exact_on_scaled_and_degenerate_weights():
    rng = np.random.default_rng(3)
    fractional = rng.random((60, 60)) * 1e15
    fractional = fractional + fractional.T  # scaled to integers by integer_matrix, then exact
    weights = integer_matrix(fractional, MATCHING_BOUND)
    assert pairing_weight(weights, max_weight_matching(fractional, "reduced")) == \
        pairing_weight(weights, max_weight_matching(fractional, "rustworkx"))
    assert max_weight_matching(np.zeros((50, 50)), "reduced") == []
    assert len(max_weight_matching(np.ones((51, 51)), "reduced")) == 25


def test_auto_reduces_dense_graphs_only():
    rng = np.random.default_rng(5)
    dense = symmetric(rng, 200, high=1000)
    assert pairing_weight(dense, thread_pairs(dense)[0]) == \
        pairing_weight(dense, max_weight_matching(dense, "rustworkx"))


def test_degenerate_matrices_are_paired():
    assert thread_pairs(np.zeros((5, 5))) == ([(0, 1), (2, 3)], 4)
    assert thread_pairs(np.zeros((1, 1))) == ([], 0)
    pairs, _ = thread_pairs(np.ones((6, 6)))
    assert len(pairs) == 3


# --- partition -------------------------------------------------------------------------

def assert_fits(parts, capacities, sizes):
    load_ = np.bincount(parts, sizes, minlength=len(capacities))
    assert len(parts) == len(sizes) and np.all(load_ <= capacities), (load_, capacities)


@pytest.mark.parametrize("n, capacities", [
    (8, [1] * 8),            # METIS k-way collapses 8 threads into one part here
    (8, [4, 4]), (7, [4, 4]), (6, [4, 4, 4, 4]), (16, [6] * 4), (3, [1] * 16),
    (96, [6] * 16), (50, [10, 20, 30]), (20, [3, 5, 7, 5]),
])
def test_every_part_fits_its_capacity(n, capacities):
    rng = np.random.default_rng(n + len(capacities))
    for trial in range(20):
        matrix = symmetric(rng, n, density=rng.choice([0.1, 0.5, 1.0]))
        parts = partition(matrix, capacities, seed=trial)
        assert_fits(parts, capacities, [1] * n)


def test_pairs_and_singles_fit_odd_capacities():
    rng = np.random.default_rng(5)
    for trial in range(30):
        sizes = [2] * 3 + [1] * 2
        caps = [3, 3, 2]
        assert fits(caps, sizes)
        parts = partition(symmetric(rng, 5), caps, sizes, seed=trial)
        assert_fits(parts, caps, sizes)
    assert not fits([3, 3], [2, 2, 2])
    with pytest.raises(PartitionError, match="do not fit"):
        partition(np.ones((3, 3)), [3, 3], [2, 2, 2])


def test_partition_is_a_local_optimum_and_deterministic():
    rng = np.random.default_rng(9)
    matrix = symmetric(rng, 24, density=0.4)
    caps = [6, 6, 6, 6]
    parts = partition(matrix, caps, seed=3)
    assert parts == partition(matrix, caps, seed=3)
    best = cut(matrix, parts)
    for a, b in itertools.combinations(range(24), 2):
        if parts[a] != parts[b]:
            swapped = list(parts)
            swapped[a], swapped[b] = parts[b], parts[a]
            assert cut(matrix, swapped) >= best


def test_planted_parts_are_found():
    groups = np.repeat(np.arange(4), 6)
    rng = np.random.default_rng(2)
    matrix = np.where(groups[:, None] == groups[None, :], 50, 0) + symmetric(rng, 24, high=5)
    perm = rng.permutation(24)
    parts = partition(matrix[np.ix_(perm, perm)], [6] * 4, seed=1)
    found = {tuple(sorted(groups[perm][np.array(parts) == k])) for k in range(4)}
    assert found == {(g,) * 6 for g in range(4)}


# --- refinement ------------------------------------------------------------------------

def test_refinement_never_raises_j_and_ends_at_a_local_optimum(machines):
    topo = machines["nehalem"]
    costs = cost_matrix(topo, topo.placeable)
    rng = np.random.default_rng(4)
    for n in (5, 8):
        matrix = symmetric(rng, n)
        start = list(rng.permutation(8)[:n])
        result = Refinement(matrix, costs).refine(start)
        j = objective(topo, matrix, [topo.placeable[k] for k in result])
        assert j <= objective(topo, matrix, [topo.placeable[k] for k in start])
        for a, b in itertools.combinations(range(n), 2):
            swapped = list(result)
            swapped[a], swapped[b] = result[b], result[a]
            assert objective(topo, matrix, [topo.placeable[k] for k in swapped]) >= j
        for a, free in itertools.product(range(n), set(range(8)) - set(result)):
            moved = list(result)
            moved[a] = free
            assert objective(topo, matrix, [topo.placeable[k] for k in moved]) >= j


def test_refinement_racing_a_better_j_gives_up_no_higher_than_it_began():
    """With ``beat`` out of reach the search stops early, above ``beat`` and at or below its
    start; with nothing to beat it runs to the end, as without ``beat``."""
    topo = load("Package:4 L3Cache:2 L2Cache:4 Core:2 PU:1")
    costs = cost_matrix(topo, topo.placeable)
    rng = np.random.default_rng(5)
    matrix = symmetric(rng, 64, high=1000)
    start = list(rng.permutation(64))

    def j(positions):
        return objective(topo, matrix, [topo.placeable[k] for k in positions])

    search = Refinement(matrix, costs)
    full = search.refine(start)
    assert search.refine(start, beat=np.inf) == full
    raced = search.refine(start, beat=0.0)
    assert j(full) <= j(raced) <= j(start) and raced != full


def test_prepared_refinement_sums_j_as_the_objective_and_searches_as_one_shot(machines):
    """:class:`Refinement` prepared once gives J equal to :func:`objective` (exact with
    integer weights, free slots and a 1-level tree too), and its searches, after others on
    the same preparation, are those of a fresh one (no state carried from search to search)."""
    rng = np.random.default_rng(6)
    for topo, n in ((machines["nehalem"], 8), (machines["nehalem"], 5),
                    (load("Package:4 L3Cache:2 L2Cache:4 Core:2 PU:2"), 50),
                    (load("Package:1 Core:4 PU:1"), 3)):
        costs = cost_matrix(topo, topo.placeable)
        matrix = symmetric(rng, n, high=1000)
        search = Refinement(matrix, costs)
        for _ in range(3):
            start = [int(k) for k in rng.permutation(len(costs))[:n]]
            assert search.cost(start) == objective(topo, matrix, [topo.placeable[k] for k in start])
            fresh = Refinement(matrix, costs)
            assert search.refine(start) == fresh.refine(start)
            assert search.refine(start, beat=0.0) == Refinement(matrix, costs).refine(start, 0.0)
            assert search.cost(search.refine(start)) <= search.cost(start)
