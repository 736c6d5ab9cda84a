"""The left border strip the right camera does not see: extrapolation of the slanted surface
next to it (graphcut.stereo.extrapolate_left_border and disparity's border_extrapolation)."""

from __future__ import annotations

import numpy as np
import pytest

from graphcut.stereo import (BorderExtrapolation, bad_pixel_rate, disparity,
                             extrapolate_left_border, fill_from_background)
from graphcut.stereo._border import row_slopes


def slanted_rows(h=21, w=80, start=50.0, slope=-0.4, lead=12):
    """A plane d = start + slope x on every row, background-filled in its first ``lead``
    columns (as fill_from_background leaves them)."""
    truth = start + slope * np.arange(w)[np.newaxis, :].repeat(h, axis=0)
    labels = np.rint(truth).astype(np.int32)
    invalid = np.zeros((h, w), dtype=bool)
    invalid[:, :lead] = True
    return truth, fill_from_background(labels, invalid), invalid


def test_row_slopes_equal_numpy_polyfit_over_the_first_surface_of_each_window():
    rng = np.random.default_rng(3)
    steps = rng.choice([-1, 0, 0, 1, 5], size=(40, 50))  # some jumps of 5 labels
    labels = (30 + np.cumsum(steps, axis=1)).astype(np.int32)
    valid = rng.random((40, 50)) < 0.7
    valid[5] = False  # a row without a valid pixel
    first, slopes = row_slopes(labels, valid, fit_width=12, min_valid=4)
    for y in range(40):
        if not valid[y].any():
            assert first[y] == 50 and np.isnan(slopes[y])
            continue
        assert first[y] == np.argmax(valid[y])
        xs = [x for x in range(first[y], min(first[y] + 12, 50)) if valid[y, x]]
        kept = xs[:1]
        for x in xs[1:]:  # up to the first jump of more than one label
            if abs(int(labels[y, x]) - int(labels[y, kept[-1]])) > 1:
                break
            kept.append(x)
        if len(kept) < 4 or len(set(kept)) < 2:
            assert np.isnan(slopes[y])
        else:
            assert slopes[y] == pytest.approx(np.polyfit(kept, labels[y, kept], 1)[0],
                                              abs=1e-9)
    assert np.isfinite(slopes).sum() > 10 and np.isnan(slopes).sum() > 3


def test_a_jump_ends_the_fit_so_an_object_does_not_tilt_the_strip():
    labels = np.full((5, 40), 10, dtype=np.int32)
    labels[:, 12:] = 22  # a nearer object starts 4 pixels after the strip
    invalid = np.zeros(labels.shape, dtype=bool)
    invalid[:, :8] = True
    out = extrapolate_left_border(labels, invalid, min_valid=3)
    assert (out[:, :8] == 10).all()


def test_a_slanted_plane_is_continued_and_only_the_leading_run_changes():
    truth, labels, invalid = slanted_rows()
    invalid[:, 40:45] = True  # an inner run stays as the background fill left it
    labels = fill_from_background(np.rint(truth).astype(np.int32), invalid)
    out = extrapolate_left_border(labels, invalid, max_slope=1.0)
    assert np.abs(out - truth)[:, :12].max() <= 1  # the line through the rounded start
    assert np.array_equal(out[:, 12:], labels[:, 12:])
    assert np.abs(labels - truth)[:, :12].max() > 4  # what the background fill gave


def test_fronto_parallel_surfaces_keep_the_background_fill():
    labels = np.full((9, 40), 17, dtype=np.int32)
    invalid = np.zeros(labels.shape, dtype=bool)
    invalid[:, :6] = True
    labels[invalid] = 17
    assert np.array_equal(extrapolate_left_border(labels, invalid), labels)


def test_slope_is_the_median_of_nearby_rows_and_capped():
    truth, labels, invalid = slanted_rows(slope=-0.4)
    labels[10, 12:] = 90 - 3 * np.arange(68) // 2  # one wild row (slope -1.5)
    out = extrapolate_left_border(labels, invalid, rows=3, max_slope=1.0)
    # the wild row takes the median slope of its neighbours (-0.4) from its own start
    expected = np.rint(labels[10, 12] - 0.4 * (np.arange(12) - 12))
    assert np.array_equal(out[10, :12], expected)
    capped = extrapolate_left_border(labels, invalid, rows=0, max_slope=0.25)
    assert np.array_equal(capped[0, :12], np.rint(labels[0, 12] - 0.25 * (np.arange(12) - 12)))


def test_values_stay_within_zero_and_max_label():
    _, labels, invalid = slanted_rows(start=58.0, slope=-0.5, lead=30)
    out = extrapolate_left_border(labels, invalid, max_slope=1.0, max_label=50)
    assert out[:, :30].max() == 50 and out[:, :14].min() == 50
    rising = np.zeros((5, 60), dtype=np.int32)
    rising[:, 20:] = np.arange(40)  # slope 1 from 0 at x = 20: the line is negative before
    invalid = np.zeros(rising.shape, dtype=bool)
    invalid[:, :20] = True
    out = extrapolate_left_border(rising, invalid, max_slope=1.0)
    assert out.min() == 0 and np.array_equal(out[:, 20:], rising[:, 20:])


def test_rows_without_enough_valid_pixels_nearby_are_left_alone():
    _, labels, invalid = slanted_rows(h=5)
    invalid[:, 12:] = np.arange(68)[np.newaxis, :] % 10 != 0  # 1 valid pixel in 10
    assert np.array_equal(extrapolate_left_border(labels, invalid), labels)


@pytest.mark.parametrize("settings", [BorderExtrapolation(fit_width=1),
                                      BorderExtrapolation(min_valid=40),
                                      BorderExtrapolation(rows=-1),
                                      BorderExtrapolation(max_slope=-0.1),
                                      BorderExtrapolation(max_slope=True), (1, 2)])
def test_bad_settings_are_refused(settings):
    rng = np.random.default_rng(0)
    image = rng.integers(0, 256, (12, 32)).astype(np.uint8)
    with pytest.raises(ValueError, match="border"):
        disparity(image, image, max_disparity=4, device="cpu", border_extrapolation=settings)


def test_shapes_must_match():
    with pytest.raises(ValueError, match="shape"):
        extrapolate_left_border(np.zeros((4, 5), int), np.zeros((4, 6), bool))


def render_slanted_plane(h=48, w=160, start=24.0, slope=-0.1, seed=1):
    """A textured plane d(x) = start + slope x seen by both cameras (exact disparities)."""
    rng = np.random.default_rng(seed)
    texture = rng.random((h, 4 * w)) * 255
    u = np.arange(4 * w) / 2.0 - w  # surface coordinate of each texture sample
    x = np.arange(w, dtype=float)
    left = np.stack([np.interp(x, u, row) for row in texture])
    # right pixel x' sees the surface point of left x with x - d(x) = x'
    source = (x + start) / (1 - slope)
    right = np.stack([np.interp(source, u, row) for row in texture])
    truth = np.repeat((start + slope * x)[np.newaxis, :], h, axis=0)
    return left.astype(np.uint8), right.astype(np.uint8), truth


def test_disparity_continues_a_slanted_plane_into_the_unseen_strip():
    left, right, truth = render_slanted_plane()
    on = disparity(left, right, max_disparity=28, device="cpu",
                   border_extrapolation=BorderExtrapolation())
    off = disparity(left, right, max_disparity=28, device="cpu")  # off by default
    strip = np.zeros(truth.shape, dtype=bool)
    strip[:, :20] = True  # x < d: the right camera does not see these
    assert bad_pixel_rate(on.disparity, truth, valid=strip) <= 0.02
    assert bad_pixel_rate(off.disparity, truth, valid=strip) > 0.3
    assert np.array_equal(on.disparity[~on.inconsistent], off.disparity[~off.inconsistent])


def test_cli_switch_turns_it_on(tmp_path):
    from click.testing import CliRunner
    from PIL import Image

    from graphcut.cli import main
    left, right, _ = render_slanted_plane()
    Image.fromarray(left).save(tmp_path / "left.png")
    Image.fromarray(right).save(tmp_path / "right.png")
    maps = {}
    for flag, setting in (("--border-extrapolation", BorderExtrapolation()),
                          ("--no-border-extrapolation", None)):
        out = CliRunner().invoke(main, ["stereo", str(tmp_path / "left.png"),
                                        str(tmp_path / "right.png"), "-d", "28", "-o",
                                        str(tmp_path / f"{flag}.npy"), "--device", "cpu", flag])
        assert out.exit_code == 0, out.output
        maps[flag] = np.load(tmp_path / f"{flag}.npy")
        expected = disparity(left, right, max_disparity=28, device="cpu",
                             border_extrapolation=setting)
        np.testing.assert_array_equal(maps[flag], expected.disparity)
    assert not np.array_equal(*maps.values())
