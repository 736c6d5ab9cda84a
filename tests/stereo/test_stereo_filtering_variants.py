"""The tenth round's data-term variants of bench/stereo_filtering.py, each checked against an
independent evaluation: the guided filter against its per-window least-squares definition
(He, Sun and Tang 2010) computed pixel by pixel, SGM's path costs against their recursion with
the penalty written out, the per-pixel colour-and-gradient cost against its formula; and the
held-out pairs refused."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import stereo_filtering as variants  # noqa: E402


def brute_box_mean(values, r):
    h, w = values.shape
    out = np.empty((h, w))
    for y in range(h):
        for x in range(w):
            out[y, x] = values[max(y - r, 0):y + r + 1, max(x - r, 0):x + r + 1].mean()
    return out


@pytest.mark.parametrize("r", [0, 1, 2, 4])
def test_box_mean_is_the_mean_over_the_window_clipped_to_the_image(r):
    values = np.random.default_rng(r).normal(size=(5, 7))
    np.testing.assert_allclose(variants.box_mean(values, r), brute_box_mean(values, r),
                               atol=1e-12)


def reference_guided(plane, guide, r, eps):
    """The guided filter by its definition: for every window k (clipped to the image) the
    linear model ``p ~ a_k . I + b_k`` minimising ``sum (a_k . I + b_k - p)^2 + eps |a_k|^2``
    over the window's pixels (solved by least squares, not by the closed form), then each
    pixel's output the mean over the windows that contain it of ``a_k . I_i + b_k``."""
    h, w, c = guide.shape
    models = {}
    for y in range(h):
        for x in range(w):
            ys = slice(max(y - r, 0), y + r + 1)
            xs = slice(max(x - r, 0), x + r + 1)
            g = guide[ys, xs].reshape(-1, c)
            p = plane[ys, xs].ravel()
            n = len(p)
            # rows: the window's pixels (a . I + b = p), then sqrt(n eps) a = 0 per channel
            # (the mean's normalisation makes eps act per pixel, as in the closed form)
            design = np.vstack([np.hstack([g, np.ones((n, 1))]),
                                np.hstack([np.sqrt(n * eps) * np.eye(c), np.zeros((c, 1))])])
            target = np.concatenate([p, np.zeros(c)])
            models[y, x] = np.linalg.lstsq(design, target, rcond=None)[0]
    out = np.empty((h, w))
    for y in range(h):
        for x in range(w):
            fits = [models[ky, kx] for ky in range(max(y - r, 0), min(y + r + 1, h))
                    for kx in range(max(x - r, 0), min(x + r + 1, w))]
            out[y, x] = np.mean([m[:c] @ guide[y, x] + m[c] for m in fits])
    return np.clip(np.rint(out), 0, 128)


@pytest.mark.parametrize("channels, r, eps", [(3, 1, 16.0), (3, 2, 4.0), (1, 2, 64.0)])
def test_guided_volume_matches_the_per_window_least_squares_definition(channels, r, eps):
    rng = np.random.default_rng(channels + r)
    guide = rng.integers(0, 256, (6, 7, channels)).astype(np.float64)
    raw = rng.integers(0, 129, (3, 6, 7)).astype(np.int32)
    out = variants.guided_volume(raw, guide, r, eps)
    assert out.dtype == np.int32 and out.shape == raw.shape
    for d in range(3):
        np.testing.assert_array_equal(out[d], reference_guided(raw[d], guide, r, eps))


def test_guided_filter_keeps_a_cost_that_follows_the_guide_and_a_constant_one():
    rng = np.random.default_rng(5)
    guide = rng.integers(0, 256, (12, 10, 1)).astype(np.float64)
    follows = np.rint(guide[..., 0] / 4).astype(np.int32)      # a linear function of the guide
    constant = np.full((12, 10), 37, dtype=np.int32)
    out = variants.guided_volume(np.stack([follows, constant]), guide, 3, 1e-3)
    assert np.abs(out[0] - follows).max() <= 1
    np.testing.assert_array_equal(out[1], constant)


def test_guided_filter_on_a_textureless_guide_is_the_box_mean_taken_twice():
    # a flat guide gives a_k = 0 and b_k the window's mean, so each pixel gets the mean of
    # its windows' means: an edge-blind (here 9 x 9 wide) support
    raw = np.random.default_rng(2).integers(0, 129, (2, 8, 9)).astype(np.int32)
    out = variants.guided_volume(raw, np.full((8, 9, 3), 90.0), 2, 16.0)
    for d in range(2):
        np.testing.assert_array_equal(out[d],
                                      np.rint(brute_box_mean(brute_box_mean(raw[d], 2), 2)))


def reference_path_costs(costs, dy, dx, p1, p2):
    labels, h, w = costs.shape

    @functools.lru_cache(maxsize=None)
    def path(y, x):
        here = costs[:, y, x].astype(np.int64)
        py, px = y - dy, x - dx
        if not (0 <= py < h and 0 <= px < w):
            return tuple(here)
        previous = np.array(path(py, px))
        penalty = np.array([[0 if a == b else p1 if abs(a - b) == 1 else p2
                             for b in range(labels)] for a in range(labels)])
        return tuple(here + (previous[None, :] + penalty).min(axis=1) - previous.min())

    return np.array([[path(y, x) for x in range(w)] for y in range(h)]).transpose(2, 0, 1)


@pytest.mark.parametrize("direction", [(0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (1, -1),
                                       (-1, 1), (-1, -1)])
def test_path_costs_follow_the_recursion(direction):
    rng = np.random.default_rng(sum(direction) + 3 * direction[0] + 7)
    costs = rng.integers(0, 129, (5, 4, 6)).astype(np.int32)
    np.testing.assert_array_equal(variants.path_costs(costs, *direction, 8, 32),
                                  reference_path_costs(costs, *direction, 8, 32))


def test_sgm_volume_is_the_rounded_mean_of_the_path_costs_and_keeps_a_clear_minimum():
    rng = np.random.default_rng(11)
    costs = rng.integers(0, 129, (4, 5, 5)).astype(np.int32)
    directions = [(0, 1), (0, -1), (1, 0), (-1, 0)]
    total = sum(reference_path_costs(costs, dy, dx, 4, 16) for dy, dx in directions)
    np.testing.assert_array_equal(variants.sgm_volume(costs, 4, 4, 16), (total + 2) // 4)
    plane = np.full((6, 7, 7), 100, dtype=np.int32)
    plane[3] = 10                                          # every pixel prefers label 3
    assert (variants.sgm_volume(plane, 8, 8, 32).argmin(axis=0) == 3).all()
    flat = variants.sgm_volume(np.full((6, 7, 7), 40, dtype=np.int32), 8, 8, 32)
    np.testing.assert_array_equal(flat, 40)                # textureless: nothing invented


def test_ad_gradient_volume_follows_its_formula():
    rng = np.random.default_rng(4)
    left = rng.integers(0, 256, (5, 9, 3)).astype(np.uint8)
    right = rng.integers(0, 256, (5, 9, 3)).astype(np.uint8)
    scene = {"left": left, "right": right, "max_disparity": 3}
    out = variants.ad_gradient_volume(scene)
    assert out.shape == (4, 5, 9) and out.dtype == np.int32
    assert out.min() >= 0 and out.max() <= 128
    grey = [v.astype(float).mean(axis=-1) for v in (left, right)]
    for d, y, x in [(0, 2, 4), (2, 0, 8), (3, 4, 3), (1, 3, 0)]:
        if x - d < 0:
            assert out[d, y, x] == 128
            continue
        colour = np.abs(left[y, x].astype(float) - right[y, x - d]).mean()
        gradients = [np.gradient(g[y], axis=0)[x] for g in (grey[0], )] + \
            [np.gradient(grey[1][y], axis=0)[x - d]]
        cost = 0.1 * min(colour, 7) + 0.9 * min(abs(gradients[0] - gradients[1]), 2)
        assert out[d, y, x] == np.rint(cost * 128 / 2.5)
    assert (out[3, :, :3] == 128).all()


def test_half_window_masks_follow_the_census_bit_order():
    from graphcut.stereo._costs import _census_codes_numpy
    masks = variants.half_window_masks((9, 7), "hv")
    assert [bits for _, bits in masks] == [34, 34, 35, 35]
    (left, _), (right, _) = masks[:2]
    assert left | right == (1 << 62) - 1 and bin(left & right).count("1") == 6  # column dx = 0
    for dy, dx in [(-3, -4), (2, 3), (0, -1), (3, 0)]:
        grey = np.full((7, 9), 100)
        grey[3 + dy, 4 + dx] = 50                         # one darker neighbour of the centre
        code = int(_census_codes_numpy(grey, (9, 7))[3, 4])
        assert bin(code).count("1") == 1
        inside = [bool(code & mask) for mask, _ in masks]
        assert inside == [dx <= 0, dx >= 0, dy <= 0, dy >= 0]


def test_slanted_volume_without_slopes_is_the_pipeline_volume_and_slopes_only_lower_it():
    from graphcut.stereo import census_costs
    from graphcut.stereo.synthetic import synthetic_scene
    pair = synthetic_scene(shape=(60, 120), kind="stairs")
    scene = {"left": pair.left, "right": pair.right, "max_disparity": pair.max_disparity}
    defaults = census_costs(pair.left, pair.right, max_disparity=pair.max_disparity,
                            channel_axis=-1)
    np.testing.assert_array_equal(variants.slanted_volume(scene, 1.0, 0.0), defaults)
    slanted = variants.slanted_volume(scene, 0.5, 1.0)
    assert slanted.dtype == np.int32 and slanted.shape == defaults.shape
    assert (slanted <= defaults).all() and (slanted < defaults).any()
    penalised = variants.slanted_volume(scene, 0.5, 1.0, penalty=3)
    assert (penalised <= defaults).all() and (penalised >= slanted).all()


def test_held_out_pairs_are_refused():
    with pytest.raises(SystemExit) as exit_info:
        variants.main(["--scenes", "cones"])
    assert exit_info.value.code == 2
    with pytest.raises(ValueError, match="unknown variant"):
        variants.variant_volume("nonsense", [], {})
