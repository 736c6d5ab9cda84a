"""The weighted-median occlusion fill and the synthetic scene kinds of graphcut.stereo.

Oracles: a direct per-pixel weighted median (sorted labels, cumulative weights) on small random
maps; a hand-made streak whose right answer is known; the renderer's own geometry (a visible
left pixel and its match in the right view show the same surface, so their colours agree up to
the noise, unlike a wrong match).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from graphcut.stereo import (BorderExtrapolation, MedianFill, bad_pixel_rate, disparity,
                             extrapolate_left_border, fill_from_background,
                             trim_foreground, weighted_median_fill)
from graphcut.stereo.synthetic import SCENE_KINDS, synthetic_scene


def brute_force_median(labels, invalid, image, radius, step, colour_sigma, space_sigma):
    image = np.asarray(image, dtype=np.float64)
    if image.ndim == 2:
        image = image[..., None]
    h, w = labels.shape
    result = labels.copy()
    offsets = range(-(radius // step) * step, radius + 1, step)
    for y, x in zip(*np.nonzero(invalid)):
        pairs = []
        for dy in offsets:
            for dx in offsets:
                r, c = y + dy, x + dx
                if 0 <= r < h and 0 <= c < w:
                    colour = np.abs(image[r, c] - image[y, x]).mean()
                    weight = math.exp(-colour / colour_sigma - math.hypot(dy, dx) / space_sigma)
                    pairs.append((int(labels[r, c]), weight))
        pairs.sort()
        total = sum(weight for _, weight in pairs)
        running = 0.0
        for label, weight in pairs:
            running += weight
            if running >= total / 2:
                result[y, x] = label
                break
    return result


@pytest.mark.parametrize("seed,radius,step,channels", [(0, 2, 1, 1), (1, 3, 1, 3), (2, 5, 2, 3),
                                                        (3, 4, 4, 1)])
def test_weighted_median_matches_brute_force(seed, radius, step, channels):
    rng = np.random.default_rng(seed)
    shape = (9, 13)
    labels = rng.integers(0, 7, shape).astype(np.int32)
    invalid = rng.random(shape) < 0.3
    image = rng.integers(0, 256, shape + ((channels,) if channels > 1 else ()))
    got = weighted_median_fill(labels, invalid, image, radius=radius, step=step,
                               colour_sigma=20.0, space_sigma=3.0)
    expected = brute_force_median(labels, invalid, image, radius, step, 20.0, 3.0)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(got[~invalid], labels[~invalid])  # valid pixels unchanged


def test_filled_streak_takes_the_labels_of_its_own_colour():
    # two surfaces meeting at column 12: dark at disparity 12 on the left, bright at 4 on the
    # right; the background filling gave the occluded band 10..11 the right side's 4, but its
    # pixels are dark: the median fill gives them 12 back
    h, w = 12, 20
    image = np.where(np.arange(w) < 12, 30, 220)[None, :].repeat(h, axis=0)
    truth = np.where(np.arange(w) < 12, 12, 4)[None, :].repeat(h, axis=0).astype(np.int32)
    invalid = np.zeros((h, w), bool)
    invalid[:, 10:12] = True
    filled = np.where(invalid, 4, truth).astype(np.int32)
    got = weighted_median_fill(filled, invalid, image, radius=6, colour_sigma=5.0,
                               space_sigma=10.0)
    np.testing.assert_array_equal(got, truth)


@pytest.mark.parametrize("settings", [(0, 1, 5.0, 5.0), (4, 5, 5.0, 5.0), (4, 1, 0.0, 5.0),
                                      (4, 1, 5.0, -1.0), (True, 1, 5.0, 5.0), "wide"])
def test_bad_median_fill_settings_raise_before_any_work(settings):
    image = np.zeros((8, 16), np.uint8)
    with pytest.raises(ValueError, match="median"):
        disparity(image, image, max_disparity=3, median_fill=settings, device="cpu")


def test_median_fill_rejects_mismatched_shapes_and_negative_labels():
    labels = np.zeros((4, 5), np.int32)
    with pytest.raises(ValueError, match="shape"):
        weighted_median_fill(labels, np.zeros((4, 4), bool), np.zeros((4, 5)))
    with pytest.raises(ValueError, match=">= 0"):
        weighted_median_fill(labels - 1, np.ones((4, 5), bool), np.zeros((4, 5)))


def test_disparity_without_median_fill_is_the_background_filling():
    scene = synthetic_scene(shape=(60, 120), seed=5)
    plain = disparity(scene.left, scene.right, max_disparity=scene.max_disparity,
                      channel_axis=-1, device="cpu", median_fill=None,
                      border_extrapolation=None, edge_refinement=None, foreground_trim=None)
    expected = fill_from_background(plain.expansion.labels, plain.inconsistent)
    np.testing.assert_array_equal(plain.disparity, expected)
    default = disparity(scene.left, scene.right, max_disparity=scene.max_disparity,
                        channel_axis=-1, device="cpu", median_fill=None)
    # both steps off; the foreground trimming (on by default) last
    np.testing.assert_array_equal(default.disparity,
                                  trim_foreground(plain.disparity, scene.left))
    extended = disparity(scene.left, scene.right, max_disparity=scene.max_disparity,
                         channel_axis=-1, device="cpu", border_extrapolation=BorderExtrapolation(),
                         foreground_trim=None)
    np.testing.assert_array_equal(extended.disparity, extrapolate_left_border(
        expected, plain.inconsistent, **BorderExtrapolation()._asdict(),
        max_label=scene.max_disparity))
    refined = disparity(scene.left, scene.right, max_disparity=scene.max_disparity,
                        channel_axis=-1, device="cpu", median_fill=MedianFill(),
                        border_extrapolation=None, edge_refinement=None, foreground_trim=None)
    np.testing.assert_array_equal(refined.disparity[~refined.inconsistent],
                                  plain.disparity[~plain.inconsistent])


@pytest.mark.parametrize("textures", ["noise", "photo"])
@pytest.mark.parametrize("kind", SCENE_KINDS)
def test_scene_kinds_render_matching_views(kind, textures):
    scene = synthetic_scene(shape=(90, 160), kind=kind, seed=4, textures=textures)
    h, w = scene.truth.shape
    assert scene.left.shape == scene.right.shape == (h, w, 3)
    assert np.isfinite(scene.truth).all() and scene.truth.min() >= 0
    assert scene.truth.max() <= scene.max_disparity
    assert 0.6 < scene.visible.mean() < 1.0  # every kind has occlusions, most pixels visible
    ys, xs = np.nonzero(scene.visible)
    matched = np.rint(xs - scene.truth[ys, xs]).astype(int)
    left = scene.left[ys, xs].astype(float)
    right = scene.right[ys, matched].astype(float)
    wrong = scene.right[ys, np.clip(matched + 7, 0, w - 1)].astype(float)
    error = np.abs(left - right).mean()
    assert error < 0.5 * np.abs(left - wrong).mean()
    again = synthetic_scene(shape=(90, 160), kind=kind, seed=4, textures=textures)
    np.testing.assert_array_equal(again.left, scene.left)


def test_scene_kinds_differ_and_unknown_kind_raises():
    truths = [synthetic_scene(shape=(60, 120), kind=kind).truth for kind in SCENE_KINDS]
    for i in range(len(truths)):
        for j in range(i + 1, len(truths)):
            assert not np.allclose(truths[i], truths[j])
    with pytest.raises(ValueError, match="kind"):
        synthetic_scene(kind="forest")
    with pytest.raises(ValueError, match="textures"):
        synthetic_scene(textures="marble")


def test_held_out_kind_is_recovered():
    # a held-out kind at a small size: the defaults give a map far better than chance
    scene = synthetic_scene(shape=(90, 160), kind="ramp", seed=1)
    result = disparity(scene.left, scene.right, max_disparity=scene.max_disparity,
                       channel_axis=-1, device="cpu")
    assert bad_pixel_rate(result.disparity, scene.truth) < 0.05
