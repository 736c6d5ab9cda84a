"""Which expansion moves ``alpha_expansion`` solves: it skips a label whose move cannot lower
the energy (failed since the last change, or just accepted), and ends where a plain loop
that solves every label's move in every cycle ends (same labels, same energy)."""

from __future__ import annotations

import numpy as np
import pytest

from graphcut.labeling import PairWeights, alpha_expansion, expansion_network, labeling_energy
from graphcut.solver import min_cut


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
