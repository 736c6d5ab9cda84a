"""The ninth round's development variants of bench/stereo_planes.py, each checked against an
independent evaluation: the fusion move against brute force on tiny problems, the census
variants against the package's own cost volume, the plane map against its definition; and
the held-out pairs refused."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import pytest

from graphcut.labeling import PairWeights, labeling_energy
from graphcut.stereo import census_costs
from graphcut.stereo._costs import _census_codes_numpy

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import stereo_planes as variants  # noqa: E402


def energy(costs, weights, labels):
    return labeling_energy(costs, weights, labels, linear_truncation=variants.TRUNCATION)


def tiny_problem(seed, h=2, w=3, labels=6):
    rng = np.random.default_rng(seed)
    costs = rng.integers(0, 50, (labels, h, w)).astype(np.int32)
    weights = PairWeights(rng.integers(0, 10, (h, w - 1)), rng.integers(0, 10, (h - 1, w)))
    return rng, costs, weights


def brute_force_fusion(costs, weights, current, proposal):
    h, w = current.shape
    return min(energy(costs, weights, np.where(np.array(pick).reshape(h, w), proposal,
                                               current))
               for pick in itertools.product((0, 1), repeat=h * w))


@pytest.mark.parametrize("seed", range(6))
def test_fusion_with_a_constant_proposal_is_the_exact_best_fusion(seed):
    # from a constant map to a constant proposal every pairwise term is submodular
    # (E00 = E11 = 0), so the single cut is the exact optimum among all 2^6 fusions
    rng, costs, weights = tiny_problem(seed)
    current = np.full((2, 3), int(rng.integers(0, 6)))
    proposal = np.full((2, 3), int(rng.integers(0, 6)))
    fused = variants.fuse(costs, weights, current, proposal)
    best = brute_force_fusion(costs, weights, current, proposal)
    assert energy(costs, weights, fused) == min(best, energy(costs, weights, current))
    assert np.isin(fused, [current[0, 0], proposal[0, 0]]).all()


@pytest.mark.parametrize("seed", range(6))
def test_fusion_never_raises_the_energy_and_picks_per_pixel(seed):
    rng, costs, weights = tiny_problem(seed + 10)
    current = rng.integers(0, 6, (2, 3))
    proposal = rng.integers(0, 6, (2, 3))
    fused = variants.fuse(costs, weights, current, proposal)
    assert ((fused == current) | (fused == proposal)).all()
    assert energy(costs, weights, fused) <= energy(costs, weights, current)
    assert energy(costs, weights, fused) >= brute_force_fusion(costs, weights, current,
                                                                proposal)


def test_census_variants_rebuild_the_packages_cost_volume():
    rng = np.random.default_rng(5)
    right = rng.integers(0, 256, size=(12, 20, 3)).astype(np.uint8)
    left = np.roll(right, 2, axis=1)
    expected = census_costs(left, right, max_disparity=4, channel_axis=-1)
    assert np.array_equal(variants.volume(left, right, 4), expected)
    assert np.array_equal(variants.volume(left, right, 4, texture=(1.0, 1.0)), expected)
    # every neighbour "similar": the edge-aware census is the plain one
    assert np.array_equal(variants.volume(left, right, 4, masked=(255, 0)), expected)
    masked = variants.volume(left, right, 4, masked=(20, 10))
    assert masked.shape == expected.shape and not np.array_equal(masked, expected)
    sparse = variants.volume(left, right, 4, step=2)
    assert sparse.shape == expected.shape and not np.array_equal(sparse, expected)
    grey = left.astype(np.int32).sum(axis=-1)
    assert np.array_equal(variants.sparse_census(grey, (9, 7), 1),
                          _census_codes_numpy(grey, (9, 7)))


def test_sparse_census_compares_the_samples_step_pixels_apart():
    grey = np.random.default_rng(6).integers(0, 256, (9, 11))
    codes = variants.sparse_census(grey, (3, 3), 2)
    padded = np.pad(grey, 2, mode="edge")
    for y, x in itertools.product(range(9), range(11)):
        bits = [int(padded[y + 2 + dy, x + 2 + dx] < grey[y, x])
                for dy in (-2, 0, 2) for dx in (-2, 0, 2) if dx or dy]
        assert int(codes[y, x]) == int("".join(map(str, bits)), 2)


def test_similar_neighbours_mark_the_neighbours_of_close_colour():
    levels = np.random.default_rng(7).integers(0, 60, (7, 9, 3))
    codes = variants.similar_neighbours(levels, (3, 3), 20)
    padded = np.pad(levels, ((1, 1), (1, 1), (0, 0)), mode="edge")
    for y, x in itertools.product(range(7), range(9)):
        bits = [int(np.abs(padded[y + 1 + dy, x + 1 + dx] - levels[y, x]).max() <= 20)
                for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dx or dy]
        assert int(codes[y, x]) == int("".join(map(str, bits)), 2)


def test_plane_map_puts_trusted_segments_on_their_plane():
    y, x = np.indices((10, 40))
    segments = (x >= 20).astype(int)
    labels = np.where(segments == 0, 5 + x // 2, 30).astype(np.int32)
    labels[0, 25] = 3  # one outlier in the flat segment: 1 of 200 off the plane
    valid = np.ones(labels.shape, bool)
    out = variants.plane_map(labels, valid, segments, share=0.9, max_label=60)
    assert out[0, 25] == 30 and (out[:, 20:] == 30).all()
    assert np.abs(out[:, :20] - (5 + x[:, :20] / 2)).max() <= 1
    untrusted = variants.plane_map(labels, valid, segments, share=1.0, max_label=60)
    assert untrusted[0, 25] == 3  # below the required share: left as it is


def test_held_out_pairs_are_refused():
    with pytest.raises(SystemExit) as exit_info:
        variants.main(["--scenes", "motorcycle"])
    assert exit_info.value.code == 2
    with pytest.raises(ValueError, match="unknown variant"):
        variants.run_variant("nonsense", {"costs": np.zeros((2, 2, 2), np.int32),
                                          "weights": None, "labels": np.zeros((2, 2), int),
                                          "max_disparity": 1})
