"""How ``alpha_expansion`` saves work without changing its result.

- Which moves it solves: it skips a label whose move cannot lower the energy (failed since the
  last change, or just accepted), and ends where a plain loop that solves every label's move in
  every cycle ends (same labels, same energy).
- How a move's energy is found on the CPU: from the pixels it changes when they are few, equal
  to the whole labelling's energy.
- How a move is cut on the CPU: pixels whose side is known in advance are left out of the
  graph; the flow and the source side equal a fresh ``min_cut``'s.
"""

from __future__ import annotations

import numpy as np
import pytest

from graphcut.labeling import PairWeights, alpha_expansion, expansion_network, labeling_energy
from graphcut.labeling._host_cuts import HostMoveCuts, fixed_pixels, reduced_cut
from graphcut.solver import GridNetwork, min_cut


def random_problem(rng, shape, labels, max_cost=30, max_weight=12):
    costs = rng.integers(0, max_cost + 1, size=(labels, *shape)).astype(np.int32)
    weights = PairWeights(rng.integers(0, max_weight + 1, size=(shape[0], shape[1] - 1)),
                          rng.integers(0, max_weight + 1, size=(shape[0] - 1, shape[1])))
    return costs, weights


def plain_expansion(costs, weights, cap):
    """The textbook loop, skipping nothing: every label's move in every cycle, each solved by
    a fresh ``min_cut``, kept when it lowers the energy, until a whole cycle keeps none."""
    labels = np.argmin(costs, axis=0).astype(np.int32)
    energy = labeling_energy(costs, weights, labels, linear_truncation=cap)
    improved = True
    while improved:
        improved = False
        for alpha in range(costs.shape[0]):
            network, constant = expansion_network(costs, weights, labels, alpha,
                                                  linear_truncation=cap)
            cut = min_cut(network, device="cpu")
            proposal = np.where(cut.source_side, labels, alpha).astype(np.int32)
            new_energy = labeling_energy(costs, weights, proposal, linear_truncation=cap)
            assert new_energy == constant + cut.flow
            if new_energy < energy:
                labels, energy, improved = proposal, new_energy, True
    return labels, energy


@pytest.mark.parametrize("cap", [1, 2])
def test_skipping_moves_ends_where_the_plain_loop_ends(cap):
    rng = np.random.default_rng(5)
    for trial in range(8):
        costs, weights = random_problem(rng, (9, 11), labels=int(rng.integers(2, 5)))
        result = alpha_expansion(costs, weights, device="cpu", linear_truncation=cap)
        labels, energy = plain_expansion(costs, weights, cap)
        np.testing.assert_array_equal(result.labels, labels, err_msg=f"trial {trial}")
        assert result.energy == energy and result.converged


def test_a_just_accepted_label_is_not_solved_again_and_could_not_improve():
    """After an accepted move for alpha, alpha's move from the new labelling is solved here
    (it is skipped by the loop) and never lowers the energy; the loop solves no label twice
    without a change in between."""
    rng = np.random.default_rng(6)
    checked = 0
    for _ in range(6):
        costs, weights = random_problem(rng, (8, 10), labels=3, max_weight=20)
        solved = []

        def check(move, network, cut, costs=costs, weights=weights, solved=solved):
            solved.append(move)
            if move.accepted:
                labels = np.where(cut.source_side, labels_before[0], move.alpha)
                again, constant = expansion_network(costs, weights, labels, move.alpha)
                assert constant + min_cut(again, device="cpu").flow >= move.energy_after
                labels_before[0] = labels.astype(np.int32)

        labels_before = [np.argmin(costs, axis=0).astype(np.int32)]
        result = alpha_expansion(costs, weights, device="cpu", callback=check)
        np.testing.assert_array_equal(labels_before[0], result.labels)
        # a label is solved again only after some move was accepted since its last one
        last_change = {}
        version = 0
        for move in solved:
            assert last_change.get(move.alpha, -1) != version, "solved twice with no change"
            version += move.accepted
            last_change[move.alpha] = version
        checked += sum(move.accepted for move in solved)
    assert checked > 6


def random_network(rng, shape, terminal=40, arc=10, backward=True):
    """A grid network with about half of every capacity array zero."""
    def capacities(array_shape, high):
        array = rng.integers(0, high, array_shape).astype(np.int32)
        array[rng.random(array_shape) < 0.5] = 0
        return array

    h, w = shape
    right, down = capacities((h, w - 1), arc), capacities((h - 1, w), arc)
    left = capacities((h, w - 1), arc) if backward else np.zeros((h, w - 1), np.int32)
    up = capacities((h - 1, w), arc) if backward else np.zeros((h - 1, w), np.int32)
    return GridNetwork(capacities(shape, terminal), capacities(shape, terminal), right, down,
                       left, up)


def test_held_pixels_lie_on_their_side_and_the_reduced_cut_is_min_cuts():
    import maxflow

    rng = np.random.default_rng(7)
    graph = maxflow.Graph[int]()
    held = 0
    for trial in range(250):
        shape = tuple(int(n) for n in rng.integers(1, 9, 2))
        network = random_network(rng, shape, backward=bool(trial % 2))
        fresh = min_cut(network, device="cpu")
        fixed_source, fixed_sink = fixed_pixels(network)
        assert not (fixed_source & fixed_sink).any()
        assert fresh.source_side[fixed_source].all() and not fresh.source_side[fixed_sink].any()
        held += int(fixed_source.sum() + fixed_sink.sum())
        reduced = reduced_cut(network, fixed_source, fixed_sink, graph)
        assert reduced.flow == fresh.flow, trial
        np.testing.assert_array_equal(reduced.source_side, fresh.source_side)
    assert held > 1000  # the rule held many pixels, not none


def test_moves_with_few_free_pixels_are_cut_on_the_reduced_graph():
    """Moves of a label that covers most of the grid (its pixels have no capacity) take the
    reduced graph; their flows and cuts equal a fresh min_cut's, as do the others'."""
    rng = np.random.default_rng(8)
    cuts = HostMoveCuts()
    reduced = 0
    for _ in range(12):
        costs = rng.integers(0, 40, (3, 20, 24)).astype(np.int32)
        weights = PairWeights(rng.integers(0, 15, (20, 23)), rng.integers(0, 15, (19, 24)))
        labels = np.where(rng.random((20, 24)) < 0.8, 0, rng.integers(1, 3, (20, 24)))
        for alpha in range(3):
            network, _ = expansion_network(costs, weights, labels.astype(np.int32), alpha)
            cut, fresh = cuts(network), min_cut(network, device="cpu")
            assert cut.flow == fresh.flow
            np.testing.assert_array_equal(cut.source_side, fresh.source_side)
            reduced += "free_pixels" in cut.stats
    assert 12 <= reduced < 36  # label 0's moves at least; not every move


def test_terminal_capacities_that_would_leave_int32_fall_back_to_the_whole_grid():
    """Pixel 2 is held on the source side; its arc into the free pixel 1 would be added to
    pixel 1's source capacity, past int32: the reduced cut declines, the move is cut whole."""
    import maxflow

    big = int(np.iinfo(np.int32).max) - 5
    arcs = np.array([[0, 100]], np.int32)
    network = GridNetwork(np.array([[0, big, big]], np.int32),
                          np.array([[big, big - 50, 0]], np.int32), arcs,
                          np.zeros((0, 3), np.int32), arcs.copy(), np.zeros((0, 3), np.int32))
    fixed_source, fixed_sink = fixed_pixels(network)
    assert fixed_source.tolist() == [[False, False, True]]
    assert fixed_sink.tolist() == [[True, False, False]]
    assert reduced_cut(network, fixed_source, fixed_sink, maxflow.Graph[int]()) is None
    fresh = min_cut(network, device="cpu")
    cut = HostMoveCuts()(network)
    assert cut.flow == fresh.flow
    np.testing.assert_array_equal(cut.source_side, fresh.source_side)


@pytest.mark.parametrize("cap", [1, 3])
def test_the_energy_change_of_a_few_switched_pixels_is_exact(cap):
    from graphcut.labeling._moves import _energy_change, _gather

    rng = np.random.default_rng(9)
    for _ in range(60):
        shape = tuple(int(n) for n in rng.integers(1, 8, 2))
        costs, weights = random_problem(rng, shape, labels=4)
        labels = rng.integers(0, 4, shape).astype(np.int32)
        alpha = int(rng.integers(0, 4))
        moved = (rng.random(shape) < 0.3) & (labels != alpha)
        after = np.where(moved, alpha, labels).astype(np.int32)
        expected = (labeling_energy(costs, weights, after, linear_truncation=cap)
                    - labeling_energy(costs, weights, labels, linear_truncation=cap))
        change = _energy_change(costs[alpha], _gather(costs, labels), weights, labels, moved,
                                np.flatnonzero(moved), alpha, cap)
        assert change == expected


def test_sparse_moves_change_the_labels_as_whole_array_moves(monkeypatch):
    """With every move's energy found from its changed pixels, or with none, the run ends
    with the same labels, energy and moves."""
    import graphcut.labeling._move_states as expansion

    rng = np.random.default_rng(10)
    for _ in range(4):
        costs, weights = random_problem(rng, (12, 13), labels=4, max_weight=25)
        runs = []
        for share in (1, 10 ** 9):  # every move sparse; no move sparse
            monkeypatch.setattr(expansion, "SPARSE_SHARE", share)
            runs.append(alpha_expansion(costs, weights, device="cpu"))
        sparse, whole = runs
        np.testing.assert_array_equal(sparse.labels, whole.labels)
        assert sparse.energy == whole.energy
        assert [m.energy_after for m in sparse.moves] == [m.energy_after for m in whole.moves]
