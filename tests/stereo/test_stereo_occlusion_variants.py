"""The occlusion and data-cost variants of bench/stereo_occlusion.py, each construction checked
against a direct (loop or brute-force) evaluation of its definition on tiny pairs, and the
held-out pairs refused."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import pytest

from graphcut.labeling import PairWeights, alpha_expansion, labeling_energy
from graphcut.stereo import census_costs, right_view_labels

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import stereo_occlusion as variants  # noqa: E402


def test_second_pass_costs_follow_their_definition():
    rng = np.random.default_rng(1)
    costs = rng.integers(0, 129, size=(5, 3, 4)).astype(np.int32)
    invalid = rng.random((3, 4)) < 0.5
    background = rng.integers(0, 5, size=(3, 4))
    for kind, beta in (("flat", 4), ("orig", 16), ("half", 1)):
        out = variants.second_pass_costs(costs, invalid, background, kind=kind, beta=beta)
        for d, y, x in itertools.product(range(5), range(3), range(4)):
            base = {"flat": 32, "orig": costs[d, y, x], "half": costs[d, y, x] // 2 + 32}[kind]
            expected = (base + beta * max(0, d - background[y, x]) if invalid[y, x]
                        else costs[d, y, x])
            assert out[d, y, x] == expected


def test_visibility_costs_mark_hidden_matches():
    rng = np.random.default_rng(2)
    labels = rng.integers(0, 4, size=(3, 7))
    costs = rng.integers(0, 100, size=(4, 3, 7)).astype(np.int32)
    out = variants.visibility_costs(costs, labels, 999, margin=1)
    for d, y, x in itertools.product(range(4), range(3), range(7)):
        claimed = [labels[y, x2] for x2 in range(7) if x2 - labels[y, x2] == x - d]
        hidden = x - d < 0 or (claimed and max(claimed) > d + 1)
        assert out[d, y, x] == (999 if hidden else costs[d, y, x])


def test_right_view_costs_give_the_right_views_cheapest_disparities():
    rng = np.random.default_rng(3)
    costs = rng.integers(0, 129, size=(6, 4, 9)).astype(np.int32)
    right = variants.right_view_costs(costs, outside=1 << 20)
    assert np.array_equal(np.argmin(right, axis=0), right_view_labels(costs))


def test_the_occluded_label_costs_a_full_jump_to_every_disparity():
    rng = np.random.default_rng(4)
    costs = rng.integers(0, 60, size=(3, 2, 3)).astype(np.int32)
    weights = PairWeights(rng.integers(0, 9, size=(2, 2)), rng.integers(0, 9, size=(1, 3)))
    extended, occluded = variants.with_occluded_label(costs, 40, truncation=3)
    usable = [0, 1, 2, occluded]

    def direct(labels):  # the energy with V(occluded, d) = w * 3, brute force
        def pair(a, b):
            if a == b:
                return 0
            return 3 if occluded in (a, b) else min(abs(a - b), 3)
        data = sum(40 if labels[y, x] == occluded else costs[labels[y, x], y, x]
                   for y in range(2) for x in range(3))
        right = sum(weights.horizontal[y, x] * pair(labels[y, x], labels[y, x + 1])
                    for y in range(2) for x in range(2))
        down = sum(weights.vertical[0, x] * pair(labels[0, x], labels[1, x]) for x in range(3))
        return data + right + down

    energies = []
    for flat in itertools.product(usable, repeat=6):
        labels = np.array(flat).reshape(2, 3)
        energy = labeling_energy(extended, weights, labels, linear_truncation=3)
        assert energy == direct(labels)
        energies.append(energy)
    result = alpha_expansion(extended, weights, device="cpu", linear_truncation=3)
    assert set(np.unique(result.labels)) <= set(usable)   # the padding labels are never taken
    assert result.energy == direct(result.labels) >= min(energies)


def test_census_volume_rebuilds_the_packages_cost_volume():
    rng = np.random.default_rng(5)
    right = rng.integers(0, 256, size=(12, 20, 3)).astype(np.uint8)
    left = np.roll(right, 2, axis=1)
    expected = census_costs(left, right, max_disparity=4, channel_axis=-1)
    assert np.array_equal(variants.census_volume(left, right, 4), expected)
    combined = variants.census_volume(left, right, 4, combined=True)
    assert combined.shape == expected.shape and not np.array_equal(combined, expected)


def test_warp_to_right_keeps_the_nearest_surface():
    labels = np.array([[0, 1, 2, 2, 0]])
    # left x = 0..4 map to right 0, 0, 0, 1, 4: the largest disparity wins
    assert variants.warp_to_right(labels).tolist() == [[2, 2, -1, -1, 0]]


def test_held_out_pairs_are_refused():
    with pytest.raises(SystemExit) as exit_info:
        variants.main(["--scenes", "cones"])
    assert exit_info.value.code == 2
    with pytest.raises(ValueError, match="unknown variant"):
        variants.run_variant("nonsense", {"costs": np.zeros((2, 2, 2), np.int32),
                                          "weights": None, "labels": np.zeros((2, 2), int)})


def test_error_classes_split_the_bad_pixels():
    truth = np.full((6, 12), 2.0)
    truth[:, 6:9] = 5.0            # a nearer block: it hides left columns 3..5 from the right
    labels = np.zeros((6, 12), dtype=np.int32)                   # every pixel is wrong
    costs = np.random.default_rng(6).integers(0, 100, size=(7, 6, 12)).astype(np.int32)
    shares = variants.error_classes({"truth": truth, "labels": labels, "costs": costs})
    assert shares["bad"] == pytest.approx(100)
    assert shares["border strip"] == pytest.approx(100 * 2 / 12)       # columns 0, 1
    assert shares["occluded"] == pytest.approx(100 * 3 / 12)           # columns 3..5
    assert shares["near depth edges"] == pytest.approx(100 * 5 / 12)   # columns 6..10
    assert shares["rest"] == pytest.approx(100 * 2 / 12)               # columns 2, 11
    assert shares["filled (failed the check)"] + shares["passed the check"] == \
        pytest.approx(100)
    # a final map of its own: only its wrong pixels count, in their classes
    final = np.rint(truth).astype(np.int32)
    final[:, 0] = 0                                                    # wrong in the strip
    final[:, 7] = 0                                                    # wrong near the edges
    mine = variants.error_classes({"truth": truth, "labels": labels, "costs": costs}, final)
    assert mine["bad"] == pytest.approx(100 * 2 / 12)
    assert mine["border strip"] == mine["near depth edges"] == pytest.approx(100 / 12)
    assert mine["occluded"] == mine["rest"] == 0
