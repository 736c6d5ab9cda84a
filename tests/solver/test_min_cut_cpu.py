"""The CPU backend (PyMaxflow) against scipy's maximum flow and a residual-reachability cut."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle import (GRID_KINDS, INT32_MAX, random_csr_network, random_grid_network,
                    residual_source_side, scipy_max_flow, scipy_min_cut)

from graphcut.solver import CSRNetwork, GridNetwork, cut_capacity, min_cut


def check(network, expected_flow: int | None = None) -> int:
    """Flow equals scipy's, the cut is a certificate, the side is the residual one."""
    result = min_cut(network, device="cpu")
    flow, side = scipy_min_cut(network)
    assert result.backend == "cpu"
    assert isinstance(result.flow, int)
    assert result.flow == flow
    if expected_flow is not None:
        assert result.flow == expected_flow
    assert result.source_side.dtype == bool
    assert result.source_side.shape == side.shape
    assert cut_capacity(network, result.source_side) == result.flow
    assert cut_capacity(network, side) == flow  # the oracle certifies itself too
    np.testing.assert_array_equal(result.source_side, side)
    if isinstance(network, CSRNetwork):
        assert result.source_side[network.source] and not result.source_side[network.sink]
    return result.flow


# ---------------------------------------------------------------- grids

GRID_SHAPES = [(1, 1), (1, 2), (2, 1), (1, 17), (17, 1), (2, 2), (5, 7), (12, 9), (24, 31)]


@pytest.mark.parametrize("kind", GRID_KINDS)
@pytest.mark.parametrize("symmetric", [True, False], ids=["symmetric", "asymmetric"])
@pytest.mark.parametrize("shape", GRID_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_random_grids(shape, kind, symmetric):
    rng = np.random.default_rng([shape[0], shape[1], GRID_KINDS.index(kind), symmetric])
    for _ in range(3):
        check(random_grid_network(rng, shape, kind=kind, symmetric=symmetric))


def test_zero_grid_has_zero_flow_and_empty_source_side():
    grid = random_grid_network(np.random.default_rng(0), (6, 5), kind="zero")
    assert check(grid, expected_flow=0) == 0
    # Every pixel can reach nothing, hence not t: all pixels are on the source side.
    assert min_cut(grid, device="cpu").source_side.all()


def test_grid_with_weak_terminals_and_strong_n_links():
    rng = np.random.default_rng(5)
    grid = random_grid_network(rng, (15, 15), kind="saturated", max_capacity=10_000,
                               terminal_max=10)
    check(grid)


def test_grid_flow_above_int32():
    # Every pixel has s -> p and p -> t near the int32 limit: the flow is their sum, > 2**31.
    shape = (4, 5)
    big = np.full(shape, INT32_MAX - 7)
    grid = GridNetwork(big, big, np.full((4, 4), INT32_MAX), np.full((3, 5), INT32_MAX))
    assert check(grid, expected_flow=20 * (INT32_MAX - 7)) > 2**31


def test_grid_with_large_asymmetric_capacities():
    rng = np.random.default_rng(11)
    for _ in range(4):
        grid = random_grid_network(rng, (6, 7), kind="random", max_capacity=INT32_MAX,
                                   symmetric=False)
        check(grid)


def test_one_pixel_grid():
    grid = GridNetwork([[7]], [[3]], np.zeros((1, 0), int), np.zeros((0, 1), int))
    check(grid, expected_flow=3)
    assert min_cut(grid, device="cpu").source_side.tolist() == [[True]]


# ---------------------------------------------------------------- general networks

@pytest.mark.parametrize("n, m, extra", [(5, 6, 2), (30, 45, 4), (30, 60, 0), (15, 200, 3),
                                         (60, 300, 8)],
                         ids=["tiny", "sparse", "sparse-no-extra", "dense", "medium"])
def test_random_csr_networks(n, m, extra):
    rng = np.random.default_rng([n, m, extra])
    for _ in range(6):
        check(random_csr_network(rng, n, m, source_degree=extra, sink_degree=extra))


def test_multigraph_with_parallel_arcs_is_summed():
    rng = np.random.default_rng(2)
    n, m = 6, 80  # 30 ordered pairs: many parallel arcs
    tails, heads = rng.integers(0, n, m), rng.integers(0, n, m)
    caps = rng.integers(0, 50, m)
    network = CSRNetwork.from_arcs(n, 0, 5, tails, heads, caps)
    check(network)
    merged = CSRNetwork.from_arcs(n, 0, 5, *_merged(n, tails, heads, caps))
    assert min_cut(merged, device="cpu").flow == scipy_max_flow(network)


def _merged(n, tails, heads, caps):
    totals = {}
    for u, v, c in zip(tails.tolist(), heads.tolist(), caps.tolist()):
        totals[(u, v)] = totals.get((u, v), 0) + c
    pairs = list(totals)
    return ([u for u, _ in pairs], [v for _, v in pairs], [totals[p] for p in pairs])


def test_bipartite_matching_networks():
    rng = np.random.default_rng(3)
    for left, right in [(4, 4), (10, 7), (20, 20)]:
        s, t = 0, left + right + 1
        lefts, rights = np.arange(1, left + 1), np.arange(left + 1, left + right + 1)
        edges = rng.random((left, right)) < 0.3
        u, v = np.nonzero(edges)
        tails = np.concatenate([np.zeros(left, int), lefts[u], rights])
        heads = np.concatenate([lefts, rights[v], np.full(right, t)])
        caps = np.ones(tails.size, dtype=int)
        network = CSRNetwork.from_arcs(left + right + 2, s, t, tails, heads, caps)
        flow = check(network)
        assert flow <= min(left, right)


def test_layered_network():
    rng = np.random.default_rng(4)
    layers, width = 6, 5
    n = layers * width + 2
    s, t = n - 2, n - 1
    ids = np.arange(layers * width).reshape(layers, width)
    tails, heads = [np.full(width, s), ids[-1]], [ids[0], np.full(width, t)]
    for k in range(layers - 1):
        u = rng.integers(0, width, 3 * width)
        v = rng.integers(0, width, 3 * width)
        tails.append(ids[k][u])
        heads.append(ids[k + 1][v])
    tails, heads = np.concatenate(tails), np.concatenate(heads)
    check(CSRNetwork.from_arcs(n, s, t, tails, heads, rng.integers(1, 20, tails.size)))


def test_arcs_into_source_and_out_of_sink_carry_nothing():
    # s=0, t=3: 0->1 (5), 1->3 (4), plus 1->0 (9), 2->0 (6), 3->2 (8), 3->1 (7).
    network = CSRNetwork.from_arcs(4, 0, 3, [0, 1, 1, 2, 3, 3], [1, 3, 0, 0, 2, 1],
                                   [5, 4, 9, 6, 8, 7])
    check(network, expected_flow=4)


def test_direct_source_sink_arcs_add_to_the_flow():
    network = CSRNetwork.from_arcs(4, 0, 3, [0, 0, 1, 0, 2], [3, 1, 3, 3, 3], [10, 6, 2, 5, 9])
    check(network, expected_flow=10 + 5 + 2)


def test_no_path_from_source_to_sink():
    # 0 -> 1 -> 2 and 3 -> 4 -> 5 with s = 0, t = 5: nothing connects them.
    network = CSRNetwork.from_arcs(6, 0, 5, [0, 1, 3, 4, 5], [1, 2, 4, 5, 3], [3, 3, 3, 3, 3])
    check(network, expected_flow=0)
    side = residual_source_side(network)
    assert side.tolist() == [True, True, True, False, False, False]


def test_only_self_loops_and_zero_capacities():
    network = CSRNetwork.from_arcs(3, 0, 2, [0, 1, 0], [0, 1, 2], [5, 5, 0])
    assert network.num_arcs == 0
    check(network, expected_flow=0)


def test_capacities_near_int32_limit_give_flows_above_it():
    n = 8
    s, t = 0, n - 1
    inner = np.arange(1, n - 1)
    tails = np.concatenate([np.full(inner.size, s), inner])
    heads = np.concatenate([inner, np.full(inner.size, t)])
    caps = np.full(tails.size, INT32_MAX)
    flow = check(CSRNetwork.from_arcs(n, s, t, tails, heads, caps))
    assert flow == 6 * INT32_MAX > 2**32


def test_random_networks_with_huge_capacities_and_antiparallel_arcs():
    rng = np.random.default_rng(6)
    flows = []
    for n in (4, 7, 12):
        pairs = np.array([(u, v) for u in range(n) for v in range(n) if u != v])
        chosen = pairs[rng.random(len(pairs)) < 0.6]
        caps = rng.integers(INT32_MAX - 10**6, INT32_MAX + 1, len(chosen))
        network = CSRNetwork.from_arcs(n, 0, n - 1, chosen[:, 0], chosen[:, 1], caps)
        flows.append(check(network))
    assert max(flows) > 2**32


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(2, 9), seed=st.integers(0, 2**32 - 1), m=st.integers(0, 40),
       max_capacity=st.sampled_from([1, 3, 100, INT32_MAX // 64]))
def test_property_small_networks(n, seed, m, max_capacity):
    rng = np.random.default_rng(seed)
    source, sink = rng.choice(n, size=2, replace=False)
    check(random_csr_network(rng, n, m, max_capacity=max_capacity, source=int(source),
                             sink=int(sink), source_degree=2, sink_degree=2))


# -- CSRNetwork built directly from CSR arrays: one validation for every constructor -------------

def _direct(n, s, t, offsets, heads, caps):
    return CSRNetwork(n, s, t, np.asarray(offsets), np.asarray(heads), np.asarray(caps))


def test_direct_csr_parallel_arcs_are_summed():
    # three parallel s -> 1 arcs of capacity 5, then 1 -> t of 100: the flow is 15
    network = _direct(3, 0, 2, [0, 3, 4, 4], [1, 1, 1, 2], [5, 5, 5, 100])
    assert network.num_arcs == 2
    np.testing.assert_array_equal(network.capacities, [15, 100])
    assert min_cut(network, device="cpu").flow == 15
    expected = CSRNetwork.from_arcs(3, 0, 2, [0, 0, 0, 1], [1, 1, 1, 2], [5, 5, 5, 100])
    for field in ("offsets", "heads", "capacities"):
        np.testing.assert_array_equal(getattr(network, field), getattr(expected, field))


def test_direct_csr_self_loops_zero_caps_and_unsorted_heads_are_canonicalised():
    network = _direct(4, 0, 3, [0, 3, 5, 6, 6], [2, 0, 1, 3, 1, 3], [7, 9, 4, 0, 1, 2])
    expected = CSRNetwork.from_arcs(4, 0, 3, [0, 0, 0, 1, 1, 2], [2, 0, 1, 3, 1, 3],
                                    [7, 9, 4, 0, 1, 2])
    for field in ("offsets", "heads", "capacities"):
        np.testing.assert_array_equal(getattr(network, field), getattr(expected, field))
    assert min_cut(network, device="cpu").flow == scipy_max_flow(expected)


@pytest.mark.parametrize("offsets, heads, caps, match", [
    ([0, 1, 2], [1, 2], [1, 1], "n \\+ 1"),
    ([0, 2, 1, 2], [1, 2], [1, 1], "must not decrease"),
    ([1, 1, 2, 2], [1, 2], [1, 1], "run from 0"),
    ([0, 1, 2, 2], [1, 5], [1, 1], "out of range"),
    ([0, 1, 2, 2], [1, 2], [1, -1], "negative"),
    ([0, 1, 2, 2], [1, 2], [1], "equal length"),
    ([0, 2, 2, 2], [1, 1], [2**31 - 1, 1], "int32 limit"),
])
def test_direct_csr_bad_arrays(offsets, heads, caps, match):
    with pytest.raises(ValueError, match=match):
        _direct(3, 0, 2, offsets, heads, caps)
