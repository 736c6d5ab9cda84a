"""A move that changes no pixel is proved so by a flow on a region of the grid
(``_regions.unchanged_cut``): the flow of the region's own network reaching the capacity of
the cut that keeps every pixel. Whenever it answers, the answer is SciPy's maximum flow and
residual source side (``tests/support/oracle.py``); it declines when the region's flow falls
short, and whole expansion runs make the same moves with and without it.
"""

from __future__ import annotations

import numpy as np
import pytest

from graphcut.labeling import HostMoveCuts, PairWeights, alpha_expansion, expansion_network
from graphcut.labeling import _host_cuts, _regions
from graphcut.labeling._host_cuts import balanced
from graphcut.labeling._regions import region_arcs, unchanged_cut
from graphcut.solver import GridNetwork
from oracle import random_grid_network, random_labeling_problem, scipy_min_cut


def graph():
    return __import__("maxflow").Graph[int]()


def converged_moves(rng, shape, labels=3):
    """Balanced networks of every label's move from an expansion run's final labelling (they
    change no pixel), and of moves from random labellings (which mostly do)."""
    costs = rng.integers(0, 40, (labels, *shape)).astype(np.int32)
    weights = PairWeights(rng.integers(0, 12, (shape[0], shape[1] - 1)),
                          rng.integers(0, 12, (shape[0] - 1, shape[1])))
    final = alpha_expansion(costs, weights, device="cpu").labels
    start = rng.integers(0, labels, shape).astype(np.int32)
    for current in (final, start):
        for alpha in range(labels):
            yield balanced(expansion_network(costs, weights, current, alpha)[0])[0]


def test_whenever_the_certificate_answers_it_is_scipys_cut(monkeypatch):
    monkeypatch.setattr(_regions, "TRY_AT_MOST", 1.0)  # tried on every network here
    rng = np.random.default_rng(21)
    answered = declined = 0
    for trial in range(12):
        shape = (int(rng.integers(4, 16)), int(rng.integers(4, 16)))
        for network in converged_moves(rng, shape):
            cut = unchanged_cut(network, graph())
            flow, side = scipy_min_cut(network)
            if cut is None:
                declined += 1
                continue
            answered += 1
            assert cut.flow == flow and side.all(), trial
            np.testing.assert_array_equal(cut.source_side, side)
    assert answered >= 30 and declined >= 10  # the converged moves, and the others


def test_random_networks_with_one_terminal_per_pixel():
    """Networks that are not expansion moves (backward arcs, sparse capacities)."""
    rng = np.random.default_rng(22)
    answered = 0
    for trial in range(150):
        shape = (int(rng.integers(1, 9)), int(rng.integers(1, 9)))
        network, _ = balanced(random_grid_network(rng, shape, kind=("random", "sparse")[
            trial % 2], terminal_max=int(rng.integers(1, 60))))
        sink = np.where(rng.random(shape) < 0.15, network.sink, 0).astype(np.int32)
        network = GridNetwork(network.source, sink, network.forward[1], network.forward[0],
                              network.backward[1], network.backward[0])
        cut = unchanged_cut(network, graph())
        flow, side = scipy_min_cut(network)
        if cut is not None:  # (declining is always allowed: the whole grid is cut then)
            answered += 1
            assert cut.flow == flow, trial
            np.testing.assert_array_equal(cut.source_side, side)
    assert answered >= 40


def test_supply_beyond_the_region_is_not_seen_and_the_move_is_cut_whole():
    """One pixel wants to switch (sink capacity 5); the only source capacity that can pay for
    it is REACH + 2 steps away along a row of strong arcs. The whole network keeps every pixel
    (flow 5), but the region around the pixel has no supply: the certificate declines, and the
    cutter's answer is still SciPy's."""
    width = _regions.REACH + 4
    source = np.zeros((1, width), np.int32)
    source[0, -1] = 9
    sink = np.zeros((1, width), np.int32)
    sink[0, 0] = 5
    arcs = np.full((1, width - 1), 20, np.int32)
    network = GridNetwork(source, sink, arcs, np.zeros((0, width), np.int32), arcs.copy(),
                          np.zeros((0, width), np.int32))
    flow, side = scipy_min_cut(network)
    assert flow == 5 and side.all()
    assert unchanged_cut(network, graph()) is None
    cut = HostMoveCuts()(network)
    assert cut.flow == flow
    np.testing.assert_array_equal(cut.source_side, side)


def test_region_arcs_are_the_arcs_between_region_pixels():
    rng = np.random.default_rng(23)
    network = random_grid_network(rng, (5, 6))
    region = rng.random((5, 6)) < 0.6
    where, arcs = region_arcs(network, region)
    got = set()
    for tails, heads, forward, backward in arcs:
        got |= {(int(where[t]), int(where[h]), int(f), int(b))
                for t, h, f, b in zip(tails, heads, forward, backward)}
    expected = set()
    (down, right), (up, left) = network.forward, network.backward
    for y in range(5):
        for x in range(6):
            if x < 5 and region[y, x] and region[y, x + 1]:
                expected.add((y * 6 + x, y * 6 + x + 1, int(right[y, x]), int(left[y, x])))
            if y < 4 and region[y, x] and region[y + 1, x]:
                expected.add((y * 6 + x, y * 6 + x + 6, int(down[y, x]), int(up[y, x])))
    assert got == expected


@pytest.mark.parametrize("cap", [1, 2])
def test_expansion_runs_make_the_same_moves_with_and_without_the_certificate(monkeypatch,
                                                                              cap):
    rng = np.random.default_rng(24)
    certified = 0
    solve = HostMoveCuts.__call__

    def counting(self, network, label=None):
        nonlocal certified
        cut = solve(self, network, label)
        certified += "certified_pixels" in cut.stats
        return cut

    monkeypatch.setattr(_regions, "TRY_AT_MOST", 0.3)
    for trial in range(5):
        shape = (int(rng.integers(15, 30)), int(rng.integers(15, 30)))
        costs, weights = random_labeling_problem(rng, shape)
        runs = []
        for flag in (True, False):
            monkeypatch.setattr(_host_cuts, "CERTIFY", flag)
            monkeypatch.setattr(HostMoveCuts, "__call__", counting)
            runs.append(alpha_expansion(costs, weights, device="cpu", cuts=HostMoveCuts(),
                                        linear_truncation=cap))
        now, before = runs
        np.testing.assert_array_equal(now.labels, before.labels)
        assert [(m.alpha, m.flow, m.energy_after, m.changed) for m in now.moves] == \
            [(m.alpha, m.flow, m.energy_after, m.changed) for m in before.moves], trial
    assert certified >= 5
