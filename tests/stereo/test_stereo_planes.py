"""Segment plane fill (graphcut.stereo.plane_fill, fit_segment_planes, colour_segments and
disparity's plane_fill): planes recovered exactly, untrusted segments left alone, shapes and
dtypes, textureless input, and the SGBM baseline's filled maps with the same step."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from graphcut.stereo import (PlaneFill, bad_pixel_rate, colour_segments, disparity,
                             fill_from_background, fit_segment_planes, plane_fill)

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import sgbm_baseline  # noqa: E402

H, W = 30, 40


def two_planes():
    """Two segments (left and right half), each an integer plane: d = 5 + x // 1 on the left
    (slope 1 along x), d = 40 - y on the right (slope -1 along y)."""
    y, x = np.indices((H, W))
    segments = (x >= W // 2).astype(np.int64)
    truth = np.where(segments == 0, 5 + x, 40 - y).astype(np.int32)
    return truth, segments


def test_fit_recovers_exact_planes_despite_outliers():
    rng = np.random.default_rng(0)
    y, x = np.indices((H, W))
    segments = (x >= W // 2).astype(np.int64) + 2 * (y >= H // 2)
    coefficients = np.array([[0.3, -0.2, 7.0], [-0.5, 0.1, 20.0], [0.0, 0.0, 3.0],
                             [0.05, 0.4, 11.0]])
    plane = coefficients[segments]
    labels = plane[..., 0] * x + plane[..., 1] * y + plane[..., 2]
    outliers = rng.random((H, W)) < 0.2
    labels = np.where(outliers, labels + rng.choice([-30.0, 25.0], (H, W)), labels)
    valid = rng.random((H, W)) < 0.8
    planes, inliers, support = fit_segment_planes(labels, valid, segments, tolerance=0.5)
    # exact up to the tiny ridge on the slopes (1e-3 of the pixel count against their spread)
    np.testing.assert_allclose(planes, coefficients, atol=1e-3)
    prediction = planes[segments, 0] * x + planes[segments, 1] * y + planes[segments, 2]
    exact = coefficients[segments, 0] * x + coefficients[segments, 1] * y \
        + coefficients[segments, 2]
    assert np.abs(prediction - exact).max() < 0.01
    for k in range(4):
        mask = (segments == k) & valid
        assert support[k] == mask.sum()
        assert inliers[k] == (mask & ~outliers).sum()


def test_fill_puts_invalid_pixels_on_their_segments_plane():
    truth, segments = two_planes()
    rng = np.random.default_rng(1)
    invalid = rng.random((H, W)) < 0.3
    invalid[:, :6] = True  # a strip with no valid pixel of its own
    labels = fill_from_background(np.where(invalid, 0, truth), invalid)
    assert (labels != truth).any()
    out = plane_fill(labels, invalid, np.zeros((H, W)), segments=segments, max_label=60)
    np.testing.assert_array_equal(out, truth)
    assert out.dtype == labels.dtype and out.shape == labels.shape


def test_valid_pixels_never_change_and_values_stay_in_range():
    truth, segments = two_planes()
    invalid = np.zeros((H, W), bool)
    invalid[:, :10] = True
    labels = np.where(invalid, 99, truth).astype(np.int16)
    out = plane_fill(labels, invalid, np.zeros((H, W)), segments=segments, max_label=12)
    np.testing.assert_array_equal(out[~invalid], labels[~invalid])
    assert out.dtype == np.int16
    assert out.min() >= 0 and out[invalid].max() <= 12  # clipped at max_label


def test_segments_with_too_little_support_are_left_alone():
    truth, segments = two_planes()
    invalid = np.zeros((H, W), bool)
    invalid[:, : W // 2 - 3] = True  # the left segment keeps 3 valid columns of 20 (15 %)
    labels = np.where(invalid, 7, truth).astype(np.int32)
    kept = plane_fill(labels, invalid, np.zeros((H, W)), segments=segments)
    np.testing.assert_array_equal(kept, labels)  # below min_valid_share 0.5
    filled = plane_fill(labels, invalid, np.zeros((H, W)), segments=segments,
                        min_valid_share=0.1)
    np.testing.assert_array_equal(filled, truth)
    few = plane_fill(labels, invalid, np.zeros((H, W)), segments=segments,
                     min_valid_share=0.1, min_support=10 * H)  # 3 H valid pixels < 10 H
    np.testing.assert_array_equal(few, labels)


def test_a_segment_spanning_two_surfaces_is_left_alone():
    y, x = np.indices((H, W))
    truth = np.where(y < H // 2, 10, 30).astype(np.int32)  # two depths, one colour segment
    segments = np.zeros((H, W), np.int64)
    invalid = x < 5
    labels = np.where(invalid, 0, truth)
    out = plane_fill(labels, invalid, np.zeros((H, W)), segments=segments)
    np.testing.assert_array_equal(out, labels)  # half of the valid pixels off any plane


def test_planes_steeper_than_max_slope_are_not_used():
    y, x = np.indices((H, W))
    truth = (2 * x).astype(np.int32)
    invalid = x < 4
    labels = np.where(invalid, 0, truth)
    segments = np.zeros((H, W), np.int64)
    np.testing.assert_array_equal(plane_fill(labels, invalid, np.zeros((H, W)),
                                             segments=segments), labels)
    out = plane_fill(labels, invalid, np.zeros((H, W)), segments=segments, max_slope=2.0,
                     max_label=100)
    np.testing.assert_array_equal(out, truth)


def test_colour_segments_split_at_colour_edges_and_number_from_zero():
    image = np.zeros((20, 30, 3), np.uint8)
    image[:, 15:] = (200, 30, 30)
    segments = colour_segments(image, min_segment=0.1)  # at least 60 pixels
    assert segments.shape == (20, 30) and segments.dtype == np.int64
    numbers = np.unique(segments)
    assert numbers.tolist() == list(range(numbers.size))
    # the pre-smoothing (sigma 0.8) blurs the edge's columns; away from it, one segment a side
    assert len(np.unique(segments[:, :13])) == 1 and len(np.unique(segments[:, 17:])) == 1
    assert segments[0, 0] != segments[0, 29]


def test_textureless_and_degenerate_inputs_do_not_crash():
    flat = np.full((16, 24), 128, np.uint8)
    labels = np.full((16, 24), 4, np.int32)
    assert np.array_equal(colour_segments(flat), np.zeros((16, 24)))
    none_valid = plane_fill(labels, np.ones((16, 24), bool), flat)
    np.testing.assert_array_equal(none_valid, labels)
    none_invalid = plane_fill(labels, np.zeros((16, 24), bool), flat)
    np.testing.assert_array_equal(none_invalid, labels)
    one_column = plane_fill(labels[:, :1], np.arange(16)[:, None] < 3, flat[:, :1])
    np.testing.assert_array_equal(one_column, labels[:, :1])  # a vertical line fits
    result = disparity(flat, flat, max_disparity=4, device="cpu", plane_fill=PlaneFill())
    assert result.disparity.shape == (16, 24) and result.disparity.dtype == np.int32


@pytest.mark.parametrize("settings", [PlaneFill(scale=0), PlaneFill(min_segment=2.0),
                                      PlaneFill(min_valid_share=-0.1),
                                      PlaneFill(min_inlier_share=1.5),
                                      PlaneFill(tolerance=-1), PlaneFill(max_slope=True),
                                      PlaneFill(min_support=2), (1, 2)])
def test_bad_settings_are_refused(settings):
    image = np.random.default_rng(0).integers(0, 256, (12, 32)).astype(np.uint8)
    with pytest.raises(ValueError, match="plane"):
        disparity(image, image, max_disparity=4, device="cpu", plane_fill=settings)


def test_shapes_must_match():
    with pytest.raises(ValueError, match="shape"):
        plane_fill(np.zeros((4, 5), int), np.zeros((4, 6), bool), np.zeros((4, 5)))
    with pytest.raises(ValueError, match="shape"):
        plane_fill(np.zeros((4, 5), int), np.zeros((4, 5), bool), np.zeros((4, 5)),
                   segments=np.zeros((5, 4), int))


def render_slanted_plane(h=48, w=160, start=24.0, slope=-0.1, seed=1):
    """A plane d(x) = start + slope x seen by both cameras (exact disparities), with a
    low-contrast texture (grey levels 100..120): one surface of one colour."""
    rng = np.random.default_rng(seed)
    texture = 100 + rng.random((h, 4 * w)) * 20
    u = np.arange(4 * w) / 2.0 - w  # surface coordinate of each texture sample
    x = np.arange(w, dtype=float)
    left = np.stack([np.interp(x, u, row) for row in texture])
    source = (x + start) / (1 - slope)  # right x' sees the point of left x: x - d(x) = x'
    right = np.stack([np.interp(source, u, row) for row in texture])
    truth = np.repeat((start + slope * x)[np.newaxis, :], h, axis=0)
    return left.astype(np.uint8), right.astype(np.uint8), truth


def test_disparity_changes_only_inconsistent_pixels_and_helps_a_slanted_strip():
    left, right, truth = render_slanted_plane()
    on = disparity(left, right, max_disparity=28, device="cpu", plane_fill=PlaneFill())
    off = disparity(left, right, max_disparity=28, device="cpu")  # off by default
    assert np.array_equal(on.inconsistent, off.inconsistent)
    assert np.array_equal(on.disparity[~on.inconsistent], off.disparity[~off.inconsistent])
    strip = np.zeros(truth.shape, dtype=bool)
    strip[:, :20] = True  # x < d: the right camera does not see these
    assert bad_pixel_rate(off.disparity, truth, valid=strip) > 0.3
    assert bad_pixel_rate(on.disparity, truth, valid=strip) <= 0.05


def test_sgbm_filled_with_segments_gets_the_plane_fill():
    truth, segments = two_planes()
    result = truth.astype(float)
    result[:, :8] = np.nan
    invalid = ~np.isfinite(result)
    expected = plane_fill(fill_from_background(np.nan_to_num(result).astype(np.int32),
                                               invalid),
                          invalid, np.zeros((H, W)), segments=segments, max_label=60)
    got = sgbm_baseline.filled(result, None, 60, segments=segments)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(got, truth)
    assert not np.array_equal(sgbm_baseline.filled(result, None, 60), truth)


def test_cli_switch_turns_it_on(tmp_path):
    from click.testing import CliRunner
    from PIL import Image

    from graphcut.cli import main
    left, right, _ = render_slanted_plane()
    Image.fromarray(left).save(tmp_path / "left.png")
    Image.fromarray(right).save(tmp_path / "right.png")
    maps = {}
    for flag, setting in (("--plane-fill", PlaneFill()), ("--no-plane-fill", None)):
        out = CliRunner().invoke(main, ["stereo", str(tmp_path / "left.png"),
                                        str(tmp_path / "right.png"), "-d", "28", "-o",
                                        str(tmp_path / f"{flag}.npy"), "--device", "cpu", flag])
        assert out.exit_code == 0, out.output
        maps[flag] = np.load(tmp_path / f"{flag}.npy")
        expected = disparity(left, right, max_disparity=28, device="cpu", plane_fill=setting)
        np.testing.assert_array_equal(maps[flag], expected.disparity)
    assert not np.array_equal(*maps.values())
