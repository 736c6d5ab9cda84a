"""The local split's filters made cheap (graphcut/models/_local_split.py; the nineteenth
session): the local mean filtered on the grey shrunk 4 x 4 and read back bilinearly, the peak
and the mean by OpenCV where installed, all in float32. Checked against the full filters in
float64 (SciPy's, an independent oracle: the eighteenth session's formula): the local mean
within 0.5 % of the grey's range, the threshold map within 0.5 %, the split differing on at
most 0.1 % of the pixels, on images and volumes; OpenCV's path against SciPy's (the GPU's, through cupyx) to float32
rounding, its bilinear read-back against the formula by hand; the CuPy stand-in splitting as
NumPy's SciPy path does, pixel for pixel."""

import numpy as np
import pytest
from scipy import ndimage
from skimage.filters import threshold_otsu

from graphcut.models import _local_split
from graphcut.models._features import pixel_features
from graphcut.models._local_split import (BLOCK, PEAK_RADIUS, PEAK_SHARE, local_bright_side,
                                          local_mean, local_threshold, nearby_peak,
                                          shrink_factor)

from test_learned_fake_cupy import cupy  # noqa: F401 - the stand-in CuPy fixture


def _exact_threshold(grey, block=BLOCK, radius=PEAK_RADIUS, share=PEAK_SHARE):
    """The eighteenth session's threshold in float64 with SciPy's full filters."""
    grey = grey.astype(np.float64)
    otsu, median = float(threshold_otsu(grey.reshape(-1))), float(np.median(grey))
    local = ndimage.gaussian_filter(grey, (block - 1) / 6.0, mode="nearest")
    peak = ndimage.maximum_filter(ndimage.gaussian_filter(grey, 2.0, mode="reflect"),
                                  size=2 * radius + 1, mode="nearest")
    floor = np.maximum(local, 0.5 * (otsu + median))
    return np.minimum(otsu, np.maximum(floor, median + share * (peak - median)))


def _micrograph(rows=203, cols=261, seed=0, dark=False):
    """Nuclei of several brightnesses and sizes (one cut by the border) on a background lit
    unevenly, with noise: grey float32 (rows, cols) in about 0..1 (turned over: ``dark``)."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:rows, :cols]
    grey = 0.05 + 0.25 * (xx / cols) * (yy / rows)
    for _ in range(40):
        r, c = rng.integers(-5, rows + 5), rng.integers(-5, cols + 5)
        radius, level = rng.uniform(3, 12), rng.uniform(0.25, 1.0)
        grey = np.where((yy - r) ** 2 + (xx - c) ** 2 <= radius ** 2, level, grey)
    grey = ndimage.gaussian_filter(grey, 1.0) + rng.normal(0, 0.02, grey.shape)
    return (1.0 - grey if dark else grey).astype(np.float32)


@pytest.fixture
def no_opencv(monkeypatch):
    """SciPy's filters on the host, as CuPy's path runs them."""
    monkeypatch.setattr(_local_split, "_opencv", lambda xp, grey: None)


def test_the_shrunk_local_mean_is_near_the_full_filter():
    assert shrink_factor(BLOCK) == 4
    for seed in range(3):
        grey = _micrograph(seed=seed)
        full = ndimage.gaussian_filter(grey.astype(np.float64), (BLOCK - 1) / 6.0,
                                       mode="nearest")
        error = np.abs(local_mean(grey, BLOCK) - full) / np.ptp(grey)
        # the border counts: the grey's edge pixels are repeated as SciPy's "nearest" does
        assert error.max() < 0.005 and error.mean() < 0.001


@pytest.mark.parametrize("dark", [False, True])
def test_the_fast_split_is_the_exact_split_within_tolerance(dark):
    for seed in range(3):
        grey = _micrograph(seed=seed, dark=dark)
        threshold, otsu = local_threshold(grey)
        assert threshold.dtype == np.float32 and (threshold <= np.float32(otsu)).all()
        assert np.abs(threshold - _exact_threshold(grey)).max() < 0.005 * np.ptp(grey)
        features = pixel_features(grey[..., None], scales=(1.0,))
        side = local_bright_side(features, 1)
        smooth = features[..., 1].astype(np.float64)
        bright = threshold_otsu(smooth) < smooth
        exact = (smooth > _exact_threshold(smooth) if bright.mean() <= 0.5
                 else ~(-smooth > _exact_threshold(-smooth)))
        assert (side != exact).mean() < 1e-3


def test_a_volume_is_split_as_the_exact_filters_split_it():
    """Volumes (the features' grey is 3-D): SciPy's n-D filters, the mean shrunk per axis."""
    rng = np.random.default_rng(6)
    volume = np.stack([_micrograph(60, 70, seed=s) for s in range(3)] * 4)  # (12, 60, 70)
    volume += rng.normal(0, 0.01, volume.shape).astype(np.float32)
    full = ndimage.gaussian_filter(volume.astype(np.float64), (BLOCK - 1) / 6.0,
                                   mode="nearest")
    assert np.abs(local_mean(volume, BLOCK) - full).max() < 0.005 * np.ptp(volume)
    threshold, _ = local_threshold(volume)
    assert threshold.shape == volume.shape
    assert np.abs(threshold - _exact_threshold(volume)).max() < 0.005 * np.ptp(volume)


def test_the_shrunk_grey_equals_the_padded_grey_averaged(no_opencv):
    """One axis at a time (no padded copy of a volume) = the whole grey padded, then averaged."""
    volume = np.random.default_rng(7).random((7, 13, 10)).astype(np.float32)
    padded = np.pad(volume, ((8, 9), (8, 11), (8, 10)), mode="edge")       # to whole blocks
    expected = padded.reshape(6, 4, 8, 4, 7, 4).mean(axis=(1, 3, 5))
    np.testing.assert_allclose(_local_split._shrunk(volume, 4, 8, np), expected, atol=1e-6)


def test_opencv_and_scipy_filters_agree(monkeypatch):
    pytest.importorskip("cv2")
    grey = _micrograph(seed=4)
    fast = [local_mean(grey, BLOCK), local_mean(grey, 21), nearby_peak(grey, PEAK_RADIUS)]
    monkeypatch.setattr(_local_split, "_opencv", lambda xp, grey: None)
    slow = [local_mean(grey, BLOCK), local_mean(grey, 21), nearby_peak(grey, PEAK_RADIUS)]
    for a, b in zip(fast, slow):
        assert a.shape == grey.shape
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-5 * np.ptp(grey))


def test_the_bilinear_read_back_by_hand(no_opencv):
    small = np.random.default_rng(1).random((5, 7)).astype(np.float32)
    out = _local_split._upsample(small, 4, (19, 26), np, None)
    for i in range(19):
        for j in range(26):
            y = min(max((i + 0.5) / 4 - 0.5, 0), 4)
            x = min(max((j + 0.5) / 4 - 0.5, 0), 6)
            y0, x0 = int(np.floor(y)), int(np.floor(x))
            y1, x1 = min(y0 + 1, 4), min(x0 + 1, 6)
            fy, fx = y - y0, x - x0
            expected = ((1 - fy) * ((1 - fx) * small[y0, x0] + fx * small[y0, x1])
                        + fy * ((1 - fx) * small[y1, x0] + fx * small[y1, x1]))
            assert out[i, j] == pytest.approx(expected, abs=1e-6)
    np.testing.assert_allclose(_local_split._upsample(small, 4, (12, 20), np, None, offset=3),
                               out[3:15, 3:23], rtol=0, atol=1e-6)   # only the inside made
    cv2 = pytest.importorskip("cv2")
    np.testing.assert_allclose(_local_split._upsample(small, 4, (19, 26), np, cv2), out,
                               rtol=0, atol=1e-5)
    np.testing.assert_allclose(_local_split._upsample(small, 4, (12, 20), np, cv2, offset=3),
                               out[3:15, 3:23], rtol=0, atol=1e-5)


def test_gpu_stand_in_splits_like_the_scipy_path(cupy, no_opencv):  # noqa: F811
    for dark in (False, True):
        grey = _micrograph(seed=2, dark=dark)[..., None]
        on_device = local_bright_side(pixel_features(cupy.asarray(grey)), 1)
        assert type(on_device).__module__.split(".")[0] == "cupy"
        np.testing.assert_array_equal(np.asarray(on_device),
                                      local_bright_side(pixel_features(grey), 1))
