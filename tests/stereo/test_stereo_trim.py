"""Foreground trimming (graphcut.stereo.trim_foreground): a fattened depth edge moves back to the
object's colour edge, against ground truth and a plain per-edge loop written from the spec."""

from __future__ import annotations

import numpy as np
import pytest

from graphcut.stereo import ForegroundTrim, bad_pixel_rate, disparity, trim_foreground
from graphcut.stereo.synthetic import synthetic_scene


def _level(line, start, sign, count, value):
    """The ``count`` labels of ``line`` from ``start`` on in direction ``sign`` (clipped at the
    line's ends) all equal ``value``."""
    w = line.size
    return all(line[min(max(start + sign * k, 0), w - 1)] == value for k in range(count))


def _reference_rows(labels, levels, reach, tolerance, contrast, flatness, jump, plateau):
    """One rows pass written as the docstring says, edge by edge: every walk to higher
    indices first, then every walk to lower ones, each reading the pass's input."""
    h, w = labels.shape
    out = labels.copy()
    for sign in (1, -1):
        for y in range(h):
            for x in range(w - 1):
                a, b = (x, x + 1) if sign == 1 else (x + 1, x)
                if labels[y, b] - labels[y, a] <= jump:
                    continue
                beyond = min(max(a - sign, 0), w - 1)
                if np.abs(levels[y, beyond] - levels[y, a]).max() > flatness:
                    continue
                for j in range(reach):
                    p, after = b + sign * j, b + sign * (j + 1)
                    if not 0 <= after < w:
                        break
                    if abs(labels[y, p] - labels[y, b]) > 1:
                        break
                    if np.abs(levels[y, p] - levels[y, a]).max() > tolerance:
                        break
                    if np.abs(levels[y, after] - levels[y, p]).max() > contrast:
                        unit = abs(labels[y, b] - labels[y, a]) <= 1
                        if plateau and unit and not (
                                _level(labels[y], a - sign, -sign, plateau, labels[y, a])
                                and _level(labels[y], after, sign, plateau, labels[y, b])):
                            break
                        lo, hi = sorted((b, p))
                        out[y, lo:hi + 1] = labels[y, a]
                        break
    return out


def reference(labels, levels, reach=7, tolerance=20.0, contrast=20.0, flatness=12.0, jump=0,
              plateau=5):
    levels = np.asarray(levels, dtype=float)
    levels = levels if levels.ndim == 3 else levels[..., None]
    rows = _reference_rows(np.asarray(labels, dtype=np.int64), levels, reach, tolerance,
                           contrast, flatness, jump, plateau)
    return _reference_rows(rows.T.copy(), levels.transpose(1, 0, 2), reach, tolerance,
                           contrast, flatness, jump, plateau).T


def band_scene(horizontal: bool):
    """A bright object band (columns 10..19, or rows with ``horizontal``) at disparity 9 before
    a dark, flat background at 2: the truth, and a map fattened by 3 pixels on each side."""
    image = np.full((24, 30), 20.0)
    truth = np.full((24, 30), 2)
    image[:, 10:20] = 200.0
    truth[:, 10:20] = 9
    fattened = truth.copy()
    fattened[:, 7:23] = 9
    if horizontal:
        return image.T.copy(), truth.T.copy(), fattened.T.copy()
    return image, truth, fattened


@pytest.mark.parametrize("horizontal", [False, True])
def test_a_fattened_band_is_trimmed_to_the_truth(horizontal):
    image, truth, fattened = band_scene(horizontal)
    assert bad_pixel_rate(fattened, truth.astype(float)) > 0.15
    np.testing.assert_array_equal(trim_foreground(fattened, image), truth)


def test_a_correct_map_and_a_textured_background_are_left_alone():
    image, truth, fattened = band_scene(False)
    np.testing.assert_array_equal(trim_foreground(truth, image), truth)
    textured = image.copy()
    textured[:, 7:10] = 120.0          # the band's pixels unlike the background beside it
    textured[:, 20:23] = 120.0
    np.testing.assert_array_equal(trim_foreground(fattened, textured), fattened)


def test_a_textured_background_beyond_the_edge_keeps_the_map():
    image, truth, fattened = band_scene(False)
    noisy = image.copy()
    noisy[:, 5] = 60.0                 # the background pixel beyond the one beside the edge
    noisy[:, 24] = 60.0
    np.testing.assert_array_equal(trim_foreground(fattened, noisy), fattened)
    np.testing.assert_array_equal(trim_foreground(fattened, noisy, flatness=40.0), truth)


def test_a_unit_step_between_plateaus_is_trimmed():
    image, truth, fattened = band_scene(False)
    truth, fattened = truth - 1, np.where(fattened == 9, 3, 2)   # object 3, background 2
    truth[:, 10:20] = 3
    np.testing.assert_array_equal(trim_foreground(fattened, image), np.where(truth == 3, 3, 2))
    np.testing.assert_array_equal(trim_foreground(fattened, image, jump=1), fattened)


@pytest.mark.parametrize("slope", [0.1, 0.2, 0.3, 0.5, 0.8])
@pytest.mark.parametrize("vertical", [False, True])
def test_a_slanted_staircase_is_left_alone(slope, vertical):
    """A slanted plane's rounded disparities under a patchy texture (flat patches, strong
    edges) stay within 1 of the truth: on gentle slopes (<= 0.15 here) the steps are long
    enough to be plateaus and may move to a colour edge, which keeps them within 1."""
    rng = np.random.default_rng(0)
    from scipy import ndimage
    texture = ndimage.gaussian_filter(rng.random((120, 160)), 3)
    image = np.floor((texture - texture.min()) / np.ptp(texture) * 8) * 30.0
    ys, xs = np.indices(image.shape)
    truth = 5 + slope * (ys if vertical else xs)
    labels = np.rint(truth).astype(int)
    assert bad_pixel_rate(trim_foreground(labels, image), truth) == 0.0
    if not vertical and slope in (0.2, 0.3):   # without the plateau test the rows break
        damaged = trim_foreground(labels, image, plateau=0)
        assert np.mean(np.abs(damaged - truth) > 1) > 0.02


def test_no_colour_edge_within_reach_changes_nothing():
    image, truth, fattened = band_scene(False)
    wide = truth.copy()
    wide[:, 2:28] = 9                  # 8 pixels of fattening on each side, reach 7
    np.testing.assert_array_equal(trim_foreground(wide, image), wide)
    np.testing.assert_array_equal(trim_foreground(wide, image, reach=8), truth)


def test_a_square_loses_its_fattening_except_the_corners():
    image = np.full((30, 30), 30.0)
    truth = np.full((30, 30), 1)
    image[10:20, 10:20] = 220.0
    truth[10:20, 10:20] = 6
    fattened = truth.copy()
    fattened[7:23, 7:23] = 6           # the square dilated by 3
    out = trim_foreground(fattened, image)
    corners = np.zeros_like(truth, dtype=bool)
    for ys in (slice(7, 10), slice(20, 23)):
        for xs in (slice(7, 10), slice(20, 23)):
            corners[ys, xs] = True
    np.testing.assert_array_equal(out[~corners], truth[~corners])
    np.testing.assert_array_equal(out[corners], fattened[corners])


@pytest.mark.parametrize("seed", range(6))
def test_matches_the_per_edge_loop_and_only_lowers_labels(seed):
    rng = np.random.default_rng(seed)
    h, w = 17, 23
    # blocky labels and colours so that depth edges, colour edges and runs all occur
    labels = np.repeat(np.repeat(rng.integers(0, 8, (5, 6)), 4, axis=0), 4, axis=1)[:h, :w]
    labels = labels + rng.integers(0, 2, (h, w)) * (rng.random((h, w)) < 0.2)
    image = np.repeat(np.repeat(rng.integers(0, 6, (6, 8, 3)) * 40.0, 3, axis=0), 3,
                      axis=1)[:h, :w] + rng.integers(0, 8, (h, w, 3))
    for settings in (ForegroundTrim(), ForegroundTrim(3, 30.0, 10.0, 255.0, 1, 0),
                     ForegroundTrim(5, 60.0, 25.0, 40.0, 0, 2),
                     ForegroundTrim(6, 60.0, 25.0, 40.0, 0, 0)):
        out = trim_foreground(labels, image, **settings._asdict())
        expected = reference(labels, image, *settings)
        np.testing.assert_array_equal(out, expected)
        assert out.dtype == np.int32 and np.all(out <= labels)
    assert np.any(trim_foreground(labels, image, reach=5, colour_tolerance=60.0,
                                  edge_contrast=25.0, flatness=40.0, jump=0,
                                  plateau=2) != labels)


def test_disparity_trims_by_default():
    scene = synthetic_scene(shape=(60, 120))
    common = dict(max_disparity=scene.max_disparity, channel_axis=-1, device="cpu")
    untrimmed = disparity(scene.left, scene.right, foreground_trim=None, **common)
    trimmed = disparity(scene.left, scene.right, **common)
    expected = trim_foreground(untrimmed.disparity, scene.left)
    assert np.any(expected != untrimmed.disparity)      # the scene has something to trim
    np.testing.assert_array_equal(trimmed.disparity, expected)
    np.testing.assert_array_equal(trimmed.expansion.labels, untrimmed.expansion.labels)
    other = disparity(scene.left, scene.right, foreground_trim=ForegroundTrim(reach=3),
                      **common)
    np.testing.assert_array_equal(other.disparity,
                                  trim_foreground(untrimmed.disparity, scene.left, reach=3))


@pytest.mark.parametrize("settings, message", [
    (ForegroundTrim(reach=0), "reach"), (ForegroundTrim(colour_tolerance=-1), "colour_tolerance"),
    (ForegroundTrim(edge_contrast=300), "edge_contrast"), (ForegroundTrim(jump=-1), "jump"),
    (ForegroundTrim(flatness=float("nan")), "flatness"), (ForegroundTrim(plateau=-1), "plateau"),
    ((7, 20.0), "ForegroundTrim")])
def test_bad_settings_are_refused(settings, message):
    with pytest.raises(ValueError, match=message):
        disparity(np.zeros((8, 8)), np.zeros((8, 8)), max_disparity=2, device="cpu",
                  foreground_trim=settings)


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="match"):
        trim_foreground(np.zeros((4, 5), dtype=int), np.zeros((4, 6)))
    with pytest.raises(TypeError, match="integers"):
        trim_foreground(np.zeros((4, 5)), np.zeros((4, 5)))
