"""Stereo by alpha-expansion: energy terms, the move construction, the expansion loop,
post-processing, files and the ``graphcut stereo`` command.

Oracles: brute force over every cut of tiny move problems, scipy's maximum flow and residual
source set (tests/oracle.py), direct loops over the definitions of the census cost and the
right view's labels, synthetic scenes with known disparities, and the sample's ground truth.
The GPU path is checked against these on the CPU in test_stereo_kernels.py and on a GPU by the
`gpu` tests here.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image
from skimage import data

from graphcut.cli import main
from graphcut.solver import cut_capacity, min_cut
from graphcut.stereo import (CensusParameters, EdgeRefinement, PairWeights, alpha_expansion,
                             bad_pixel_rate,
                             census_costs, check_energy_range, data_costs, disparity,
                             expansion_network, fill_from_background, inconsistent_pixels,
                             labeling_energy, memory_needed, right_view_labels,
                             smoothness_weights)
from graphcut.stereo.io import (InstanceDump, colorize_disparity, preview_image,
                                read_disparity, write_disparity, write_preview)
from graphcut.stereo.synthetic import synthetic_scene
from oracle import residual_source_side, scipy_max_flow

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "stereo"
MAX_D = 12


def layered_scene(height=64, width=96):
    """A rectified pair of three fronto-parallel textured layers with known disparities.

    Returns (left, right, ground truth, non-occluded mask). Layers (back to front): gravel at
    disparity 2, a grass rectangle at 6, a brick disk at 10. Each layer's texture is fixed to
    the layer, so right (y, x) shows the topmost layer k covering left (y, x + d_k).
    """
    pad = MAX_D
    yy, xx = np.mgrid[0:height, 0:width + pad]
    textures = [image[100:100 + height, 50:50 + width + pad]
                for image in (data.gravel(), data.grass(), data.brick())]
    disparities = [2, 6, 10]
    masks = [np.ones(yy.shape, dtype=bool), (yy >= 10) & (yy < 50) & (xx >= 20) & (xx < 60),
             (yy - 36) ** 2 + (xx - 70) ** 2 < 15 ** 2]
    left = np.zeros((height, width), dtype=np.uint8)
    right = np.zeros_like(left)
    layer_left = np.zeros((height, width), dtype=int)
    layer_right = np.zeros_like(layer_left)
    for k, (texture, mask, d) in enumerate(zip(textures, masks, disparities)):
        seen_left, seen_right = mask[:, :width], mask[:, d:d + width]
        left[seen_left] = texture[:, :width][seen_left]
        right[seen_right] = texture[:, d:d + width][seen_right]
        layer_left[seen_left] = k
        layer_right[seen_right] = k
    truth = np.take(disparities, layer_left)
    ys, xs = np.mgrid[0:height, 0:width]
    matched = xs - truth
    visible = (matched >= 0) & (layer_right[ys, np.clip(matched, 0, None)] == layer_left)
    return left, right, truth, visible


def random_problem(rng, shape=(5, 7), labels=4, max_cost=20, max_weight=9):
    costs = rng.integers(0, max_cost + 1, size=(labels, *shape)).astype(np.int32)
    weights = PairWeights(rng.integers(0, max_weight + 1, size=(shape[0], shape[1] - 1)),
                          rng.integers(0, max_weight + 1, size=(shape[0] - 1, shape[1])))
    return costs, weights


# ---------------------------------------------------------------------------- energy terms

def test_data_costs_shape_truncation_and_unmatched_columns():
    rng = np.random.default_rng(0)
    left = rng.integers(0, 256, size=(6, 10), dtype=np.uint8)
    right = rng.integers(0, 256, size=(6, 10), dtype=np.uint8)
    costs = data_costs(left, right, max_disparity=3, truncation=15, birchfield_tomasi=False)
    assert costs.shape == (4, 6, 10) and costs.dtype == np.int32
    assert costs.min() >= 0 and costs.max() <= 15
    for d in range(4):
        expected = np.minimum(np.abs(left[:, d:].astype(int) - right[:, :10 - d]), 15)
        np.testing.assert_array_equal(costs[d, :, d:], expected)
        assert (costs[d, :, :d] == 15).all()  # x - d < 0: no match inside the right image


def test_data_costs_argmin_recovers_a_constant_shift_in_colour():
    left = data.astronaut()[200:240, 200:280]
    right = np.roll(left, -5, axis=1)  # left (y, x) == right (y, x - 5)
    for bt in (True, False):
        costs = data_costs(left, right, max_disparity=8, channel_axis=-1, birchfield_tomasi=bt)
        assert (costs[5, :, 5:-5] == 0).all()
        mean_cost = costs[:, :, 8:-5].mean(axis=(1, 2))
        assert np.delete(mean_cost, 5).min() > 1  # every wrong shift costs clearly more


def test_birchfield_tomasi_is_insensitive_to_half_pixel_sampling():
    x = np.arange(40, dtype=np.float64)
    signal = 100 + 40 * np.sin(x / 5.0)
    ramp = np.interp(x + 0.5, x, signal)  # the same signal sampled half a pixel to the right
    left = np.tile(np.rint(ramp), (3, 1)).astype(np.uint8)
    right = np.tile(np.rint(signal), (3, 1)).astype(np.uint8)
    bt = data_costs(left, right, max_disparity=0, birchfield_tomasi=True, truncation=255)
    ad = data_costs(left, right, max_disparity=0, birchfield_tomasi=False, truncation=255)
    assert (bt <= ad).all()
    assert ad[0, :, 1:-1].max() >= 3  # plain differences see the half-pixel offset
    assert bt[0, :, 1:-1].max() <= 1  # BT does not (up to rounding to the uint8 grid)


@pytest.mark.parametrize("kwargs, error", [
    ({"max_disparity": -1}, ValueError),
    ({"max_disparity": 10}, ValueError),      # not below the width
    ({"max_disparity": 2.0}, TypeError),
    ({"max_disparity": 2, "truncation": -3}, ValueError),
])
def test_data_costs_rejects_bad_options(kwargs, error):
    image = np.zeros((4, 10), dtype=np.uint8)
    with pytest.raises(error):
        data_costs(image, image, **kwargs)


def test_data_costs_rejects_pairs_of_different_size():
    with pytest.raises(ValueError, match="differ in size"):
        data_costs(np.zeros((4, 10)), np.zeros((4, 11)), max_disparity=2)
    with pytest.raises(ValueError, match="channel_axis"):
        data_costs(np.zeros((4, 10, 3)), np.zeros((4, 10, 3)), max_disparity=2)


def test_smoothness_weights_follow_the_intensity_edges():
    image = np.zeros((4, 6), dtype=np.uint8)
    image[:, 3:] = 200  # a vertical edge between columns 2 and 3
    weights = smoothness_weights(image, weight=5, edge_threshold=8, flat_factor=3)
    assert weights.horizontal.shape == (4, 5) and weights.vertical.shape == (3, 6)
    expected = np.full((4, 5), 15)
    expected[:, 2] = 5
    np.testing.assert_array_equal(weights.horizontal, expected)
    assert (weights.vertical == 15).all()


# ----------------------------------------------------------------------------- AD-census

def census_cost_by_definition(left, right, y, x, d, parameters):
    """The AD-census raw cost of left (y, x) at disparity d, from the definition with loops."""
    h, w, channels = left.shape
    scale = parameters.scale
    if x - d < 0:
        return scale
    rx, ry = parameters.window[0] // 2, parameters.window[1] // 2

    def code(image, cy, cx):
        grey = image.astype(int).sum(axis=-1)
        bits = []
        for dy in range(-ry, ry + 1):
            for dx in range(-rx, rx + 1):
                if dx or dy:
                    ny, nx = min(max(cy + dy, 0), h - 1), min(max(cx + dx, 0), w - 1)
                    bits.append(grey[ny, nx] < grey[cy, cx])
        return bits

    hamming = sum(a != b for a, b in zip(code(left, y, x), code(right, y, x - d)))
    difference = np.abs(left[y, x].astype(int) - right[y, x - d].astype(int)).sum()
    census = round(scale * (1 - np.exp(-hamming / parameters.census_lambda)))
    colour = round(scale * (1 - np.exp(-difference / channels / parameters.colour_lambda)))
    return census + colour


@pytest.mark.parametrize("channels", [1, 3])
def test_census_costs_follow_their_definition(channels):
    rng = np.random.default_rng(4)
    shape = (7, 11) if channels == 1 else (7, 11, 3)
    left = rng.integers(0, 256, size=shape, dtype=np.uint8)
    right = rng.integers(0, 256, size=shape, dtype=np.uint8)
    parameters = CensusParameters(window=(5, 3), aggregation_radius=0, aggregation="box")
    axis = None if channels == 1 else -1
    costs = census_costs(left, right, max_disparity=4, channel_axis=axis, parameters=parameters)
    assert costs.shape == (5, 7, 11) and costs.dtype == np.int32
    left3, right3 = left.reshape(7, 11, channels), right.reshape(7, 11, channels)
    for d in range(5):
        for y in range(7):
            for x in range(11):
                assert costs[d, y, x] == census_cost_by_definition(left3, right3, y, x, d,
                                                                   parameters), (d, y, x)
    # aggregation: the rounded mean over the (2r+1)^2 box, border pixels repeated
    aggregated = census_costs(left, right, max_disparity=4, channel_axis=axis,
                              parameters=parameters._replace(aggregation_radius=1))
    padded = np.pad(costs, ((0, 0), (1, 1), (1, 1)), mode="edge").astype(int)
    box = sum(padded[:, dy:dy + 7, dx:dx + 11] for dy in range(3) for dx in range(3))
    np.testing.assert_array_equal(aggregated, (box + 4) // 9)


def test_census_costs_find_a_shift_and_ignore_gain_and_bias():
    left = data.astronaut()[180:240, 180:300]
    right = np.roll(left, -7, axis=1)  # left (y, x) == right (y, x - 7)
    darker = np.clip(right.astype(int) * 0.8 + 10, 0, 255).astype(np.uint8)
    # the census part alone, with the lambda the thresholds below were set for
    parameters = CensusParameters(census_lambda=20.0, colour_lambda=1e6)
    for other in (right, darker):
        costs = census_costs(left, other, max_disparity=12, channel_axis=-1,
                             parameters=parameters)
        inner = costs[:, 4:-4, 16:-12].astype(float)
        if other is right:
            assert (inner[7] == 0).all()
        # gain and bias keep the census codes up to rounding (1 or 2 bits in 62 differ)
        assert inner[7].mean() < 5
        assert np.delete(inner.mean(axis=(1, 2)), 7).min() > 5 * inner[7].mean() + 5


@pytest.mark.parametrize("parameters, message", [
    (CensusParameters(window=(8, 7)), "window"),
    (CensusParameters(window=(11, 7)), "window"),
    (CensusParameters(census_lambda=float("nan")), "census_lambda"),
    (CensusParameters(colour_lambda=0), "colour_lambda"),
    (CensusParameters(scale=0), "scale"),
    (CensusParameters(aggregation_radius=99), "aggregation_radius"),
])
def test_census_costs_reject_bad_parameters(parameters, message):
    image = np.zeros((8, 12), dtype=np.uint8)
    with pytest.raises(ValueError, match=message):
        census_costs(image, image, max_disparity=2, parameters=parameters)


def test_right_view_labels_by_definition():
    rng = np.random.default_rng(6)
    costs = rng.integers(0, 5, size=(4, 3, 6)).astype(np.int32)  # many ties
    labels = right_view_labels(costs)
    for y in range(3):
        for x in range(6):
            candidates = [(costs[d, y, x + d], d) for d in range(4) if x + d < 6]
            assert labels[y, x] == min(candidates)[1]


# ------------------------------------------------------------------------- post-processing

def test_left_right_check_and_background_filling():
    left = np.array([[0, 2, 2, 5, 5, 5, 1, 1]])
    right = np.array([[2, 5, 5, 5, 1, 1, 1, 1]])
    # x=0: d=0 -> right x=0 holds 2 (off by 2); x=1: d=2 -> x=-1 outside; x=2: d=2 -> right
    # x=0 holds 2 (consistent); x=3..5: d=5 -> x-5 < 0 for 3, 4 and right[0] = 2 for x=5
    inconsistent = inconsistent_pixels(left, right, tolerance=1)
    np.testing.assert_array_equal(inconsistent[0], [1, 1, 0, 1, 1, 1, 0, 0])
    assert not inconsistent_pixels(left, right, tolerance=3)[0, 0]
    filled = fill_from_background(left, inconsistent)
    # each filled pixel takes min(nearest valid to the left, nearest valid to the right)
    np.testing.assert_array_equal(filled[0], [2, 2, 2, 1, 1, 1, 1, 1])
    assert left.tolist() == [[0, 2, 2, 5, 5, 5, 1, 1]]  # not modified
    everything = np.ones_like(inconsistent)
    np.testing.assert_array_equal(fill_from_background(left, everything), left)
    with pytest.raises(ValueError, match="shape"):
        inconsistent_pixels(left, right[:, :4])


# -------------------------------------------------------------------- the move construction

def all_move_energies(costs, weights, labels, alpha, switches, cap=1):
    """Energy of ``where(switch, alpha, labels)`` for a stack of switch masks (N, H, W),
    written out directly from the definition of the energy."""
    proposals = np.where(switches, alpha, labels)
    ys, xs = np.indices(labels.shape)
    data_term = costs[proposals, ys, xs].sum(axis=(1, 2))
    steps_h = np.minimum(np.abs(proposals[:, :, 1:] - proposals[:, :, :-1]), cap)
    steps_v = np.minimum(np.abs(proposals[:, 1:, :] - proposals[:, :-1, :]), cap)
    return data_term + (weights.horizontal * steps_h).sum(axis=(1, 2)) \
        + (weights.vertical * steps_v).sum(axis=(1, 2))


def all_cut_capacities(network, switches):
    """Capacity of every cut (N, H, W); switch = sink side."""
    keep = ~switches
    total = (network.source * switches).sum(axis=(1, 2)) + (network.sink * keep).sum(axis=(1, 2))
    total += (network.right * (keep[:, :, :-1] & switches[:, :, 1:])).sum(axis=(1, 2))
    total += (network.left * (keep[:, :, 1:] & switches[:, :, :-1])).sum(axis=(1, 2))
    total += (network.down * (keep[:, :-1, :] & switches[:, 1:, :])).sum(axis=(1, 2))
    total += (network.up * (keep[:, 1:, :] & switches[:, :-1, :])).sum(axis=(1, 2))
    return total


@pytest.mark.parametrize("cap", [1, 2, 4])
@pytest.mark.parametrize("seed", range(2))
def test_move_network_cut_capacity_is_the_energy_of_every_move(seed, cap):
    """Brute force: for each of the 2**12 cuts y of a 3x4 move problem,
    energy(labels after y) == constant + capacity of the cut."""
    rng = np.random.default_rng(seed)
    costs, weights = random_problem(rng, shape=(3, 4), labels=6)
    labels = rng.integers(0, 6, size=(3, 4)).astype(np.int32)
    switches = (np.arange(2 ** 12)[:, None] >> np.arange(12) & 1).astype(bool).reshape(-1, 3, 4)
    for alpha in range(6):
        network, constant = expansion_network(costs, weights, labels, alpha,
                                              linear_truncation=cap)
        assert network.left.max() == 0 and network.up.max() == 0  # one arc per edge
        assert (np.minimum(network.source, network.sink) == 0).all()
        energies = all_move_energies(costs, weights, labels, alpha, switches, cap)
        np.testing.assert_array_equal(energies, constant + all_cut_capacities(network, switches))
        for k in rng.choice(len(switches), 10):  # the library's energy and cut capacity agree
            after = np.where(switches[k], alpha, labels)
            assert labeling_energy(costs, weights, after, linear_truncation=cap) \
                == energies[k] == constant + cut_capacity(network, ~switches[k])
        cut = min_cut(network, device="cpu")
        assert constant + cut.flow == energies.min()
        assert scipy_max_flow(network) == cut.flow


def test_move_network_does_not_modify_inputs():
    rng = np.random.default_rng(5)
    costs, weights = random_problem(rng)
    labels = rng.integers(0, 4, size=(5, 7)).astype(np.int32)
    copies = [a.copy() for a in (costs, *weights, labels)]
    expansion_network(costs, weights, labels, 2)
    alpha_expansion(costs, weights, device="cpu", initial_labels=labels, linear_truncation=2)
    for before, after in zip(copies, (costs, *weights, labels)):
        np.testing.assert_array_equal(before, after)


# ------------------------------------------------------------------------- alpha-expansion

@pytest.mark.parametrize("cap", [1, 3])
@pytest.mark.parametrize("seed", range(2))
def test_alpha_expansion_moves_are_exact_and_never_raise_the_energy(seed, cap):
    rng = np.random.default_rng(seed)
    costs, weights = random_problem(rng, shape=(9, 11), labels=5)
    seen = []

    def check(move, network, cut):
        # the backend's cut against scipy's maximum flow and residual source set
        assert cut.flow == scipy_max_flow(network)
        np.testing.assert_array_equal(cut.source_side, residual_source_side(network))
        assert cut_capacity(network, cut.source_side) == cut.flow
        seen.append(move)

    result = alpha_expansion(costs, weights, device="cpu", linear_truncation=cap,
                             initial_labels=np.zeros((9, 11), np.int32), callback=check)
    assert seen == result.moves and result.num_moves > 5 and result.accepted_moves > 0
    energy = result.initial_energy
    for move in result.moves:
        assert move.energy_before == energy
        assert move.energy_after == move.constant + move.flow  # the move energy identity
        assert move.accepted == (move.energy_after < energy)
        energy = move.energy_after if move.accepted else energy
    assert energy == result.energy == labeling_energy(costs, weights, result.labels,
                                                      linear_truncation=cap)
    assert result.energy < result.initial_energy
    assert result.converged
    # converged means: no expansion move from the final labelling lowers the energy
    for alpha in range(costs.shape[0]):
        network, constant = expansion_network(costs, weights, result.labels, alpha,
                                              linear_truncation=cap)
        assert constant + min_cut(network, device="cpu").flow >= result.energy
    assert set(result.maxflow_seconds) == {"cpu"}


def test_truncated_linear_smoothness_follows_a_ramp_that_potts_staircases():
    """A noisy ramp of disparities 0..7 across 32 columns. With the same price for a jump
    (20), the truncated linear term (5 per unit step, capped at 4 units) keeps the ramp's unit
    steps, Potts (20 for any step) replaces them by fewer, larger steps."""
    rng = np.random.default_rng(11)
    h, w, labels = 8, 32, 8
    ramp = (np.arange(w) * labels // w)[np.newaxis].repeat(h, axis=0)
    costs = (np.abs(np.arange(labels)[:, None, None] - ramp) * 3
             + rng.integers(0, 4, size=(labels, h, w))).astype(np.int32)

    def weights(value):
        return PairWeights(np.full((h, w - 1), value), np.full((h - 1, w), value))

    linear = alpha_expansion(costs, weights(5), device="cpu", linear_truncation=4)
    potts = alpha_expansion(costs, weights(20), device="cpu", linear_truncation=1)
    assert (linear.labels == ramp).mean() > 0.95
    assert (potts.labels == ramp).mean() < 0.8
    steps = np.abs(np.diff(potts.labels, axis=1))
    assert steps.max() >= 2 and (steps > 0).sum() < (np.diff(ramp, axis=1) > 0).sum()


def test_alpha_expansion_stops_at_max_cycles():
    rng = np.random.default_rng(1)
    costs, weights = random_problem(rng, shape=(8, 8), labels=6, max_weight=30)
    result = alpha_expansion(costs, weights, device="cpu", max_cycles=1,
                             initial_labels=np.zeros((8, 8), np.int32))
    assert result.cycles == 1 and result.num_moves == 6


def test_alpha_expansion_rejects_bad_input():
    costs, weights = random_problem(np.random.default_rng(2))
    with pytest.raises(ValueError, match="shape"):
        alpha_expansion(costs, PairWeights(weights.vertical, weights.horizontal), device="cpu")
    with pytest.raises(ValueError, match="max_cycles"):
        alpha_expansion(costs, weights, device="cpu", max_cycles=0)
    with pytest.raises(ValueError, match="initial_labels"):
        alpha_expansion(costs, weights, device="cpu", initial_labels=np.full((5, 7), 9))
    with pytest.raises(ValueError, match="device"):
        alpha_expansion(costs, weights, device="tpu")
    with pytest.raises(ValueError, match="linear_truncation"):
        alpha_expansion(costs, weights, device="cpu", linear_truncation=0)
    with pytest.raises(ValueError, match="overflow"):
        alpha_expansion(costs, PairWeights(*(np.full_like(w, 2**28) for w in weights)),
                        device="cpu", linear_truncation=3)


# ---------------------------------------------------------------------------- the pipeline

def test_layered_scene_is_recovered():
    left, right, truth, visible = layered_scene()
    result = disparity(left, right, max_disparity=MAX_D, device="cpu")
    # occluded pixels (seen in the left view only) have no match; score the others
    assert visible.mean() > 0.9
    assert bad_pixel_rate(result.disparity, truth, valid=visible) < 0.02
    # the depth-edge refinement (off by default) follows colour edges; on these grey, strongly
    # textured layers it rounds the layers' corners a little (a measured 0.2 -> 2.5 % here)
    refined = disparity(left, right, max_disparity=MAX_D, device="cpu",
                        edge_refinement=EdgeRefinement())
    assert bad_pixel_rate(refined.disparity, truth, valid=visible) < 0.03
    assert result.labels is result.disparity and result.disparity.dtype == np.int32
    assert result.converged or result.cycles == 2


def test_synthetic_scene_is_consistent_and_recovered():
    scene = synthetic_scene(shape=(120, 200), seed=1)
    assert scene.left.shape == scene.right.shape == (120, 200, 3)
    assert 0.8 < scene.visible.mean() < 0.99 and np.isfinite(scene.truth).all()
    # a visible left pixel shows the colour the right view has at x - d (up to the noise and
    # the interpolation of the sub-pixel position)
    ys, xs = np.nonzero(scene.visible)
    matched = np.rint(xs - scene.truth[ys, xs]).astype(int)
    gap = np.abs(scene.left[ys, xs].astype(int) - scene.right[ys, matched].astype(int))
    assert np.median(gap) <= 8
    result = disparity(scene.left, scene.right, max_disparity=scene.max_disparity,
                       channel_axis=-1, device="cpu")
    assert bad_pixel_rate(result.disparity, scene.truth, valid=scene.visible) < 0.06
    assert bad_pixel_rate(result.disparity, scene.truth) < 0.10
    # the left-right check finds the occlusions (and little else)
    found = result.inconsistent & ~scene.visible
    assert found.sum() > 0.5 * (~scene.visible).sum()


def test_sample_pair_bad_pixel_rate():
    left = np.asarray(Image.open(SAMPLES / "left.png"))
    right = np.asarray(Image.open(SAMPLES / "right.png"))
    truth = read_disparity(SAMPLES / "disparity_gt.png")
    assert left.shape == right.shape == truth.shape + (3,)
    result = disparity(left, right, max_disparity=16, channel_axis=-1, device="cpu")
    assert bad_pixel_rate(result.disparity, truth) < 0.13  # README reports the measured value
    # the former default (Birchfield-Tomasi, Potts) is clearly worse
    former = disparity(left, right, max_disparity=16, channel_axis=-1, device="cpu",
                       data_cost="bt", smoothness=6, flat_factor=2, smoothness_truncation=1,
                       fill_occlusions=False, max_cycles=20)
    assert bad_pixel_rate(former.disparity, truth) > 0.2
    # the winner-takes-all start is far worse: smoothing does the work
    costs = data_costs(left, right, max_disparity=16, channel_axis=-1)
    assert bad_pixel_rate(costs.argmin(axis=0), truth) > 0.5


def test_disparity_rejects_bad_options_before_building_anything():
    image = np.zeros((8, 12), dtype=np.uint8)
    for kwargs, message in [
            ({"smoothness": 300_000_000}, "smoothness"),
            ({"flat_factor": 99_999_999_999}, "flat_factor"),
            ({"edge_threshold": float("nan")}, "edge_threshold"),
            ({"smoothness_truncation": 0}, "smoothness_truncation"),
            ({"data_cost": "sad"}, "data_cost"),
            ({"data_cost": "bt", "truncation": 3_000_000_000}, "truncation"),
            ({"smoothness": 2**20, "flat_factor": 1024}, "int32")]:
        with pytest.raises(ValueError, match=message):
            disparity(image, image, max_disparity=4, device="cpu", **kwargs)
    with pytest.raises(ValueError, match="int32"):
        check_energy_range(max_disparity=64, smoothness=2**18, flat_factor=512,
                           smoothness_truncation=3)
    check_energy_range(max_disparity=64)  # the defaults are fine


def test_memory_is_checked_before_the_cost_volume_is_built(monkeypatch):
    import graphcut.stereo._disparity as pipeline
    need = memory_needed((1500, 2000), 1999, "cpu")
    assert need > 2000 * 1500 * 2000 * 4  # at least the int32 volume: 24 GB
    assert memory_needed((500, 741), 64, "cpu") < 2**30
    monkeypatch.setenv("GRAPHCUT_MEMORY_LIMIT", "50M")
    image = np.zeros((300, 400), dtype=np.uint8)
    with pytest.raises(MemoryError, match="400-label cost volume for a 400x300 pair and its "
                                          "expansion moves on the CPU needs about .* MiB of "
                                          "memory, more than the 50.0 MiB available"):
        disparity(image, image, max_disparity=399, device="cpu")
    monkeypatch.setattr(pipeline, "census_costs_from_levels", None)  # never reached


@pytest.mark.gpu
def test_cuda_moves_and_maps_match_cpu():
    scene = synthetic_scene(shape=(96, 160), seed=3)
    kwargs = dict(max_disparity=scene.max_disparity, channel_axis=-1)
    cpu = disparity(scene.left, scene.right, device="cpu", **kwargs)
    gpu = disparity(scene.left, scene.right, device="cuda", **kwargs)
    assert [(m.alpha, m.flow, m.constant, m.accepted) for m in gpu.moves] \
        == [(m.alpha, m.flow, m.constant, m.accepted) for m in cpu.moves]
    np.testing.assert_array_equal(gpu.disparity, cpu.disparity)
    np.testing.assert_array_equal(gpu.expansion.labels, cpu.expansion.labels)
    assert gpu.energy == cpu.energy and set(gpu.maxflow_seconds) == {"cuda"}
    assert gpu.backend == "cuda"


@pytest.mark.gpu
def test_cuda_cost_volume_and_potts_expansion_match_cpu():
    import cupy
    left, right, _, _ = layered_scene(48, 64)
    cpu = census_costs(left, right, max_disparity=MAX_D)
    gpu = census_costs(left, right, max_disparity=MAX_D, device="cuda")
    np.testing.assert_array_equal(gpu.get(), cpu)
    np.testing.assert_array_equal(right_view_labels(gpu).get(), right_view_labels(cpu))
    weights = smoothness_weights(left)
    a = alpha_expansion(cpu, weights, device="cpu")
    b = alpha_expansion(cupy.asarray(cpu), weights, device="cuda")
    assert [m.flow for m in a.moves] == [m.flow for m in b.moves]
    np.testing.assert_array_equal(a.labels, b.labels)


# -------------------------------------------------------------------------------- files

def test_dumped_instances_reread_give_the_indexed_flows(tmp_path):
    from graphcut.solver.dimacs import read_dimacs
    rng = np.random.default_rng(3)
    costs, weights = random_problem(rng, shape=(6, 8), labels=4)
    with InstanceDump(tmp_path / "moves") as dump:
        result = alpha_expansion(costs, weights, device="cpu", callback=dump,
                                 linear_truncation=2)
    index = json.loads((tmp_path / "moves" / "index.json").read_text())
    entries = index["instances"]
    assert [e["file"] for e in entries] == [f"move_{i:04d}.max" for i in
                                            range(1, result.num_moves + 1)]
    assert [e["flow"] for e in entries] == [m.flow for m in result.moves]
    for entry, move in zip(entries, result.moves):
        network = read_dimacs(tmp_path / "moves" / entry["file"])
        assert network.num_vertices == 6 * 8 + 2 and entry["grid"] == [6, 8]
        assert min_cut(network, device="cpu").flow == entry["flow"]
        assert scipy_max_flow(network) == entry["flow"]
        assert entry["constant"] + entry["flow"] == entry["energy_after"] == move.energy_after


def test_disparity_files_round_trip(tmp_path):
    values = np.array([[0, 3, 17], [255, 1, 2]], dtype=np.int32)
    write_disparity(tmp_path / "d.npy", values)
    stored = np.load(tmp_path / "d.npy")
    assert stored.dtype == np.int32 and np.array_equal(stored, values)
    write_disparity(tmp_path / "d.png", values)
    with Image.open(tmp_path / "d.png") as image:
        raw = np.asarray(image)
    np.testing.assert_array_equal(raw, values * 256)  # KITTI: disparity x 256, 16 bit
    back = read_disparity(tmp_path / "d.png")
    assert np.isnan(back[0, 0]) and np.array_equal(back[values > 0], values[values > 0])
    with pytest.raises(ValueError, match=".npy"):
        write_disparity(tmp_path / "d.png", np.array([[300]]))  # 300 * 256 > 65535
    with pytest.raises(ValueError, match="file type"):
        write_disparity(tmp_path / "d.tif", values)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.npy", "d.png"]  # no temp left


def test_pfm_ground_truth_is_read(tmp_path):
    values = np.array([[1.5, np.inf, 3.0], [4.0, 5.25, 6.0]], dtype=np.float32)
    header = b"Pf\n3 2\n-1.0\n"  # little-endian, rows stored bottom to top
    (tmp_path / "gt.pfm").write_bytes(header + values[::-1].astype("<f4").tobytes())
    back = read_disparity(tmp_path / "gt.pfm")
    assert np.isnan(back[0, 1])
    np.testing.assert_array_equal(np.nan_to_num(back, nan=-1),
                                  [[1.5, -1, 3.0], [4.0, 5.25, 6.0]])
    (tmp_path / "bad.pfm").write_bytes(b"PF\n3 2\n-1.0\n" + bytes(72))
    with pytest.raises(ValueError, match="grey PFM"):
        read_disparity(tmp_path / "bad.pfm")
    (tmp_path / "short.pfm").write_bytes(header + bytes(8))
    with pytest.raises(ValueError, match="holds 2 values"):
        read_disparity(tmp_path / "short.pfm")


def test_colorize_disparity_orders_colours():
    rgb = colorize_disparity(np.array([[0.0, 8.0, 16.0, np.nan]]), max_disparity=16)
    assert rgb.shape == (1, 4, 3) and rgb.dtype == np.uint8
    assert rgb[0, 0, 2] > rgb[0, 0, 0] and rgb[0, 2, 0] > rgb[0, 2, 2]  # far blue, near red
    assert (rgb[0, 3] == 0).all()


def test_preview_has_a_colour_bar_from_near_to_far(tmp_path):
    values = np.tile(np.linspace(0, 40, 120), (90, 1))
    image = preview_image(values, max_disparity=40)
    assert image.shape[0] == 90 and image.shape[1] > 120
    np.testing.assert_array_equal(image[:, :120], colorize_disparity(values, max_disparity=40))
    panel = image[:, 120:]
    coloured = (panel.max(axis=-1) - panel.min(axis=-1)) > 60  # saturated = the bar
    columns = np.flatnonzero(coloured.sum(axis=0) > 60)
    bar = panel[:, columns[len(columns) // 2]]
    rows = np.flatnonzero(coloured[:, columns[len(columns) // 2]])
    top, bottom = bar[rows[0]], bar[rows[-1]]
    assert top[0] > top[2] and bottom[2] > bottom[0]  # near (red) on top, far (blue) below
    assert (panel < 100).all(axis=-1).sum() > 20  # dark tick labels beside the bar
    write_preview(tmp_path / "p.png", values, max_disparity=40)
    with Image.open(tmp_path / "p.png") as saved:
        assert saved.mode == "RGB" and saved.size == (image.shape[1], 90)


def test_bad_pixel_rate_counts_invalid_estimates_as_bad():
    truth = np.array([[1.0, 2.0, np.nan, 4.0]])
    estimate = np.array([[1.0, 3.5, 0.0, np.nan]])
    assert bad_pixel_rate(estimate, truth) == pytest.approx(2 / 3)
    assert bad_pixel_rate(estimate, truth, threshold=2) == pytest.approx(1 / 3)


# ---------------------------------------------------------------------------------- CLI

@pytest.fixture
def pair_files(tmp_path):
    left, right, truth, _ = layered_scene(40, 64)
    Image.fromarray(left).save(tmp_path / "left.png")
    Image.fromarray(right).save(tmp_path / "right.png")
    write_disparity(tmp_path / "truth.png", truth)
    return tmp_path / "left.png", tmp_path / "right.png", left, right


def run_cli(*args):
    return CliRunner().invoke(main, ["stereo", *map(str, args)])


def test_cli_writes_npy_png_preview_and_instances(pair_files, tmp_path):
    left_path, right_path, left, right = pair_files
    out = run_cli(left_path, right_path, "--max-disparity", MAX_D, "-o", tmp_path / "d.npy",
                  "--preview", tmp_path / "preview.png", "--device", "cpu",
                  "--dump-instances", tmp_path / "moves")
    assert out.exit_code == 0, out.output
    expected = disparity(left, right, max_disparity=MAX_D, device="cpu")
    np.testing.assert_array_equal(np.load(tmp_path / "d.npy"), expected.labels)
    assert f"energy: {expected.energy}" in out.output
    assert f"moves: {expected.num_moves} solved" in out.output
    assert "max-flow time [cpu]:" in out.output
    with Image.open(tmp_path / "preview.png") as preview:
        assert preview.mode == "RGB" and preview.size[1] == 40 and preview.size[0] > 64
        np.testing.assert_array_equal(np.asarray(preview)[:, :64], colorize_disparity(
            expected.disparity, max_disparity=MAX_D))
    index = json.loads((tmp_path / "moves" / "index.json").read_text())
    assert [e["flow"] for e in index["instances"]] == [m.flow for m in expected.moves]

    assert "occluded or inconsistent (filled):" in out.output

    out = run_cli(left_path, right_path, "-d", MAX_D, "-o", tmp_path / "d.png",
                  "--device", "cpu", "--ground-truth", tmp_path / "truth.png")
    assert out.exit_code == 0, out.output
    with Image.open(tmp_path / "d.png") as image:
        np.testing.assert_array_equal(np.asarray(image), expected.labels * 256)
    truth = read_disparity(tmp_path / "truth.png")
    rate = bad_pixel_rate(expected.disparity, truth)
    assert f"bad pixels (|d - d_true| > 1): {rate:.2%} of {truth.size} pixels" in out.output


def test_cli_options_change_the_energy(pair_files, tmp_path):
    left_path, right_path, left, right = pair_files
    out = run_cli(left_path, right_path, "-d", MAX_D, "-o", tmp_path / "d.npy", "--device",
                  "cpu", "--data-cost", "bt", "--truncation", 30, "--smoothness", 5,
                  "--flat-factor", 2, "--edge-threshold", 4, "--smoothness-truncation", 1,
                  "--no-fill-occlusions", "--max-cycles", 3)
    assert out.exit_code == 0, out.output
    expected = disparity(left, right, max_disparity=MAX_D, device="cpu", data_cost="bt",
                         truncation=30, smoothness=5, flat_factor=2, edge_threshold=4,
                         smoothness_truncation=1, fill_occlusions=False, max_cycles=3)
    np.testing.assert_array_equal(np.load(tmp_path / "d.npy"), expected.disparity)
    assert f"energy: {expected.energy}" in out.output and "occluded" not in out.output


def test_cli_cross_aggregation_options(pair_files, tmp_path):
    left_path, right_path, left, right = pair_files
    out = run_cli(left_path, right_path, "-d", MAX_D, "-o", tmp_path / "d.npy", "--device",
                  "cpu", "--aggregation", "cross", "--cross-threshold", 9, "--cross-length", 3)
    assert out.exit_code == 0, out.output
    census = CensusParameters(aggregation="cross", cross_threshold=9, cross_length=3)
    expected = disparity(left, right, max_disparity=MAX_D, device="cpu", census=census)
    np.testing.assert_array_equal(np.load(tmp_path / "d.npy"), expected.disparity)
    box = disparity(left, right, max_disparity=MAX_D, device="cpu",
                    census=census._replace(aggregation="box"))
    assert box.energy != expected.energy  # the option reached the cost volume



@pytest.mark.parametrize("flags, keywords", [
    ((), {}),
    (("--no-border-extrapolation",), {"border_extrapolation": None}),
    (("--no-edge-refinement", "--no-border-extrapolation"),
     {"edge_refinement": None, "border_extrapolation": None}),
    (("--no-foreground-trim",), {"foreground_trim": None}),
])
def test_cli_post_processing_switches(pair_files, tmp_path, flags, keywords):
    left_path, right_path, left, right = pair_files
    out = run_cli(left_path, right_path, "-d", MAX_D, "-o", tmp_path / "d.npy", "--device",
                  "cpu", *flags)
    assert out.exit_code == 0, out.output
    expected = disparity(left, right, max_disparity=MAX_D, device="cpu", **keywords)
    np.testing.assert_array_equal(np.load(tmp_path / "d.npy"), expected.disparity)

@pytest.mark.parametrize("option, value", [
    ("--truncation", "3000000000"), ("--truncation", "2147483647"),
    ("--smoothness", "300000000"), ("--flat-factor", "99999999999"),
    ("--edge-threshold", "nan"), ("--edge-threshold", "inf"), ("--edge-threshold", "-1"),
    ("--smoothness-truncation", "0"), ("--aggregation-radius", "100"),
    ("--aggregation", "median"), ("--cross-threshold", "300"), ("--cross-length", "-1"),
    ("--max-cycles", "0"), ("--bad-threshold", "nan"), ("--data-cost", "sad"),
])
def test_cli_bad_option_values_are_usage_errors(pair_files, tmp_path, option, value):
    left_path, right_path, _, _ = pair_files
    out = run_cli(left_path, right_path, "-d", 4, "-o", tmp_path / "x.npy", "--device", "cpu",
                  option, value)
    assert out.exit_code == 2, out.output
    assert option in out.output and "Traceback" not in out.output
    assert not (tmp_path / "x.npy").exists()


def test_cli_refuses_energies_that_overflow_int32(pair_files, tmp_path):
    left_path, right_path, _, _ = pair_files
    out = run_cli(left_path, right_path, "-d", 60, "-o", tmp_path / "x.npy", "--device", "cpu",
                  "--smoothness", 2**20, "--flat-factor", 1024)
    assert out.exit_code == 2 and "int32" in out.output, out.output


def test_cli_checks_memory_before_building_the_cost_volume(tmp_path):
    """-d 1999 on a 2000x1500 pair would need a 24 GB cost volume: refused at once, under an
    address-space limit, with a message that names the need."""
    import subprocess
    import sys
    import textwrap
    image = np.zeros((1500, 2000), dtype=np.uint8)
    for name in ("left.png", "right.png"):
        Image.fromarray(image).save(tmp_path / name)
    script = textwrap.dedent(f"""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))
        from graphcut.cli import main
        sys.argv = ["graphcut", "stereo", {str(tmp_path / "left.png")!r},
                    {str(tmp_path / "right.png")!r}, "-d", "1999", "-o",
                    {str(tmp_path / "d.npy")!r}, "--device", "cpu"]
        main()
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1, done.stderr
    assert "2000-label cost volume for a 2000x1500 pair" in done.stderr
    assert "GiB of memory, more than the" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "d.npy").exists()


def test_cli_errors(pair_files, tmp_path):
    left_path, right_path, left, _ = pair_files
    Image.fromarray(left[:, :50]).save(tmp_path / "narrow.png")
    original = left_path.read_bytes()
    cases = [
        ((left_path, tmp_path / "narrow.png", "-d", 4, "-o", tmp_path / "x.npy"), 1,
         "differ in size"),
        ((left_path, right_path, "-d", 64, "-o", tmp_path / "x.npy"), 2, "image width 64"),
        ((left_path, right_path, "-d", -1, "-o", tmp_path / "x.npy"), 2, "max-disparity"),
        ((left_path, right_path, "-d", 4, "-o", tmp_path / "x.jpg"), 2, ".npy or .png"),
        ((left_path, right_path, "-d", 4, "-o", left_path), 2, "input file"),
        ((left_path, right_path, "-d", 4, "-o", tmp_path / "x.npy", "--preview",
          tmp_path / "p.jpg"), 2, ".png"),
        ((left_path, right_path, "-d", 4, "-o", tmp_path / "x.npy", "--ground-truth",
          tmp_path / "left.png"), 1, "ground truth"),
        ((left_path, tmp_path / "missing.png", "-d", 4, "-o", tmp_path / "x.npy"), 2,
         "does not exist"),
        ((left_path, right_path, "-o", tmp_path / "x.npy"), 2, "--max-disparity"),
    ]
    for args, code, message in cases:
        out = run_cli(*args, "--device", "cpu")
        assert out.exit_code == code, (args, out.output)
        assert message in out.output, (args, out.output)
    (tmp_path / "broken.png").write_bytes(b"not a png")
    out = run_cli(left_path, tmp_path / "broken.png", "-d", 4, "-o", tmp_path / "x.npy")
    assert out.exit_code == 1 and "cannot read image" in out.output
    assert left_path.read_bytes() == original
    assert not (tmp_path / "x.npy").exists()


def test_former_module_names_still_import():
    from graphcut.stereo import data_costs as former_data_costs
    from graphcut.stereo.io import InstanceDump as FormerDump
    from graphcut.stereo.io import motorcycle_pair  # noqa: F401
    assert former_data_costs is data_costs and FormerDump is InstanceDump
    import graphcut.labeling
    import graphcut.stereo
    assert graphcut.stereo.alpha_expansion is graphcut.labeling.alpha_expansion
