"""The Boykov-Jolly energy: weights, colour models, hard constraints, quantisation, errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import graphcut
from graphcut.segmentation import (array_module, build_network, estimate_sigma, image_as_float,
                             nlink_weights, quantize, regional_costs, terminal_capacities)
from synthetic import disc_image, disc_seeds


def test_nlink_weights_match_the_formula():
    rng = np.random.default_rng(1)
    image = rng.uniform(0, 1, (5, 6, 3))
    right, down = nlink_weights(image, sigma=0.3)
    assert right.shape == (5, 5) and down.shape == (4, 6)
    for y, x in itertools.product(range(5), range(5)):
        d2 = ((image[y, x] - image[y, x + 1]) ** 2).sum()
        assert right[y, x] == pytest.approx(np.exp(-d2 / (2 * 0.3 ** 2)))
    for y, x in itertools.product(range(4), range(6)):
        d2 = ((image[y, x] - image[y + 1, x]) ** 2).sum()
        assert down[y, x] == pytest.approx(np.exp(-d2 / (2 * 0.3 ** 2)))


def test_estimated_sigma_is_the_rms_neighbour_difference():
    rng = np.random.default_rng(2)
    image = rng.uniform(0, 1, (7, 9))
    diffs = np.concatenate([np.diff(image, axis=1).ravel(), np.diff(image, axis=0).ravel()])
    sigma = np.sqrt(np.mean(diffs ** 2))
    assert estimate_sigma(image) == pytest.approx(sigma)
    right, down = nlink_weights(image)
    expected_right, expected_down = nlink_weights(image, sigma=sigma)
    assert np.allclose(right, expected_right) and np.allclose(down, expected_down)


def test_constant_image_has_unit_weights():
    right, down = nlink_weights(np.full((4, 4), 7, dtype=np.uint8))
    assert np.all(right == 1.0) and np.all(down == 1.0)
    assert estimate_sigma(np.zeros((1, 1))) == 1.0


def test_integer_types_are_scaled_by_their_range():
    rng = np.random.default_rng(3)
    as_uint8 = rng.integers(0, 256, (6, 8, 3), dtype=np.uint8)
    as_uint16 = as_uint8.astype(np.uint16) * 257
    as_float = as_uint8 / 255.0
    for other in (as_uint16, as_float):
        assert np.allclose(image_as_float(other), image_as_float(as_uint8))
        for a, b in zip(nlink_weights(other, sigma=0.2), nlink_weights(as_uint8, sigma=0.2)):
            assert np.allclose(a, b)


def test_alpha_is_ignored_and_channel_axis_is_honoured():
    rng = np.random.default_rng(4)
    rgb = rng.uniform(0, 1, (6, 8, 3))
    rgba = np.concatenate([rgb, rng.uniform(0, 1, (6, 8, 1))], axis=-1)
    grey_alpha = np.stack([rgb[..., 0], rgb[..., 1]], axis=-1)
    assert np.array_equal(image_as_float(rgba), rgb)
    assert np.array_equal(image_as_float(grey_alpha), rgb[..., :1])
    assert np.array_equal(image_as_float(np.moveaxis(rgb, -1, 0), channel_axis=0), rgb)
    assert image_as_float(rgb[..., 0]).shape == (6, 8, 1)


@pytest.mark.parametrize("image,error,match", [
    (np.array([[0.0, np.nan], [1.0, 0.5]]), ValueError, "NaN or infinite"),
    (np.array([[0.0, np.inf], [1.0, 0.5]]), ValueError, "NaN or infinite"),
    (np.ones((2, 2), dtype=complex), TypeError, "dtype"),
    (np.ones((2, 2, 2, 2, 2)), ValueError, "shape"),
    (np.ones((2, 2, 5)), ValueError, "5 channels"),
    (np.ones((0, 4)), ValueError, "empty"),
])
def test_bad_images_are_rejected(image, error, match):
    with pytest.raises(error, match=match):
        nlink_weights(image)
    with pytest.raises(error, match=match):
        build_network(image, np.array([[1, 2], [0, 0]], dtype=np.uint8)[:image.shape[0]])


def test_channel_axis_none_reads_a_grey_volume():
    assert image_as_float(np.ones((4, 4, 3)), channel_axis=None).shape == (4, 4, 3, 1)
    with pytest.raises(ValueError, match="channel_axis"):
        image_as_float(np.ones((4, 4, 3, 3)), channel_axis=None)
    with pytest.raises(ValueError, match="out of range"):
        image_as_float(np.ones((4, 4, 3)), channel_axis=3)


@pytest.mark.parametrize("seeds,error,match", [
    (np.zeros((60, 80), dtype=np.uint8), ValueError, "no foreground"),
    (np.ones((60, 80), dtype=np.uint8), ValueError, "no background"),
    (np.full((60, 80), 255, dtype=np.uint8), ValueError, "unknown label values 255"),
    (np.ones((59, 80), dtype=np.uint8), ValueError, r"80x59 .* image is 80x60"),
    (np.ones((60, 80), dtype=np.float64), TypeError, "integer label array"),
    (np.ones((60, 80, 2), dtype=np.uint8), ValueError, "2-D"),
])
def test_bad_seeds_are_rejected(seeds, error, match):
    image = disc_image()
    with pytest.raises(error, match=match):
        build_network(image, seeds)
    with pytest.raises(error, match=match):
        graphcut.segment(image, seeds)


def test_regional_costs_favour_the_seeded_colours():
    image, seeds = disc_image("colour", np.uint8), disc_seeds()
    cost_object, cost_background = regional_costs(image, seeds)
    assert cost_object.shape == cost_background.shape == seeds.shape
    assert np.all(cost_object > 0) and np.all(cost_background > 0)
    assert np.all(np.isfinite(cost_object)) and np.all(np.isfinite(cost_background))
    assert np.mean(cost_object[seeds == 1] < cost_background[seeds == 1]) > 0.95
    assert np.mean(cost_background[seeds == 2] < cost_object[seeds == 2]) > 0.95
    with pytest.raises(ValueError, match="bins"):
        regional_costs(image, seeds, bins=1)


def test_hard_constraints_pin_seeds():
    image, seeds = disc_image("grey", np.uint8), disc_seeds()
    network = build_network(image, seeds)
    incident = np.zeros(seeds.shape, dtype=np.int64)
    incident[:, :-1] += network.right
    incident[:, 1:] += network.right
    incident[:-1, :] += network.down
    incident[1:, :] += network.down
    obj, bg = seeds == 1, seeds == 2
    assert np.array_equal(network.source[obj], incident[obj] + 1)
    assert np.all(network.sink[obj] == 0)
    assert np.array_equal(network.sink[bg], incident[bg] + 1)
    assert np.all(network.source[bg] == 0)
    assert np.array_equal(network.left, network.right) and np.array_equal(network.up, network.down)


def test_seeds_win_against_any_colour_evidence():
    """Seeds placed on the 'wrong' colours are still obeyed, for small and huge lam."""
    rng = np.random.default_rng(5)
    image = rng.integers(0, 256, (20, 24, 3), dtype=np.uint8)
    seeds = rng.choice(np.array([0, 1, 2], dtype=np.uint8), size=(20, 24), p=[0.8, 0.1, 0.1])
    for lam in (0.5, 10, 1000):
        mask = graphcut.segment(image, seeds, lam=lam, model="histogram")
        assert mask[seeds == 1].all() and not mask[seeds == 2].any()


def test_min_cut_minimises_the_energy_by_brute_force():
    """On a 3x3 image every one of the 512 labellings is scored with the float energy; the
    segmentation's labelling is a minimiser (up to the quantisation error)."""
    rng = np.random.default_rng(6)
    image = rng.uniform(0, 1, (3, 3))
    seeds = np.zeros((3, 3), dtype=np.uint8)
    seeds[0, 0], seeds[2, 2] = 1, 2
    lam = 0.7
    cost_object, cost_background = regional_costs(image, seeds)
    right, down = nlink_weights(image)

    def energy(labels):
        if not labels[0, 0] or labels[2, 2]:
            return np.inf
        total = cost_object[labels].sum() + cost_background[~labels].sum()
        total += lam * right[labels[:, :-1] != labels[:, 1:]].sum()
        return total + lam * down[labels[:-1, :] != labels[1:, :]].sum()

    best = min(energy(np.array(bits, dtype=bool).reshape(3, 3))
               for bits in itertools.product((False, True), repeat=9))
    mask, result = graphcut.segment(image, seeds, lam=lam, model="histogram",
                                    return_result=True)
    assert energy(mask) <= best + 20 / graphcut.DEFAULT_SCALE
    # flow / scale is that minimum energy, less the regional costs of the two seeded pixels
    # (which the hard constraints replace), up to 0.5 / scale per rounded capacity
    seeded_costs = cost_object[0, 0] + cost_background[2, 2]
    assert result.flow / graphcut.DEFAULT_SCALE == pytest.approx(
        best - seeded_costs, abs=21 * 0.5 / graphcut.DEFAULT_SCALE)


def test_terminal_capacities_rebuild_matches_build_network():
    image, seeds = disc_image("colour", np.uint8), disc_seeds()
    network = build_network(image, seeds, lam=4.0)
    right_w, down_w = nlink_weights(image)
    nlinks = (quantize(4.0 * right_w), quantize(4.0 * down_w))
    assert np.array_equal(nlinks[0], network.right) and np.array_equal(nlinks[1], network.down)
    source, sink = terminal_capacities(*regional_costs(image, seeds), nlinks, seeds)
    assert np.array_equal(source, network.source) and np.array_equal(sink, network.sink)
    # new seeds: only the t-links change
    moved = seeds.copy()
    moved[10:14, 10:14] = 1
    source2, sink2 = terminal_capacities(*regional_costs(image, moved), nlinks, moved)
    fresh = build_network(image, moved, lam=4.0)
    assert np.array_equal(source2, fresh.source) and np.array_equal(sink2, fresh.sink)


def test_quantisation_precision_and_overflow():
    values = np.array([0.0, 0.0004, 0.0006, 1.2345])
    assert quantize(values, scale=1000).tolist() == [0, 0, 1, 1234]
    assert quantize(values, scale=10).dtype == np.int32
    with pytest.raises(ValueError, match="int32 limit"):
        quantize(np.array([3.0e6]), scale=1000)
    with pytest.raises(ValueError, match="int32 limit"):
        build_network(disc_image(), disc_seeds(), lam=1e7)
    with pytest.raises(ValueError, match="int32 limit"):
        build_network(disc_image(), disc_seeds(), scale=1e9)
    with pytest.raises(ValueError, match="lam"):
        build_network(disc_image(), disc_seeds(), lam=-1)
    with pytest.raises(ValueError, match="sigma"):
        build_network(disc_image(), disc_seeds(), sigma=0)
    with pytest.raises(ValueError, match="scale"):
        build_network(disc_image(), disc_seeds(), scale=float("nan"))


def test_largest_safe_lam_does_not_overflow():
    """The pin K_p = 1 + 4 n-links must stay within int32 whenever the n-links do."""
    image, seeds = disc_image(), disc_seeds()
    lam = (np.iinfo(np.int32).max - 1) / 4 / graphcut.DEFAULT_SCALE
    network = build_network(image, seeds, lam=lam)
    assert int(network.source.max()) <= np.iinfo(np.int32).max
    with pytest.raises(ValueError, match="hard-constraint"):
        build_network(image, seeds, lam=lam * 1.5)


def test_inputs_are_not_modified():
    image, seeds = disc_image("rgba", np.uint16), disc_seeds()
    image_copy, seeds_copy = image.copy(), seeds.copy()
    image.flags.writeable = False
    seeds.flags.writeable = False
    build_network(image, seeds)
    nlink_weights(image)
    regional_costs(image, seeds)
    assert np.array_equal(image, image_copy) and np.array_equal(seeds, seeds_copy)


def test_array_module_is_numpy_for_numpy():
    assert array_module(np.zeros(2), [1, 2]) is np


@pytest.mark.gpu
def test_network_built_on_the_gpu_equals_the_cpu_one():
    cupy = pytest.importorskip("cupy")
    image, seeds = disc_image("colour", np.uint8), disc_seeds()
    on_host = build_network(image, seeds)
    on_gpu = build_network(cupy.asarray(image), cupy.asarray(seeds))
    assert on_gpu.on_gpu
    for name in ("source", "sink", "right", "down"):
        difference = np.abs(getattr(on_gpu, name).get().astype(np.int64)
                            - getattr(on_host, name).astype(np.int64))
        assert difference.max() <= 1, name  # exp/log may differ in the last bit


def test_histogram_smoothing_is_the_binomial_kernel_with_zero_outside():
    """Two [1, 2, 1] / 4 passes per axis: a single count spreads as [1, 4, 6, 4, 1] / 16 along
    every axis (outer product), and mass beyond the histogram's edge is lost, not folded back."""
    from graphcut.models._histogram import _smooth
    centre = np.zeros((7, 9, 5))
    centre[3, 4, 2] = 1.0
    kernel = np.array([1, 4, 6, 4, 1]) / 16
    expected = np.zeros_like(centre)
    expected[1:6, 2:7, 0:5] = kernel[:, None, None] * kernel[None, :, None] * kernel[None, None]
    np.testing.assert_allclose(_smooth(centre, 2), expected, rtol=0, atol=1e-15)
    edge = np.zeros(6)
    edge[0] = 1.0
    np.testing.assert_allclose(_smooth(edge, 2), [5 / 16, 4 / 16, 1 / 16, 0, 0, 0], atol=1e-15)
