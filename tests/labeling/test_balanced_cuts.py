"""The CPU cutter of expansion moves solves a *balanced* network (``_host_cuts.balanced``: each
pair of opposite arcs shares its capacity, the terminals net) in place of the move's own: every
cut's capacity drops by the same offset, so the flow (plus the offset) and the largest
minimum-cut source side are the network's.

Oracles: every cut's capacity by brute force on tiny grids, SciPy's maximum flow and the
residual source side (``tests/support/oracle.py``), and the unbalanced cutter (the state before)
on whole expansion runs.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from graphcut.labeling import HostMoveCuts, PairWeights, alpha_expansion, expansion_network
from graphcut.labeling import _host_cuts
from graphcut.labeling._host_cuts import balanced, fixed_pixels, reduced_cut
from graphcut.solver import GridNetwork
from oracle import random_grid_network, random_labeling_problem, scipy_min_cut


def cut_capacity(network: GridNetwork, source_side) -> int:
    """Capacity of the cut with ``source_side`` (bool (H, W)) on the source side."""
    s, t = source_side, ~source_side
    (down, right), (up, left) = network.forward, network.backward
    total = int(network.sink[s].sum(dtype=np.int64)) + int(network.source[t].sum(dtype=np.int64))
    total += int(right[s[:, :-1] & t[:, 1:]].sum(dtype=np.int64))
    total += int(left[t[:, :-1] & s[:, 1:]].sum(dtype=np.int64))
    total += int(down[s[:-1] & t[1:]].sum(dtype=np.int64))
    total += int(up[t[:-1] & s[1:]].sum(dtype=np.int64))
    return total


def move_network(rng, shape, labels=3, cap=1):
    costs = rng.integers(0, 40, (labels, *shape)).astype(np.int32)
    weights = PairWeights(rng.integers(0, 15, (shape[0], shape[1] - 1)),
                          rng.integers(0, 15, (shape[0] - 1, shape[1])))
    current = rng.integers(0, labels, shape).astype(np.int32)
    alpha = int(rng.integers(0, labels))
    return expansion_network(costs, weights, current, alpha, linear_truncation=cap)[0]


@pytest.mark.parametrize("backward", [False, True])
def test_every_cut_of_the_balanced_network_costs_the_same_less_the_offset(backward):
    rng = np.random.default_rng(11)
    for trial in range(40):
        shape = tuple(int(n) for n in rng.integers(1, 4, 2))
        if backward:
            network = random_grid_network(rng, shape, kind=("random", "sparse")[trial % 2])
        else:
            network = move_network(rng, shape) if min(shape) > 1 else \
                random_grid_network(rng, shape, symmetric=False)
        even, offset = balanced(network)
        for name in ("source", "sink"):  # valid int32 capacities, one terminal per pixel
            array = getattr(even, name)
            assert array.dtype == np.int32 and int(array.min(initial=0)) >= 0
        assert not ((even.source > 0) & (even.sink > 0)).any()
        for arrays in (even.forward, even.backward):
            assert all(a.dtype == np.int32 and int(a.min(initial=0)) >= 0 for a in arrays)
        for bits in itertools.product([False, True], repeat=int(np.prod(shape))):
            side = np.array(bits).reshape(shape)
            assert cut_capacity(network, side) == cut_capacity(even, side) + offset, trial


def test_edges_inside_a_region_of_one_label_put_nothing_on_the_terminals():
    """All pixels labelled 0, equal data costs for 0 and alpha = 1: the move's own network has
    terminal capacities from the weights (each edge +w on one end, -w on the other), the
    balanced one none at all (even weights), and its arcs carry half of each edge each way."""
    rng = np.random.default_rng(12)
    shape = (6, 7)
    costs = np.repeat(rng.integers(0, 20, (1, *shape)), 2, axis=0).astype(np.int32)
    weights = PairWeights(2 * rng.integers(1, 9, (6, 6)), 2 * rng.integers(1, 9, (5, 7)))
    network, _ = expansion_network(costs, weights, np.zeros(shape, np.int32), 1)
    assert network.source.any() or network.sink.any()
    even, offset = balanced(network)
    assert not even.source.any() and not even.sink.any()
    np.testing.assert_array_equal(even.forward[1], weights.horizontal)  # 2 w split: w, w
    np.testing.assert_array_equal(even.backward[1], weights.horizontal)
    np.testing.assert_array_equal(even.forward[0], weights.vertical)
    assert offset == int(network.sink.sum())  # no switch pays anything: the flow is 0


def test_capacities_that_could_leave_int32_are_not_balanced():
    big = int(np.iinfo(np.int32).max) - 5
    arcs = np.array([[big]], np.int32)
    network = GridNetwork(np.array([[big, 0]], np.int32), np.array([[0, big]], np.int32), arcs,
                          np.zeros((0, 2), np.int32), np.zeros((1, 1), np.int32),
                          np.zeros((0, 2), np.int32))
    assert balanced(network) is None
    cut = HostMoveCuts()(network)  # solved on the network as given
    flow, side = scipy_min_cut(network)
    assert cut.flow == flow and "balanced" not in cut.stats
    np.testing.assert_array_equal(cut.source_side, side)


def test_whole_grid_moves_are_cut_balanced_with_scipys_flow_and_source_side():
    """Expansion-move networks with most pixels free (the objects' moves) are cut on the whole
    grid, balanced; flows and source sides equal SciPy's maximum flow and residual source side,
    also for moves with a linear truncation and for networks with backward arcs."""
    rng = np.random.default_rng(13)
    cuts = HostMoveCuts()
    balanced_cuts = 0
    for trial in range(24):
        shape = (int(rng.integers(5, 14)), int(rng.integers(5, 14)))
        network = move_network(rng, shape, cap=1 + trial % 3) if trial % 4 else \
            random_grid_network(rng, shape)
        cut = cuts(network, label=trial % 3)
        flow, side = scipy_min_cut(network)
        assert cut.flow == flow, trial
        np.testing.assert_array_equal(cut.source_side, side)
        balanced_cuts += bool(cut.stats.get("balanced"))
    assert balanced_cuts >= 12  # most moves here are solved on the whole grid


def test_the_reduced_graph_balanced_gives_scipys_flow_and_source_side():
    rng = np.random.default_rng(14)
    graph = __import__("maxflow").Graph[int]()
    reduced = 0
    for trial in range(40):
        shape = (int(rng.integers(3, 12)), int(rng.integers(3, 12)))
        costs = rng.integers(0, 40, (3, *shape)).astype(np.int32)
        weights = PairWeights(rng.integers(0, 15, (shape[0], shape[1] - 1)),
                              rng.integers(0, 15, (shape[0] - 1, shape[1])))
        labels = np.where(rng.random(shape) < 0.8, 0, rng.integers(1, 3, shape))
        network, _ = expansion_network(costs, weights, labels.astype(np.int32), trial % 3)
        if trial % 5 == 4:
            network = random_grid_network(rng, shape, kind="sparse")
        fixed_source, fixed_sink = fixed_pixels(network)
        cut = reduced_cut(network, fixed_source, fixed_sink, graph)
        flow, side = scipy_min_cut(network)
        assert cut.flow == flow, trial
        np.testing.assert_array_equal(cut.source_side, side)
        reduced += cut.stats["free_pixels"] < network.source.size
    assert reduced > 20


@pytest.mark.parametrize("cap", [1, 2])
def test_expansion_runs_make_the_same_moves_as_the_unbalanced_cutter(monkeypatch, cap):
    """The state before (no balancing) is the oracle: the same moves (flows, energies, pixels
    changed) and the same labels, on problems where some moves are reduced and some whole."""
    rng = np.random.default_rng(15)
    for trial in range(6):
        shape = (int(rng.integers(12, 30)), int(rng.integers(12, 30)))
        costs, weights = random_labeling_problem(rng, shape)
        costs[0] //= 3  # a background label that ends covering most pixels
        runs = []
        for flag in (True, False):
            monkeypatch.setattr(_host_cuts, "BALANCE", flag)
            monkeypatch.setattr(_host_cuts, "BALANCE_REDUCED", flag)
            runs.append(alpha_expansion(costs, weights, device="cpu", cuts=HostMoveCuts(),
                                        linear_truncation=cap))
        now, before = runs
        np.testing.assert_array_equal(now.labels, before.labels)
        assert now.energy == before.energy
        assert [(m.alpha, m.flow, m.energy_after, m.changed) for m in now.moves] == \
            [(m.alpha, m.flow, m.energy_after, m.changed) for m in before.moves], trial
