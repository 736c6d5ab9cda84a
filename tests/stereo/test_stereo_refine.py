"""Depth-edge refinement (graphcut.stereo.refine_depth_edges and disparity's edge_refinement):
against a brute-force weighted median and on a fattened foreground with a known answer."""

from __future__ import annotations

import numpy as np
import pytest

from graphcut.stereo import (EdgeRefinement, bad_pixel_rate, disparity, refine_depth_edges)
from graphcut.stereo._refine import depth_edge_band


def brute_force_band(labels, band):
    h, w = labels.shape
    edge = np.zeros((h, w), dtype=bool)
    for y in range(h):
        for x in range(w):
            window = labels[max(0, y - 1):y + 2, max(0, x - 1):x + 2]
            edge[y, x] = window.max() - window.min() > 1
    out = np.zeros_like(edge)
    for y, x in zip(*np.nonzero(edge)):
        for yy in range(h):
            for xx in range(w):
                if abs(yy - y) + abs(xx - x) <= band:
                    out[yy, xx] = True
    return out


def brute_force_refine(labels, image, radius, step, colour_sigma, space_sigma, band):
    h, w = labels.shape
    channels = image.shape[2]
    target = brute_force_band(labels, band)
    result = labels.copy()
    offsets = [o for o in range(-radius, radius + 1) if o % step == 0]
    for y, x in zip(*np.nonzero(target)):
        totals = {}
        for dy in offsets:
            for dx in offsets:
                yy, xx = y + dy, x + dx
                if 0 <= yy < h and 0 <= xx < w:
                    colour = np.abs(image[yy, xx] - image[y, x]).sum() / channels
                    weight = np.exp(-colour / colour_sigma - np.hypot(dy, dx) / space_sigma)
                    totals[labels[yy, xx]] = totals.get(labels[yy, xx], 0.0) + weight
        keys = sorted(totals)
        cumulative = np.cumsum([totals[k] for k in keys])
        result[y, x] = keys[int(np.argmax(cumulative >= cumulative[-1] / 2 - 1e-9))]
    return result


def test_band_equals_brute_force():
    rng = np.random.default_rng(2)
    labels = rng.integers(0, 3, (14, 17)) * np.repeat([[0] * 9 + [1] * 8], 14, axis=0) + 4
    for band in (0, 1, 2):
        np.testing.assert_array_equal(depth_edge_band(labels, band),
                                      brute_force_band(labels, band))


@pytest.mark.parametrize("step", [1, 2])
def test_refinement_equals_a_brute_force_weighted_median(step):
    rng = np.random.default_rng(7)
    image = rng.integers(0, 256, (16, 20, 3)).astype(np.float32)
    labels = np.repeat([[3] * 9 + [8] * 11], 16, axis=0)
    labels[rng.random(labels.shape) < 0.15] = 5
    expected = brute_force_refine(labels, image, 4, step, 10.0, 6.0, 1)
    got = refine_depth_edges(labels, image, radius=4, step=step, colour_sigma=10.0,
                             space_sigma=6.0, band=1)
    # float sums in another order may break an exact tie the other way: allow none here
    np.testing.assert_array_equal(got, expected)


def test_a_fattened_foreground_goes_back_to_its_colour_edge():
    rng = np.random.default_rng(0)
    h, w = 30, 60
    foreground = np.zeros((h, w), dtype=bool)
    foreground[8:22, 20:40] = True
    image = np.where(foreground[..., np.newaxis], [200.0, 60.0, 40.0], [40.0, 90.0, 160.0])
    image = image + rng.normal(0, 2, image.shape)
    truth = np.where(foreground, 20, 6)
    fattened = np.zeros_like(foreground)
    fattened[6:24, 17:43] = True  # 2-3 pixels too wide on every side
    labels = np.where(fattened, 20, 6)
    assert bad_pixel_rate(labels, truth) > 0.08
    denser = refine_depth_edges(labels, image, radius=12, step=3, space_sigma=12.0)
    assert bad_pixel_rate(denser, truth) == 0.0
    # the defaults sample every 5th row and column of a 31 x 31 window: a few pixels stay
    assert bad_pixel_rate(refine_depth_edges(labels, image), truth) < 0.01


def test_flat_maps_are_unchanged():
    labels = np.full((10, 12), 7)
    labels[:, 6:] = 8  # steps of one label are not depth edges
    image = np.random.default_rng(1).integers(0, 256, (10, 12))
    np.testing.assert_array_equal(refine_depth_edges(labels, image), labels)


@pytest.mark.parametrize("settings", [EdgeRefinement(radius=0), EdgeRefinement(step=20),
                                      EdgeRefinement(colour_sigma=0.0),
                                      EdgeRefinement(band=-1), EdgeRefinement(band=1.5),
                                      (1, 2, 3)])
def test_bad_settings_are_refused(settings):
    image = np.random.default_rng(0).integers(0, 256, (12, 32)).astype(np.uint8)
    with pytest.raises(ValueError, match="edge refinement|edge_refinement"):
        disparity(image, image, max_disparity=4, device="cpu", edge_refinement=settings)


def test_disparity_applies_it_last_and_it_is_off_by_default():
    from graphcut.stereo.synthetic import synthetic_scene
    scene = synthetic_scene(shape=(60, 120), seed=3)
    off = disparity(scene.left, scene.right, max_disparity=scene.max_disparity,
                    channel_axis=-1, device="cpu")
    on = disparity(scene.left, scene.right, max_disparity=scene.max_disparity,
                   channel_axis=-1, device="cpu", edge_refinement=EdgeRefinement())
    expected = refine_depth_edges(off.disparity, scene.left.astype(np.float32),
                                  **EdgeRefinement()._asdict(),
                                  max_label=scene.max_disparity)
    np.testing.assert_array_equal(on.disparity, expected)
    assert not np.array_equal(on.disparity, off.disparity)
    raw = disparity(scene.left, scene.right, max_disparity=scene.max_disparity,
                    channel_axis=-1, device="cpu", fill_occlusions=False)
    np.testing.assert_array_equal(raw.disparity, raw.expansion.labels)
